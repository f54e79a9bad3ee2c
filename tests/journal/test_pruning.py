"""Episodic pruning (spec 004 §6): importance <= 3 and older than 30 days, 10 per call."""

from __future__ import annotations

from mindspace import Assistant, ManualClock
from mindspace.journal import JournalBook, ReflectionState, prune_low_importance_entries


async def _add(assistant: Assistant, content: str, importance: int) -> int:
    result = await assistant.call_tool(
        "add_journal_entry", {"content": content, "importance": importance}
    )
    return int(result["entry_id"])


def _prune(assistant: Assistant, clock: ManualClock) -> list[int]:
    with assistant._core.transaction() as unit:
        return [e.id for e in prune_low_importance_entries(unit, clock, assistant.settings)]


def _ids(assistant: Assistant, clock: ManualClock) -> list[int]:
    return [e.id for e in JournalBook(assistant._core.read(), clock, assistant.settings).entries()]


async def test_the_30_day_boundary_29_days_kept_31_pruned(
    assistant: Assistant, clock: ManualClock
) -> None:
    old = await _add(assistant, "Swept the floor", 2)
    important_old = await _add(assistant, "The old king died", 4)
    clock.advance(days=1)
    exactly = await _add(assistant, "Washed the cups", 3)
    clock.advance(days=1)
    young = await _add(assistant, "Fed the cat", 1)
    clock.advance(days=29)  # old: 31 days; exactly: 30 days; young: 29 days

    assert _prune(assistant, clock) == [old]
    assert _ids(assistant, clock) == [important_old, exactly, young]
    clock.advance(seconds=1)  # "exactly" is now past 30 days
    assert _prune(assistant, clock) == [exactly]
    clock.advance(days=1)
    assert _prune(assistant, clock) == [young]
    assert _ids(assistant, clock) == [important_old]


async def test_at_most_10_per_call_oldest_first(assistant: Assistant, clock: ManualClock) -> None:
    for i in range(12):
        await _add(assistant, f"Routine chore {i}", 1)
        clock.advance(minutes=1)
    clock.advance(days=31)
    assert _prune(assistant, clock) == list(range(1, 11))
    assert _prune(assistant, clock) == [11, 12]
    assert _prune(assistant, clock) == []
    assert assistant._core.read().doc(ReflectionState).entries_since_reflection == ()
