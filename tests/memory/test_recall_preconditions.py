"""Query rules that fire only where they apply, and the fusion that keeps what they move.

Each rule of ``memory/query.py`` reads a cue from the query (a name, a time, a question,
a turn of dialogue); these tests show each one silent where its cue does not hold (the
asker's own name, a query not about time, a long text, turns that do not alternate), and
the fusion of ``memory/rank_fusion.py`` keeping what dense and BM25 alone agree on.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

import pytest

from mindspace import Assistant, ManualClock, Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.memory.query import QueryRerank, one_passage_each
from mindspace.memory.rank_fusion import current_first, fuse_rankings
from mindspace.memory.records import Memory
from mindspace.memory.semantic import MemoryDraft, SemanticMemory
from mindspace.offline import OfflineLLM
from mindspace.state.semantic import Hit
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on

STAMP = "2023-05-08T18:00:00Z"


def _said(key: str, who: str, text: str, *, context: str | None = None, day: int = 8) -> Memory:
    stamp = f"2023-05-{day:02d}T18:00:00Z"
    return Memory(
        id=key,
        content=text,
        source_entity=who,
        source="message",
        context=context,
        created_at=stamp,
        occurred_at=stamp,
    )


def _order(
    rerank: QueryRerank, query: str, memories: Sequence[Memory], top: float = 0.6, **extra: str
) -> list[str]:
    """Keys best first after ``rerank``; the hits score ``top``, then 0.58 down by 0.02."""
    by_key = {m.id: m for m in memories}
    hits = [
        Hit(m.id, top if n == 0 else round(0.6 - 0.02 * n, 6), None, 1.0)
        for n, m in enumerate(memories)
    ]
    ranked = rerank.apply(
        query,
        hits,
        lambda keys: {k: by_key[k] for k in keys if k in by_key},
        lambda m: None,
        **extra,  # type: ignore[arg-type]
    )
    return [h.key for h in ranked]


ONLY_SPEAKER = QueryRerank(
    time_boost=0,
    question_penalty=0,
    reply_discount=-1,
    continuation_discount=-1,
    session_boost=0,
    superseded_penalty=0,
)


def test_the_askers_own_name_raises_nothing_another_participants_does() -> None:
    garden = [
        _said("mem_1", "Assistant", "Tomatoes want six hours of sun a day."),
        _said("mem_2", "User", "I planted tomatoes in the garden."),
    ]
    asked = "How much sun do the user's tomatoes need?"
    # Asked by an onlooker, the named user's lines are raised over the assistant's answer.
    assert _order(ONLY_SPEAKER, asked, garden) == ["mem_2", "mem_1"]
    # Asked by the user, "the user" is the asker: the answer keeps its place.
    assert _order(ONLY_SPEAKER, asked, garden, asker="User") == ["mem_1", "mem_2"]
    # The user asking about what the assistant said: the other participant is raised.
    reversed_garden = list(reversed(garden))
    said = "What did the assistant say about tomatoes?"
    assert _order(ONLY_SPEAKER, said, reversed_garden, asker="user") == ["mem_1", "mem_2"]


def test_the_day_of_the_best_hits_counts_only_for_a_question_about_time() -> None:
    # Three strong hits from the 8th; two equal weaker ones, from the 20th and the 8th.
    lines = [_said(f"mem_{i}", "Nate", f"line {i}") for i in (1, 2, 3)]
    lines += [_said("mem_4", "Nate", "line 4", day=20), _said("mem_5", "Nate", "line 5")]
    only_day = QueryRerank(session_boost=0.1, speaker_boost=0, continuation_discount=-1)
    assert _order(only_day, "When did Nate win?", lines)[3:] == ["mem_5", "mem_4"]
    assert _order(only_day, "What did Nate win?", lines)[3:] == ["mem_4", "mem_5"]


def _dialogue(middle_speaker: str, first: str = "We went camping at the lake") -> list[Memory]:
    """Melanie, someone, Melanie: three turns of one exchange, each quoting the last."""
    turns = [
        ("Melanie", first),
        (middle_speaker, "Oh nice, tell me more"),
        ("Melanie", "The kids roasted marshmallows by the fire"),
    ]
    out = []
    for at, (who, text) in enumerate(turns):
        before = f"{turns[at - 1][0]}: {turns[at - 1][1]}" if at else None
        out.append(_said(f"mem_{at + 10}", who, text, context=before))
    return out


ONLY_CONTINUATION = QueryRerank(
    time_boost=0, question_penalty=0, reply_discount=-1, speaker_boost=0, session_boost=0
)
FILLER = [_said(f"mem_{i}", "Nate", f"unrelated line {i}") for i in range(1, 8)]


def test_a_story_continues_only_across_an_alternating_dialogue() -> None:
    told = _dialogue("Caroline")
    # The matching turn far ahead, the filler after it, Melanie's next turn last.
    ranked = _order(ONLY_CONTINUATION, "camping", [told[0], *FILLER, told[1], told[2]], 0.97)
    assert ranked[:2] == ["mem_10", "mem_12"]
    # The line between is Melanie's own: her turns do not alternate with anyone's.
    alone = _dialogue("Melanie")
    ranked = _order(ONLY_CONTINUATION, "camping", [alone[0], *FILLER, alone[1], alone[2]], 0.97)
    assert ranked[-1] == "mem_12"


def test_a_long_text_neither_leads_to_nor_is_reached_by_a_next_turn() -> None:
    explanation = "Camping at a lake means checking the weather first. " * 12
    told = _dialogue("Caroline", first=explanation)
    ranked = _order(ONLY_CONTINUATION, "camping", [told[0], *FILLER, told[1], told[2]], 0.97)
    assert ranked[-1] == "mem_12"


def _hits(keys: str) -> list[Hit]:
    return [Hit(f"mem_{k}", 0.9 - 0.01 * n, None, 1.0) for n, k in enumerate(keys)]


def test_fusion_keeps_what_both_components_rank_first_among_the_best() -> None:
    # The rules pushed mem_9 to the bottom; dense and BM25 alone both rank it first.
    blended = _hits("12345678" + "9")
    dense, lexical = _hits("91"), _hits("92")
    fused = [h.key for h in fuse_rankings(blended, dense, lexical, 0.5, 0.5)]
    assert fused.index("mem_9") < 3
    assert fused.index("mem_1") < 3  # the rules' first, which dense agrees with, stays up
    # Scores follow the fused order; both weights 0 leave the rules' ranking as it was.
    scores = [h.score for h in fuse_rankings(blended, dense, lexical, 0.5, 0.5)]
    assert scores == sorted(scores, reverse=True)
    assert [h.key for h in fuse_rankings(blended, dense, lexical, 0.0, 0.0)] == [
        h.key for h in blended
    ]


@pytest.fixture
def backend_store(backend_url: str) -> Iterator[SqlStore]:
    store = SqlStore(backend_url)
    yield store
    store.close()


def _open(store: SqlStore, clock: ManualClock, key: str, **settings: float) -> Assistant:
    return assistant_on(
        store,
        key,
        llm=OfflineLLM(announce=False),
        clock=clock,
        settings=Settings(**settings),  # type: ignore[arg-type]
        embedder=HashingEmbedder(256),
    )


NOTES = [
    ("Melanie", "Melanie painted a lake at sunrise last week"),
    ("Melanie", "Melanie bought new brushes for her painting"),
    ("Melanie", "Melanie likes painting with her kids"),
    ("Caroline", "The pottery class meets on Thursdays at the studio"),
]


async def test_a_rule_misled_by_a_name_cannot_push_out_the_match_of_both_components(
    backend_store: SqlStore, clock: ManualClock
) -> None:
    asked = "Melanie, when does the pottery class at the studio meet?"
    # A rule five times as sure of the wrong speaker as the default (3.0 against 0.6),
    # against fusion at 0.25 each; and the defaults (fusion 0.1 each, the boost at 0.6).
    cases: tuple[tuple[str, dict[str, float]], ...] = (
        (
            "fused",
            {
                "memory_recall_speaker_boost": 3.0,
                "memory_recall_dense_rank_weight": 0.25,
                "memory_recall_lexical_rank_weight": 0.25,
            },
        ),
        ("defaults", {}),
        (
            "unfused",
            {
                "memory_recall_speaker_boost": 3.0,
                "memory_recall_dense_rank_weight": 0.0,
                "memory_recall_lexical_rank_weight": 0.0,
            },
        ),
    )
    for key, weights in cases:
        assistant = _open(backend_store, clock, key, **weights)
        with assistant._core.transaction() as unit:
            SemanticMemory(
                unit, clock, assistant.settings, assistant.embedder, assistant._core.memory_index
            ).store_many([MemoryDraft(content=t, source_entity=w) for w, t in NOTES])
        result = await assistant.call_tool("recall_memories", {"query": asked, "limit": 3})
        top = [m["content"] for m in result["memories"]]
        if key != "unfused":
            # Dense and BM25 alone both rank the class first: it stays on the page.
            assert NOTES[3][1] in top
        else:
            # The rule alone fills the page with the named speaker's lines.
            assert NOTES[3][1] not in top


def test_a_long_text_shows_once_by_the_passage_that_has_the_querys_words() -> None:
    def passage(i: int, text: str, ref: str = "event:e1") -> Memory:
        memory = _said(f"p{i}", "Dana", text)
        return memory.model_copy(update={"ref": ref, "tags": [f"part:{i}/3"]})

    ranked = [
        passage(3, "The granary ledger line 121 records cargo"),  # best by a weak embedder
        _said("other", "Dana", "Dana likes the harbour"),
        passage(2, "The granary ledger line 75 records cargo granary75x"),
        passage(1, "The granary ledger line 0 records cargo", ref="event:e2"),
    ]
    # Without word evidence the best-ranked passage of each message stands for it.
    assert one_passage_each(ranked) == [0, 1, 3]
    # The passage that holds the query's word stands for its message, at its best place.
    assert one_passage_each(ranked, [0.0, 0.0, 2.8, 0.0]) == [2, 1, 3]


def test_the_current_fact_comes_back_above_the_one_it_replaced_on_the_page() -> None:
    # Fusion ranked the old facts 1 and 4 first; 1 was replaced by 5, 5 by 9, 4 by 7.
    fused = _hits("1234567890")
    newer = {"mem_1": "mem_5", "mem_5": "mem_9", "mem_4": "mem_7"}
    ranked = [h.key for h in current_first(fused, newer.get)]
    assert ranked[:6] == ["mem_9", "mem_5", "mem_1", "mem_2", "mem_3", "mem_7"]
    # The places asked for come out the same when only the hits reaching them are asked
    # about (the recall reads the page's records only).
    asked: list[str] = []

    def lookup(key: str) -> str | None:
        asked.append(key)
        return newer.get(key)

    assert [h.key for h in current_first(fused, lookup, within=3)][:3] == ranked[:3]
    assert set(asked) <= {"mem_1", "mem_2", "mem_3", "mem_5", "mem_9"}


def test_a_page_of_current_first_is_the_same_as_of_the_whole_ranking() -> None:
    rng = random.Random(11)
    for _ in range(300):
        size = rng.randint(1, 30)
        fused = [Hit(f"m{n}", 1.0 - n / 100, None, 1.0) for n in range(size)]
        newer = {f"m{n}": f"m{rng.randrange(size)}" for n in range(size) if rng.random() < 0.3}
        whole = current_first(fused, newer.get)
        within = rng.randint(0, size)
        assert current_first(fused, newer.get, within)[:within] == whole[:within]
