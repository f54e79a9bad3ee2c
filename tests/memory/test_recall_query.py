"""Query-side recall: dates named in a question, questions, and the replies they lead to.

Each behaviour is checked through ``recall_memories`` on both backends (the embedded
index on SQLite and pgvector on PostgreSQL), and shown to come from its setting by
switching that setting off.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest

from mindspace import Assistant, ManualClock, Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.memory.query import QueryRerank
from mindspace.memory.records import Memory
from mindspace.memory.semantic import MemoryDraft, SemanticMemory
from mindspace.memory.temporal import named_windows
from mindspace.offline import OfflineLLM
from mindspace.state.semantic import Hit
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on


@pytest.fixture
def backend_store(backend_url: str) -> Iterator[SqlStore]:
    store = SqlStore(backend_url)
    yield store
    store.close()


# Each rule is shown alone: the fusion with dense and BM25 alone, which tempers every
# rule on purpose, is off here and tested on its own (test_recall_preconditions.py).
UNFUSED = {"memory_recall_dense_rank_weight": 0.0, "memory_recall_lexical_rank_weight": 0.0}


def _open(store: SqlStore, clock: ManualClock, key: str, **settings: float) -> Assistant:
    return assistant_on(
        store,
        key,
        llm=OfflineLLM(announce=False),
        clock=clock,
        settings=Settings(**{**UNFUSED, **settings}),  # type: ignore[arg-type]
        embedder=HashingEmbedder(256),
    )


def _store(assistant: Assistant, drafts: Sequence[MemoryDraft]) -> None:
    with assistant._core.transaction() as unit:
        SemanticMemory(
            unit,
            assistant.clock,
            assistant.settings,
            assistant.embedder,
            assistant._core.memory_index,
        ).store_many(drafts)


async def _found(assistant: Assistant, query: str, **extra: object) -> list[dict[str, Any]]:
    result = await assistant.call_tool("recall_memories", {"query": query, "limit": 5, **extra})
    assert result["success"] is True, result
    memories: list[dict[str, Any]] = result["memories"]
    return memories


async def _recall(assistant: Assistant, query: str, **extra: object) -> list[str]:
    return [m["content"] for m in await _found(assistant, query, **extra)]


GIFTS = [
    MemoryDraft(
        content="Nate got Joanna tickets to a concert",
        source_entity="Nate",
        occurred_at="2022-03-02T18:00:00Z",
    ),
    MemoryDraft(
        content="Looky here Joanna, I brought home a stuffed toy dog for you!",
        source_entity="Nate",
        occurred_at="2022-05-26T18:00:00Z",
    ),
    MemoryDraft(
        content="Nate cooked dinner for his gaming friends",
        source_entity="Nate",
        occurred_at="2022-08-10T18:00:00Z",
    ),
]
ON_THE_DAY = "Looky here Joanna, I brought home a stuffed toy dog for you!"
CHATTER = [
    MemoryDraft(
        content=text,
        source_entity=speaker,
        occurred_at=f"2022-{month:02d}-15T18:00:00Z",
    )
    for month in range(1, 13)
    for speaker, text in (
        ("Joanna", f"My screenplay draft number {month} is finally done"),
        ("Nate", f"The turtles ate lettuce {month} times this week"),
    )
]


async def test_a_question_naming_a_date_ranks_the_memory_told_then_first(
    backend_store: SqlStore, clock: ManualClock
) -> None:
    dated = _open(backend_store, clock, "dated")
    _store(dated, [*GIFTS, *CHATTER])
    # Told the day after the date the question names ("last night"): still in its window.
    found = await _recall(dated, "What did Nate get for Joanna on 25 May, 2022?")
    assert found[0] == ON_THE_DAY
    yearless = await _recall(dated, "What did Nate get for Joanna in May?")
    assert yearless[0] == ON_THE_DAY
    # Without the date the words decide: both name Nate and Joanna, the shorter wins.
    undated = await _recall(dated, "What did Nate get for Joanna?")
    assert undated[0] == GIFTS[0].content
    blind = _open(backend_store, clock, "blind", memory_recall_time_boost=0.0)
    _store(blind, [*GIFTS, *CHATTER])
    unboosted = await _recall(blind, "What did Nate get for Joanna on 25 May, 2022?")
    assert unboosted[0] == GIFTS[0].content


QUESTION = "What gave you the idea for all the colors and patterns on the bowl?"
REPLY = "I'm obsessed with those, so I made something to catch the eye and make people smile."


def _exchange() -> list[MemoryDraft]:
    """A question from Caroline and Melanie's reply, as consolidation stores journal turns."""
    return [
        MemoryDraft(
            content="Melanie finished painting a landscape of the lake at sunset",
            source_entity="Melanie",
            source="journal",
            verbatim=True,  # a journal turn, word for word: kept even when it asks
            entry_id=7,
            source_trust=0.9,
            tags=("art",),
        ),
        MemoryDraft(
            content=QUESTION,
            source_entity="Caroline",
            source="journal",
            verbatim=True,  # a journal turn, word for word: kept even when it asks
            entry_id=10,
            context=f"Melanie: Here is the bowl I made!\nMelanie: {REPLY}",
            source_trust=0.9,
            tags=("art",),
        ),
        MemoryDraft(
            content=REPLY,
            source_entity="Melanie",
            source="journal",
            verbatim=True,  # a journal turn, word for word: kept even when it asks
            entry_id=11,
            context=f"Caroline: {QUESTION}",
            source_trust=0.6,
            tags=("art", "reply"),
        ),
    ]


