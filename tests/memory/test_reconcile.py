"""Every memory write is reconciled: restatements merge, newer facts replace, questions stay out.

On both backends (a SQLite file and a real PostgreSQL), through the ``store_memory`` and
``recall_memories`` tools with the offline MiniLM embedder the thresholds were set on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update

import mindspace.storage.migrations as migrations
from mindspace import Assistant
from mindspace.clock import ManualClock
from mindspace.config import Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.embeddings.minilm import MiniLMEmbedder
from mindspace.llm.port import Message
from mindspace.llm.scripted import FunctionLLM
from mindspace.memory.judgement import ModelJudge
from mindspace.memory.records import Memory
from mindspace.memory.semantic import MemoryDraft, SemanticMemory, Written
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.storage.tables import memories, schema_migrations
from mindspace.testing.assistants import assistant_on
from mindspace.text import normalized
from mindspace.transfer import export_assistant, import_assistant


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


@pytest.fixture
def backend_store(backend_url: str) -> Iterator[SqlStore]:
    store = SqlStore(backend_url)
    yield store
    store.close()


def _open(
    store: SqlStore, clock: ManualClock, embedder: Any, key: str = "keeper", **settings: Any
) -> Assistant:
    return assistant_on(
        store,
        key,
        llm=OfflineLLM(announce=False),
        clock=clock,
        settings=Settings(**settings),
        embedder=embedder,
    )


async def _store(assistant: Assistant, content: str, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = await assistant.call_tool("store_memory", {"content": content, **args})
    return result


async def _recall(assistant: Assistant, query: str, limit: int = 5) -> list[dict[str, Any]]:
    result = await assistant.call_tool("recall_memories", {"query": query, "limit": limit})
    assert result["success"] is True, result
    found: list[dict[str, Any]] = result["memories"]
    return found


async def _say(assistant: Assistant, who: str, text: str) -> Written:
    """What a person said, stored word for word as the formation path stores it."""
    with assistant._core.transaction() as unit:
        (written,) = await _semantic(assistant, unit, None).astore_all(
            [MemoryDraft(text, source_entity=who, source_type="direct", verbatim=True)]
        )
    return written


def _all(assistant: Assistant) -> list[Memory]:
    return assistant.views.memory_listing(limit=100).memories


async def test_the_same_fact_twice_is_one_memory_with_two_sources(
    backend_store: SqlStore, clock: ManualClock, minilm: MiniLMEmbedder
) -> None:
    keeper = _open(backend_store, clock, minilm)
    first = await _say(keeper, "Dave", "I am allergic to oak")
    assert first.action == "added"
    clock.advance(timedelta(days=3))
    again = await _say(keeper, "Dave", "I'm allergic to oak.")
    assert again.action == "restated"
    assert again.memory is not None
    assert first.memory is not None
    assert again.memory.id == first.memory.id
    # A fact written about what he said (the night's, the model's) is not a third copy.
    mined = await _store(keeper, "Dave is allergic to oak trees", source_entity="Dave")
    assert mined["success"] is True
    assert (mined["action"], mined["restated"]) == ("restated", first.memory.id)

    reopened = _open(backend_store, clock, minilm)  # read back from the database
    [memory] = _all(reopened)
    assert memory.content == "I am allergic to oak"
    assert memory.mentions == 3
    assert [s.at for s in memory.sources] == [
        "2025-12-06T10:00:00Z",
        "2025-12-09T10:00:00Z",
        "2025-12-09T10:00:00Z",
    ]
    assert memory.sources[2].text == "Dave is allergic to oak trees"  # its own words kept
    assert [s.verbatim for s in memory.sources] == [True, True, False]
    [found] = await _recall(reopened, "Is Dave allergic to anything?")
    assert found["metadata"]["mentions"] == 3
    assert len(found["metadata"]["sources"]) == 3
    assert found["metadata"]["valid_to"] is None


async def test_a_changed_fact_ranks_first_and_the_old_one_keeps_its_end(
    backend_store: SqlStore, clock: ManualClock, minilm: MiniLMEmbedder
) -> None:
    keeper = _open(backend_store, clock, minilm)
    await _store(keeper, "Dave likes red wine", source_entity="Dave")
    paris = await _say(keeper, "Dave", "I live in Paris")
    clock.advance(timedelta(weeks=6))
    berlin = await _say(keeper, "Dave", "I moved to Berlin")
    assert berlin.action == "updated"
    assert berlin.memory is not None
    assert paris.memory is not None
    assert berlin.related == (paris.memory.id,)

    reopened = _open(backend_store, clock, minilm)
    found = await _recall(reopened, "Where does Dave live?")
    contents = [m["content"] for m in found]
    # "I live in Paris" matches the question word for word; the current fact still leads.
    assert contents.index("I moved to Berlin") < contents.index("I live in Paris")
    assert contents[0] == "I moved to Berlin"
    old = next(m for m in found if m["content"] == "I live in Paris")
    assert old["metadata"]["valid_to"] == "2026-01-17T10:00:00Z"
    assert old["metadata"]["superseded_by"] == berlin.memory.id
    assert old["metadata"]["valid_from"] == "2025-12-06T10:00:00Z"
    # The past is still there to be asked about.
    before = await _recall(reopened, "Where did Dave live before Berlin?")
    assert "I live in Paris" in [m["content"] for m in before]
    # Other facts of the same person are untouched.
    wine = next(m for m in _all(reopened) if m.content == "Dave likes red wine")
    assert wine.current


async def test_the_current_fact_is_brought_in_when_only_the_old_one_matches(
    backend_store: SqlStore, clock: ManualClock, minilm: MiniLMEmbedder
) -> None:
    keeper = _open(backend_store, clock, minilm)
    for n in range(12):
        await _store(keeper, f"The caravan number {n} left for the coast", source_entity="Ned")
    await _say(keeper, "Ana", "My favourite colour is teal")
    clock.advance(timedelta(days=30))
    update = await _say(keeper, "Ana", "My favourite colour is green now")
    assert update.action == "updated"
    found = await _recall(keeper, "teal", limit=3)  # the new one shares no word with this
    assert [m["content"] for m in found[:2]] == [
        "My favourite colour is green now",
        "My favourite colour is teal",
    ]


async def test_questions_are_not_stored_as_facts(
    backend_store: SqlStore, clock: ManualClock, minilm: MiniLMEmbedder
) -> None:
    keeper = _open(backend_store, clock, minilm)
    for question in ("What does Dave like to drink?", "Does Dave know where the mill is"):
        refused = await _store(keeper, question, source_entity="Dave")
        assert refused["success"] is False
        assert "is a question, not a fact" in refused["error"]
        assert "recall_memories" in refused["suggestion"]
    stated = await _store(keeper, "Dave moved to Berlin. Has anyone been there?")
    assert stated["success"] is True  # a fact with a question after it is a fact
    # Dave's own question, kept word for word, is a record of what he said, not a fact.
    asked = await _say(keeper, "Dave", "What do I like to drink?")
    assert asked.action == "added"
    with keeper._core.transaction() as unit:  # the formation path's message drafts too
        (message,) = await _semantic(keeper, unit, None).astore_all(
            [MemoryDraft("Where is the mill?", source_entity="Dave", source="message")]
        )
    assert message.action == "added"
    mined = await _store(keeper, "What does Dave like to drink?", source_entity="Dave")
    assert mined["success"] is False
    assert sorted(m.content for m in _all(keeper)) == [
        "Dave moved to Berlin. Has anyone been there?",
        "What do I like to drink?",
        "Where is the mill?",
    ]


async def test_recall_shows_each_fact_once_even_from_an_old_store(
    backend_store: SqlStore, clock: ManualClock, minilm: MiniLMEmbedder
) -> None:
    # Written with reconciling off (as before it existed): the same news four times.
    old = _open(backend_store, clock, minilm, memory_reconcile=False)
    for said in ("The bridge to Eastport collapsed", "The bridge to Eastport collapsed."):
        for who in ("Ned", "Ana"):
            await _store(old, said, source_entity=who)
    await _store(old, "The ferry to Eastport runs twice a day", source_entity="Ned")
    await _store(old, "Ana crossed the bridge to Eastport last week", source_entity="Ana")
    assert len(_all(old)) == 6
    keeper = _open(backend_store, clock, minilm)
    found = await _recall(keeper, "What happened to the bridge to Eastport?")
    said = [normalized(m["content"]) for m in found]
    assert said.count("the bridge to eastport collapsed") == 1
    assert len(found) == 3


async def test_a_conversation_with_restatements_keeps_one_memory_per_fact(
    backend_store: SqlStore, clock: ManualClock, minilm: MiniLMEmbedder
) -> None:
    keeper = _open(backend_store, clock, minilm)
    said = [
        ("Dave", "I prefer red wine"),
        ("Dave", "I work at the mill by the river"),
        ("Ana", "I prefer red wine"),  # another person's taste: another fact
        ("Dave", "I prefer red wine."),
        ("Dave", "Dave prefers red wine"),
        ("Dave", "I work at the mill by the river!"),
    ]
    for who, text in said:
        clock.advance(timedelta(hours=1))
        await _say(keeper, who, text)
    stored = {(m.source_entity, m.content): m.mentions for m in _all(keeper)}
    assert stored == {
        ("Dave", "I prefer red wine"): 3,
        ("Dave", "I work at the mill by the river"): 2,
        ("Ana", "I prefer red wine"): 1,
    }
    found = await _recall(keeper, "What does Dave like to drink?")
    keys = [(m["metadata"]["source_entity"], normalized(m["content"])) for m in found]
    assert len(keys) == len(set(keys))


def _semantic(assistant: Assistant, unit: Any, judge: ModelJudge | None) -> SemanticMemory:
    core = assistant._core
    return SemanticMemory(unit, core.clock, core.settings, core.embedder, core.memory_index, judge)


async def test_a_model_whose_judgement_is_garbage_leaves_the_rules_decision(
    backend_store: SqlStore, clock: ManualClock, minilm: MiniLMEmbedder
) -> None:
    replies = iter(["I think they are the same!", '```json\n{"verdict": 1}\n```'] * 4)
    garbage = FunctionLLM(lambda messages, tools: next(replies))
    keeper = _open(backend_store, clock, minilm)
    await _say(keeper, "Dave", "I live in Paris")
    await _say(keeper, "Dave", "I drive a Toyota")
    clock.advance(timedelta(days=10))
    judge = ModelJudge(garbage, max_calls=5)
    with keeper._core.transaction() as unit:
        written = await _semantic(keeper, unit, judge).astore_all(
            [
                MemoryDraft("I moved to Berlin", source_entity="Dave"),
                MemoryDraft("I bought a bicycle", source_entity="Dave"),
            ]
        )
    # The model was asked about the close calls, answered nothing usable (and nothing
    # usable after the one repair request), and the rules decided.
    assert judge.asked >= 1
    assert judge.used == 0
    assert judge.refused == judge.asked
    assert len(garbage.history) == 2 * judge.asked
    assert [w.action for w in written] == ["updated", "added"]
    assert [w.by for w in written] == ["rules", "rules"]
    paris = next(m for m in _all(keeper) if m.content == "I live in Paris")
    assert paris.valid_to == "2025-12-16T10:00:00Z"


async def test_a_usable_judgement_decides_a_close_call_within_the_rules(
    backend_store: SqlStore, clock: ManualClock, minilm: MiniLMEmbedder
) -> None:
    keeper = _open(backend_store, clock, minilm)
    toyota = (await _say(keeper, "Dave", "I drive a Toyota")).memory
    await _say(keeper, "Dave", "I have 2 cats")
    assert toyota is not None
    asked: list[str] = []

    def answer(messages: list[Message], tools: object) -> str:
        prompt = messages[-1].content or ""
        asked.append(prompt)
        if "Honda" in prompt:  # a change the rules' words do not show
            return f'{{"action": "UPDATE", "id": "{toyota.id}"}}'
        if "3 cats" in prompt:  # other numbers: the rules forbid calling it the same
            return '{"action": "NOOP", "id": "mem_2"}'
        return '{"action": "UPDATE", "id": "mem_999"}'  # no such candidate

    judge = ModelJudge(FunctionLLM(answer), max_calls=5)
    with keeper._core.transaction() as unit:
        written = await _semantic(keeper, unit, judge).astore_all(
            [
                MemoryDraft("I got a Honda", source_entity="Dave"),
                MemoryDraft("I have 3 cats", source_entity="Dave"),
            ]
        )
    assert [(w.action, w.by) for w in written] == [("updated", "model"), ("added", "rules")]
    assert written[0].related == (toyota.id,)
    assert judge.used == 1
    assert judge.refused == 1
    assert "[mem_1] (2025-12-06T10:00:00Z) I drive a Toyota" in asked[0]


async def test_a_store_from_before_validity_opens_and_reconciles(
    backend_url: str, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    before_9 = tuple(m for m in migrations.MIGRATIONS if m.version < 9)
    monkeypatch.setattr(migrations, "MIGRATIONS", before_9)
    SqlStore(backend_url).close()  # a database at version 8
    monkeypatch.undo()
    embedder = HashingEmbedder(64)
    store = SqlStore(backend_url)  # applies version 9 (and the newer ones)
    with store.engine.connect() as conn:
        versions = conn.execute(select(schema_migrations.c.version)).scalars().all()
    assert sorted(versions) == [m.version for m in migrations.MIGRATIONS]
    keeper = assistant_on(
        store, "keeper", llm=OfflineLLM(announce=False), clock=clock, embedder=embedder
    )
    await _store(keeper, "Dave keeps bees in the orchard", source_entity="Dave")
    with store.engine.begin() as conn:  # as version 9 leaves a row written before it
        conn.execute(
            update(memories).values(valid_from=None, sources=None, mentions=None, valid_to=None)
        )
    store.close()

    store = SqlStore(backend_url)
    try:
        keeper = assistant_on(
            store, "keeper", llm=OfflineLLM(announce=False), clock=clock, embedder=embedder
        )
        [memory] = _all(keeper)
        assert (memory.mentions, memory.sources, memory.valid_to) == (1, (), None)
        [found] = await _recall(keeper, "Who keeps bees?")
        assert found["metadata"]["valid_from"] == "2025-12-06T10:00:00Z"
        assert found["metadata"]["mentions"] == 1
        clock.advance(timedelta(days=1))
        again = await _store(keeper, "Dave keeps bees in the orchard", source_entity="Dave")
        assert again["action"] == "restated"
        [memory] = _all(keeper)
        assert memory.mentions == 2
        assert [s.at for s in memory.sources] == ["2025-12-06T10:00:00Z", "2025-12-07T10:00:00Z"]
    finally:
        store.close()


async def test_an_export_from_before_validity_imports(tmp_path: Path, clock: ManualClock) -> None:
    source = SqlStore(f"sqlite:///{tmp_path / 'old.db'}")
    keeper = _open(source, clock, HashingEmbedder(64))
    await _store(keeper, "Dave keeps bees in the orchard", source_entity="Dave")
    exported = tmp_path / "keeper.jsonl"
    with exported.open("w", encoding="utf-8") as out:
        export_assistant(source, "keeper", out)
    source.close()
    # As mindspace wrote it at schema version 8: no validity or source fields.
    lines = [json.loads(line) for line in exported.read_text().splitlines()]
    lines[0]["schema_version"] = 8
    for line in lines[1:]:
        if line.get("kind") == "memory":
            for name in ("valid_from", "valid_to", "superseded_by", "sources", "mentions"):
                del line["fields"][name]
    exported.write_text("".join(json.dumps(line) + "\n" for line in lines))

    target = SqlStore(f"sqlite:///{tmp_path / 'new.db'}")
    try:
        import_assistant(target, exported)
        [memory] = _all(_open(target, clock, HashingEmbedder(64)))
        assert memory.content == "Dave keeps bees in the orchard"
        assert (memory.mentions, memory.sources, memory.valid_to) == (1, (), None)
    finally:
        target.close()


async def test_the_prompt_shows_the_current_fact_first_and_the_old_one_as_past(
    backend_store: SqlStore, clock: ManualClock, minilm: MiniLMEmbedder
) -> None:
    keeper = _open(backend_store, clock, minilm)
    await _say(keeper, "Dave", "I live in Paris")
    clock.advance(timedelta(weeks=6))
    await _say(keeper, "Dave", "I moved to Berlin")
    keeper.enqueue_event("Do you remember where I live?", source_entity="Dave")
    result = await keeper.tick()
    assert result.prompt is not None
    [component] = [c for c in result.prompt.components if c.key == "semantic_memories"]
    lines = component.content.splitlines()
    berlin = next(i for i, line in enumerate(lines) if "I moved to Berlin" in line)
    paris = next(i for i, line in enumerate(lines) if "I live in Paris" in line)
    assert berlin < paris
    assert lines[paris].endswith("(no longer so since 2026-01-17)")
    assert "no longer" not in lines[berlin]


async def test_a_write_up_of_one_sentence_of_a_long_message_is_a_source_of_it(
    backend_store: SqlStore, clock: ManualClock, minilm: MiniLMEmbedder
) -> None:
    keeper = _open(backend_store, clock, minilm)
    told = await _say(
        keeper,
        "Caroline",
        "Thanks, Mel! My goal is to give kids a loving home. I'm truly grateful for all the "
        "support from friends and mentors. It's a lot to take in, but I'm not scared at all. "
        "I looked at 3 adoption agencies this week.",
    )
    assert told.memory is not None
    # What the night mines from single sentences: far from the message's vector, but
    # every word of each is in the one sentence it came from.
    for fact in ("Caroline's goal is to give kids a loving home", "It's a lot to take in"):
        with keeper._core.transaction() as unit:
            (written,) = await _semantic(keeper, unit, None).astore_all(
                [MemoryDraft(fact, source_entity="Caroline", source="conversation")]
            )
        assert (written.action, written.related) == ("restated", (told.memory.id,)), fact
    # A sentence it did not say (another number) stays a fact of its own.
    with keeper._core.transaction() as unit:
        (other,) = await _semantic(keeper, unit, None).astore_all(
            [MemoryDraft("Caroline looked at 5 adoption agencies", source_entity="Caroline")]
        )
    assert other.action == "added"
    assert [m.mentions for m in _all(keeper) if m.id == told.memory.id] == [3]
