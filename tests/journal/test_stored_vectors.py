"""Semantic search_journal over stored entry vectors: filled by sleep, cut off by similarity."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mindspace import Assistant, ScriptedLLM
from mindspace.embeddings import HashingEmbedder
from mindspace.embeddings.port import Vectors
from mindspace.journal.records import EntryVector, JournalEntry
from mindspace.journal.vectors import embed_pending_entries
from mindspace.testing.inspect import stored_records

MEAD = [f"Poured mead for guest {n} at the bar" for n in range(12)]
CLOCKS = ["Bob repaired the old tower clock", "The tower clock chimed twelve"]


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, remembering every text it was asked to embed."""

    def __init__(self, dim: int) -> None:
        super().__init__(dim)
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts.extend(texts)
        return super().embed(texts)


async def _write(assistant: Assistant, texts: Sequence[str]) -> None:
    for text in texts:
        await assistant.call_tool("add_journal_entry", {"content": text, "importance": 5})


async def _night(assistant: Assistant) -> dict[str, int]:
    """Sleep and tick until the dreaming phase has stored entry vectors."""
    await assistant.sleep("night")
    for _ in range(20):
        result = await assistant.tick()
        assert result.sleep is not None
        done = result.sleep.operations.get("embed_journal_entries")
        if done is not None:
            await assistant.wake("morning")
            return dict(done)
    raise AssertionError("no sleep tick stored journal vectors in 20 ticks")


async def test_sleep_stores_entry_vectors_and_search_then_embeds_only_the_query(
    make_assistant: Callable[..., Assistant],
) -> None:
    embedder = CountingEmbedder(240)
    assistant = make_assistant("vectors", embedder=embedder, llm=ScriptedLLM())
    await _write(assistant, [*CLOCKS, *MEAD[:3]])

    stored = await _night(assistant)

    assert stored == {"embedded": 5, "dropped": 0}
    vectors = stored_records(assistant, EntryVector)
    assert sorted(v.key for v in vectors) == ["1", "2", "3", "4", "5"]
    assert {v.embedder for v in vectors} == {embedder.name}
    embedder.texts.clear()
    found = await assistant.call_tool("search_journal", {"query": "tower clock"})
    assert found["mode"] == "semantic"
    assert sorted(r["content"] for r in found["results"][:2]) == sorted(CLOCKS)
    assert embedder.texts == ["tower clock"]  # entries' vectors came from the store


async def test_entries_written_after_the_night_are_found_too(
    make_assistant: Callable[..., Assistant],
) -> None:
    embedder = CountingEmbedder(240)
    assistant = make_assistant("late", embedder=embedder, llm=ScriptedLLM())
    await _write(assistant, MEAD[:3])
    await _night(assistant)
    await _write(assistant, CLOCKS)
    found = await assistant.call_tool("search_journal", {"query": "tower clock"})
    assert sorted(r["content"] for r in found["results"][:2]) == sorted(CLOCKS)
    assert found["total_matches"] == 2


async def test_unrelated_queries_find_nothing_and_totals_pass_the_limit(
    make_assistant: Callable[..., Assistant],
) -> None:
    assistant = make_assistant("cutoff", embedder=HashingEmbedder(240), llm=ScriptedLLM())
    await _write(assistant, [*MEAD, *CLOCKS])
    await _night(assistant)

    nothing = await assistant.call_tool("search_journal", {"query": "dragon attack"})
    assert nothing["success"] is True
    assert nothing["mode"] == "semantic"
    assert nothing["results"] == []
    assert nothing["total_matches"] == 0
    assert nothing["message"] == "No journal entries match"

    mead = await assistant.call_tool("search_journal", {"query": "mead at the bar", "limit": 5})
    assert mead["count"] == 5
    assert mead["total_matches"] == 12  # every mead note matches, beyond the limit
    assert all(r["content"] in MEAD for r in mead["results"])
    assert all(s >= assistant._core.settings.journal_min_similarity for s in mead["scores"])


async def test_vectors_of_deleted_entries_are_dropped(
    make_assistant: Callable[..., Assistant],
) -> None:
    embedder = HashingEmbedder(240)
    assistant = make_assistant("orphans", embedder=embedder, llm=ScriptedLLM())
    await _write(assistant, CLOCKS)
    core = assistant._core
    assert core.journal_index is not None
    unit = core.state.begin()
    assert await embed_pending_entries(unit, core.journal_index, embedder, batch=10) == {
        "embedded": 2,
        "dropped": 0,
    }
    core.state.commit(unit)
    unit = core.state.begin()
    unit.delete(JournalEntry, "1")
    core.state.commit(unit)
    unit = core.state.begin()
    assert await embed_pending_entries(unit, core.journal_index, embedder, batch=10) == {
        "embedded": 0,
        "dropped": 1,
    }
    core.state.commit(unit)
    assert [v.key for v in stored_records(assistant, EntryVector)] == ["2"]