async def test_the_reply_to_a_matching_question_ranks_above_the_question(
    backend_store: SqlStore, clock: ManualClock
) -> None:
    following = _open(backend_store, clock, "following")
    _store(following, _exchange())
    asked = "Why did Melanie choose colors and patterns for her bowl?"
    found = await _recall(following, asked)
    # The reply shares almost no word with the question asked; it comes in through the
    # question it answers, and the question itself (which answers nothing) goes below it.
    assert found[:2] == [REPLY, QUESTION]
    # Filters still hold for a reply brought in this way.
    trusted = await _recall(following, asked, min_source_trust=0.7)
    assert QUESTION in trusted
    assert REPLY not in trusted
    plain = _open(
        backend_store,
        clock,
        "plain",
        memory_recall_reply_discount=-1.0,
        memory_recall_question_penalty=0.0,
    )
    _store(plain, _exchange())
    assert (await _recall(plain, asked))[0] == QUESTION


LONG_ANSWER = " ".join(
    ["Here is a long answer about ceramics, kilns and glazing schedules."]
    + [f"Step {n}: let the piece dry slowly on a shelf before it is fired." for n in range(12)]
)


async def test_a_long_answer_is_not_raised_for_following_a_matching_question(
    backend_store: SqlStore, clock: ManualClock
) -> None:
    # The same exchange, but the line after the question is a long explanation (an
    # assistant's answer, over a hundred words): it has words of its own to be found
    # by, so it is not brought in above the question it follows.
    exchange = _exchange()
    exchange[2] = MemoryDraft(
        content=LONG_ANSWER,
        source_entity="Melanie",
        source="journal",
        verbatim=True,
        entry_id=11,
        context=f"Caroline: {QUESTION}",
        tags=("art", "reply"),
    )
    assistant = _open(backend_store, clock, "long")
    _store(assistant, exchange)
    found = await _recall(assistant, "Why did Melanie choose colors and patterns for her bowl?")
    assert found.index(QUESTION) < found.index(LONG_ANSWER)


def test_named_windows_read_calendar_dates_only() -> None:
    day = datetime(2023, 5, 3, tzinfo=UTC)
    [window] = named_windows("Who did Maria have dinner with on May 3, 2023?")
    assert window.contains(day)
    assert window.contains(datetime(2023, 5, 10, tzinfo=UTC))  # told a week later
    assert not window.contains(datetime(2023, 4, 30, tzinfo=UTC))
    assert not window.contains(datetime(2023, 6, 30, tzinfo=UTC))
    [month] = named_windows("What setback did Melanie face in October 2023?")
    assert month.contains(datetime(2023, 10, 20, tzinfo=UTC))
    assert not month.contains(datetime(2022, 10, 20, tzinfo=UTC))
    [any_year] = named_windows("Which outdoor spot did Joanna visit in May?")
    assert any_year.yearless
    assert any_year.contains(datetime(2021, 5, 9, tzinfo=UTC))
    assert any_year.contains(datetime(2024, 6, 2, tzinfo=UTC))  # told soon after
    assert not any_year.contains(datetime(2024, 8, 2, tzinfo=UTC))
    assert named_windows("May I ask what she painted last week?") == []
    # An impossible day falls back to the month it names.
    [february] = named_windows("What happened on 31 February, 2023?")
    assert february.contains(datetime(2023, 2, 10, tzinfo=UTC))
    assert not february.contains(datetime(2023, 4, 1, tzinfo=UTC))


