"""Journal entries through add_journal_entry: spec 004 §1 and §4, bad input, auto-pruning."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mindspace import Assistant, ManualClock
from mindspace.errors import InvalidArgumentsError
from mindspace.journal import (
    DEFAULT_TRUST,
    JournalBook,
    JournalEntry,
    JournalMeta,
    ReflectionState,
)
from mindspace.journal.pruning import select_overflow

Snapshot = Callable[[], dict[str, list[tuple[Any, ...]]]]


@pytest.mark.parametrize(
    ("source_type", "trust"),
    [("direct", 0.9), ("observation", 0.8), ("inference", 0.6), ("environmental", 0.3)],
)
async def test_trust_defaults_follow_the_source_type(
    assistant: Assistant, source_type: str, trust: float
) -> None:
    result = await assistant.call_tool(
        "add_journal_entry",
        {"content": "The well in the square ran dry", "source_type": source_type},
    )
    assert result["success"] is True
    assert result["source_type"] == source_type
    assert result["source_trust"] == trust
    assert result["entry"]["source_trust"] == trust
    assert DEFAULT_TRUST[source_type] == trust  # type: ignore[index]


async def test_the_spec_example_entry(assistant: Assistant) -> None:
    result = await assistant.call_tool(
        "add_journal_entry",
        {
            "content": "Player Alice prefers formal address and dislikes jokes",
            "source_type": "direct",
            "source_entity": "Alice",
            "importance": 7,
            "tags": ["player_preference", "communication"],
            "related_projects": ["alice_quest"],
        },
    )
    assert result["entry"] == {
        "id": 1,
        "timestamp": "2025-12-06T10:00:00Z",
        "content": "Player Alice prefers formal address and dislikes jokes",
        "source_type": "direct",
        "source_trust": 0.9,
        "source_entity": "Alice",
        "importance": 7,
        "importance_method": "manual",
        "tags": ["player_preference", "communication"],
        "related_projects": ["alice_quest"],
        "consolidated": False,
        "evidence_ids": [],
    }
    assert result["entry_id"] == 1
    assert result["reflection"] == {
        "cumulative_importance": 7.0,
        "threshold": 150,
        "reflection_due": False,
    }


async def test_explicit_trust_and_the_default_source_type(assistant: Assistant) -> None:
    result = await assistant.call_tool(
        "add_journal_entry", {"content": "Rumours of wolves in the forest", "source_trust": 0.25}
    )
    assert result["source_type"] == "observation"
    assert result["source_trust"] == 0.25
    assert result["importance_method"] == "heuristic"


async def test_ids_count_up_and_survive_a_restart(
    make_assistant: Callable[..., Assistant],
) -> None:
    first = make_assistant()
    for text in ("Snow fell overnight", "The baker opened late"):
        await first.call_tool("add_journal_entry", {"content": text})
    again = make_assistant()
    result = await again.call_tool("add_journal_entry", {"content": "Ice on the river"})
    assert result["entry_id"] == 3
    book = JournalBook(again._core.read(), again.clock, again.settings)
    assert [e.id for e in book.entries()] == [1, 2, 3]
    assert book.meta().entry_count == 3
    view = book.view()
    assert view["entry_count"] == 3
    assert view["max_entries"] == 100
    assert view["last_reflection"] is None
    assert view["consolidated_entry_ids"] == []


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"content": "Alice arrived", "importance": 0}, "importance: Input should be greater"),
        ({"content": "Alice arrived", "importance": 11}, "importance: Input should be less"),
        ({"content": "Alice arrived", "importance": "7"}, "importance: Input should be a valid"),
        ({"content": "Alice arrived", "source_trust": 1.5}, "source_trust: Input should be less"),
        ({"content": "Alice arrived", "source_trust": -0.1}, "source_trust: Input should be"),
        ({"content": "Alice arrived", "source_type": "rumour"}, "source_type: Input should be"),
        ({"content": ""}, "'content' is empty"),
        ({"content": "   \n "}, "'content' is empty"),
        ({"content": "x" * 1_000_000}, "the limit is 10,000"),
        ({"content": "Alice arrived", "tags": "combat"}, "tags: Input should be a valid list"),
        ({"content": "Alice arrived", "tags": [""]}, "'tags item' is empty"),
        ({"content": "Alice arrived", "tags": ["t"] * 21}, "the limit is 20"),
        ({"tags": ["combat"]}, "content: Field required"),
        ({"content": "Alice arrived", "mood": "happy"}, "mood: Extra inputs are not permitted"),
    ],
)
async def test_bad_entries_are_refused_and_nothing_is_stored(
    assistant: Assistant, stored: Snapshot, args: dict[str, Any], expected: str
) -> None:
    await assistant.call_tool("add_journal_entry", {"content": "The gate was repaired"})
    before = stored()
    result = await assistant.call_tool("add_journal_entry", args)
    assert result["success"] is False
    assert expected in result["error"]
    assert result["suggestion"]
    assert stored() == before


async def test_the_quoted_value_and_next_step_for_a_bad_source_type(assistant: Assistant) -> None:
    result = await assistant.call_tool(
        "add_journal_entry", {"content": "Alice arrived", "source_type": "rumour"}
    )
    assert '(got "rumour")' in result["error"]
    assert "add_journal_entry" in result["suggestion"]


def test_the_book_refuses_bad_values_from_python_callers(assistant: Assistant) -> None:
    book = JournalBook(assistant._core.read(), assistant.clock, assistant.settings)
    with pytest.raises(InvalidArgumentsError, match="'rumour'"):
        book.add("Alice arrived", source_type="rumour")
    with pytest.raises(InvalidArgumentsError, match=r"got 1\.5"):
        book.add("Alice arrived", source_trust=1.5)
    with pytest.raises(InvalidArgumentsError, match="got 0"):
        book.add("Alice arrived", importance=0)


async def _add_many(assistant: Assistant, clock: ManualClock, count: int) -> None:
    for i in range(count):
        await assistant.call_tool("add_journal_entry", {"content": f"Ordinary entry {i}"})
        clock.advance(minutes=1)


async def test_auto_pruning_drops_the_oldest_and_keeps_synthesis_entries(
    assistant: Assistant, clock: ManualClock
) -> None:
    with assistant._core.transaction() as unit:
        JournalBook(unit, clock, assistant.settings).set_max_entries(5)
    await _add_many(assistant, clock, 2)  # ids 1, 2
    review = await assistant.call_tool("review_journal", {"synthesis": "The town is quiet"})
    assert review["synthesis_entry_id"] == 3
    clock.advance(minutes=1)
    await _add_many(assistant, clock, 2)  # ids 4, 5: the journal is full
    result = await assistant.call_tool("add_journal_entry", {"content": "Sixth entry"})
    assert result["pruned_entry_ids"] == [1]
    result = await assistant.call_tool("add_journal_entry", {"content": "Seventh entry"})
    assert result["pruned_entry_ids"] == [2]
    result = await assistant.call_tool("add_journal_entry", {"content": "Eighth entry"})
    assert result["pruned_entry_ids"] == [4]  # 3 is a synthesis entry and is kept
    assert result["total_entries"] == 5
    book = JournalBook(assistant._core.read(), clock, assistant.settings)
    assert [e.id for e in book.entries()] == [3, 5, 6, 7, 8]
    assert book.meta().entry_count == 8
    window = assistant._core.read().doc(ReflectionState).entries_since_reflection
    assert window == (3, 5, 6, 7, 8)


def _entry(entry_id: int, minute: int, synthesis: bool) -> JournalEntry:
    content = ("[SYNTHESIS] insight" if synthesis else "event") + f" {entry_id}"
    return JournalEntry(
        id=entry_id, timestamp=f"2025-12-06T10:{minute:02d}:00Z", content=content, importance=5
    )


@settings(max_examples=200, deadline=None)
@given(
    kinds=st.lists(st.booleans(), min_size=1, max_size=30),
    minutes=st.lists(st.integers(0, 59), min_size=30, max_size=30),
    max_entries=st.integers(1, 30),
)
def test_overflow_pruning_never_drops_synthesis_while_they_fit(
    kinds: list[bool], minutes: list[int], max_entries: int
) -> None:
    entries = [_entry(i + 1, minutes[i], s) for i, s in enumerate(kinds)]
    newest = entries[-1].id
    dropped = select_overflow(entries, max_entries, keep_id=newest)
    kept = [e for e in entries if e not in dropped]
    assert len(kept) == max(min(len(entries), max_entries), 1)
    assert newest in {e.id for e in kept}
    synthesis = [e for e in entries if e.is_synthesis and e.id != newest]
    if len(synthesis) <= max_entries - 1:  # the newest entry takes one place
        assert all(not e.is_synthesis for e in dropped)
    ordinary_dropped = [e for e in dropped if not e.is_synthesis]
    ordinary_kept = [e for e in kept if not e.is_synthesis and e.id != newest]
    if ordinary_dropped and ordinary_kept:  # oldest first
        assert max((e.timestamp, e.id) for e in ordinary_dropped) < min(
            (e.timestamp, e.id) for e in ordinary_kept
        )


async def test_consolidation_flags_give_the_spec_id_list(
    assistant: Assistant, clock: ManualClock
) -> None:
    await _add_many(assistant, clock, 4)
    with assistant._core.transaction() as unit:
        book = JournalBook(unit, clock, assistant.settings)
        book.mark_consolidated([1, 2])
        book.mark_consolidated([2])  # already consolidated: unchanged
    book = JournalBook(assistant._core.read(), clock, assistant.settings)
    assert book.consolidated_entry_ids() == [1, 2]
    assert book.view()["consolidated_entry_ids"] == [1, 2]
    first = book.get(1)
    assert first.consolidated_at == "2025-12-06T10:04:00Z"
    assert assistant._core.read().doc(JournalMeta).entry_count == 4


def test_overflow_drops_consolidated_entries_before_unconsolidated_ones() -> None:
    entries = [_entry(i + 1, i, False) for i in range(6)]
    entries[3] = entries[3].model_copy(update={"consolidated": True})
    entries[4] = entries[4].model_copy(update={"consolidated": True})
    dropped = select_overflow(entries, 4, keep_id=6)
    assert [e.id for e in dropped] == [4, 5]  # consolidated, although 1-3 are older