def _follow_up() -> list[MemoryDraft]:
    """Nate's news and Joanna's follow-up question about it, as two journal turns."""
    news = "Meet Shelly, my new little buddy!"
    asked = "Is Shelly a turtle? What kind of turtle is she?"
    return [
        MemoryDraft(
            content=news,
            source_entity="Nate",
            source="journal",
            verbatim=True,  # a journal turn, word for word: kept even when it asks
            entry_id=20,
            context=f"Joanna: {asked}",
        ),
        MemoryDraft(
            content=asked,
            source_entity="Joanna",
            source="journal",
            verbatim=True,  # a journal turn, word for word: kept even when it asks
            entry_id=21,
            context=f"Nate: {news}",
        ),
    ]


async def test_the_line_a_matching_question_follows_up_on_ranks_above_it(
    backend_store: SqlStore, clock: ManualClock
) -> None:
    following = _open(backend_store, clock, "following")
    _store(following, [*CHATTER, *_follow_up()])
    found = await _recall(following, "What kind of turtle does Nate have?")
    news, asked = (d.content for d in _follow_up())
    assert found[:2] == [news, asked]
    # Not following the question, its own words put it first.
    plain = _open(backend_store, clock, "plain", memory_recall_reply_discount=-1.0)
    _store(plain, [*CHATTER, *_follow_up()])
    assert (await _recall(plain, "What kind of turtle does Nate have?"))[0] == asked


WINS = [
    MemoryDraft(content="One day I will take a tournament trophy home", source_entity="Nate"),
    MemoryDraft(content="Took the tournament trophy last week, so stoked!", source_entity="Nate"),
]


async def test_a_question_asking_when_raises_the_memory_that_says_when(
    backend_store: SqlStore, clock: ManualClock
) -> None:
    dated = _open(backend_store, clock, "dated")
    _store(dated, [*CHATTER, *WINS])
    found = await _recall(dated, "When did Nate take the tournament trophy?")
    assert found[0] == WINS[1].content
    # Asked whether, not when, the closer wording wins.
    assert (await _recall(dated, "Did Nate take the tournament trophy?"))[0] == WINS[0].content


async def _recall_said(assistant: Assistant, query: str) -> list[tuple[str, str]]:
    """Who said each memory ``recall_memories`` finds, and what, best first."""
    return [(m["metadata"]["source_entity"], m["content"]) for m in await _found(assistant, query)]


SUNSETS = "Painting sunsets by the lake helps me unwind"
ASKED = "Melanie: What do you do to unwind?"
HOBBIES = [
    # Caroline answers Melanie's question: the exchange (her context) names Melanie too.
    MemoryDraft(content=SUNSETS, source_entity="Caroline", context=ASKED),
    MemoryDraft(content=SUNSETS, source_entity="Melanie"),
    MemoryDraft(content="Long runs help me unwind", source_entity="Caroline", context=ASKED),
    MemoryDraft(content="Pottery class on Sundays, that is how I unwind", source_entity="Melanie"),
]


async def test_a_query_naming_one_speaker_ranks_their_memories_first(
    backend_store: SqlStore, clock: ManualClock
) -> None:
    named = _open(backend_store, clock, "named")
    _store(named, [*CHATTER, *HOBBIES])
    # Both paint sunsets to unwind; asked about Melanie, her two lines come first.
    found = await _recall_said(named, "What does Melanie do to unwind?")
    assert {who for who, _ in found[:2]} == {"Melanie"}
    assert {what for _, what in found[:2]} == {SUNSETS, HOBBIES[3].content}
    # Naming both speakers, nobody is raised; switched off, neither.
    both = await _recall_said(named, "What do Melanie and Caroline do to unwind?")
    assert {who for who, _ in both[:3]} == {"Melanie", "Caroline"}
    blind = _open(backend_store, clock, "blind", memory_recall_speaker_boost=0.0)
    _store(blind, [*CHATTER, *HOBBIES])
    unboosted = await _recall_said(blind, "What does Melanie do to unwind?")
    assert unboosted[0][0] == "Caroline"


STORY = [
    ("Melanie", "We went camping at the lake last weekend with the kids"),
    ("Caroline", "Oh nice, that sounds lovely, tell me more"),
    ("Melanie", "They roasted marshmallows and told ghost stories by the fire"),
]
MARSHMALLOWS = STORY[2][1]
ASIDES = [
    MemoryDraft(content=text, source_entity="Melanie")
    for text in (
        "I bought a new camping stove",
        "The lake froze over in January",
        "My old camping chair broke",
        "Lake swimming is too cold for me",
        "We might sell the camping van",
    )
]


def _story(first_entry: int = 40, trust: float = 0.8) -> list[MemoryDraft]:
    """Melanie tells a story over two turns with Caroline's line between them."""
    turns = [f"{who}: {text}" for who, text in STORY]
    return [
        MemoryDraft(
            content=text,
            source_entity=who,
            source="journal",
            verbatim=True,  # a journal turn, word for word: kept even when it asks
            entry_id=first_entry + at,
            context="\n".join(turns[max(at - 1, 0) : at] + turns[at + 1 : at + 2]),
            source_trust=trust if at == 2 else 0.8,
        )
        for at, (who, text) in enumerate(STORY)
    ]


async def test_the_speakers_next_turn_in_the_exchange_is_recalled_with_the_match(
    backend_store: SqlStore, clock: ManualClock
) -> None:
    asked = "What did Melanie do camping at the lake?"
    telling = _open(backend_store, clock, "telling")
    _store(telling, [*CHATTER, *ASIDES, *_story()])
    # The answer shares no word with the question but Melanie's name; it is her next
    # turn after the line that matches, so it comes with it (below it), among asides
    # that share a word more.
    found = await _recall(telling, asked)
    assert found[0] == STORY[0][1]
    assert MARSHMALLOWS in found[1:]
    # A turn the search's filters leave out is not brought in.
    doubted = _open(backend_store, clock, "doubted")
    _store(doubted, [*CHATTER, *ASIDES, *_story(trust=0.3)])
    assert MARSHMALLOWS not in await _recall(doubted, asked, min_source_trust=0.5)
    plain = _open(backend_store, clock, "plain", memory_recall_continuation_discount=-1.0)
    _store(plain, [*CHATTER, *ASIDES, *_story()])
    assert MARSHMALLOWS not in await _recall(plain, asked)


def test_the_best_hits_day_raises_the_other_memories_told_that_day() -> None:
    def told(key: str, day: int) -> Memory:
        stamp = f"2023-05-{day:02d}T18:00:00Z"
        return Memory(id=key, content=f"line {key}", created_at=stamp, occurred_at=stamp)

    # Three strong hits from the 8th; two equal weaker ones, from the 8th and the 20th.
    memories = {m.id: m for m in [*(told(f"mem_{i}", 8) for i in (1, 2, 3)), told("mem_4", 20)]}
    memories["mem_5"] = told("mem_5", 8)
    hits = [Hit(k, s, None, 1.0) for k, s in [("mem_1", 0.9), ("mem_2", 0.88), ("mem_3", 0.86)]]
    hits += [Hit("mem_4", 0.5, None, 1.0), Hit("mem_5", 0.5, None, 1.0)]

    def order(boost: float) -> list[str]:
        rerank = QueryRerank(session_boost=boost, speaker_boost=0, continuation_discount=-1)
        # A question about time: the day of the best hits is what it asks about.
        ranked = rerank.apply("When did it happen?", hits, lambda keys: memories, lambda m: None)
        return [h.key for h in ranked]

    assert order(0.1)[3:] == ["mem_5", "mem_4"]
    assert order(0.0)[3:] == ["mem_4", "mem_5"]
