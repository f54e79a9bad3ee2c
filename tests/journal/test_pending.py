"""The pending index gives what listing and sorting every entry would give, at O(batch).

A reference (the filter-and-sort the sleep tick used before the index) is compared with
:func:`pending_entries` after every step of a random sequence of writes: uncommitted
ones in the unit, commits, other units' edits and deletions, and cache reloads.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from mindspace import Assistant, ManualClock
from mindspace.clock import format_time
from mindspace.journal import JournalEntry
from mindspace.journal.pending import (
    MAX_SCORING_ATTEMPTS,
    QUEUES,
    Queue,
    pending_entries,
    pending_index,
)
from mindspace.state.unit import Unit


def reference(entries: list[JournalEntry], queue: Queue) -> list[JournalEntry]:
    """The queue as the sleep tick computed it before the index: filter, then sort."""
    if queue == "scoring":
        return sorted(
            (
                e
                for e in entries
                if e.importance_method == "heuristic" and e.scoring_attempts < MAX_SCORING_ATTEMPTS
            ),
            key=lambda e: (e.scoring_attempts, e.id),
        )
    pending = sorted(
        (e for e in entries if not e.consolidated and not e.is_synthesis), key=lambda e: e.id
    )
    if queue == "consolidation":
        return pending
    return [
        e
        for e in pending
        if e.importance_method != "heuristic" or e.scoring_attempts >= MAX_SCORING_ATTEMPTS
    ]


def assert_same_as_reference(unit: Unit, limit: int = 7) -> None:
    for queue in QUEUES:
        expected = reference(unit.all(JournalEntry), queue)
        view = pending_entries(unit, queue, limit)
        assert [e.id for e in view.entries] == [e.id for e in expected[:limit]], queue
        assert view.entries == expected[:limit], queue  # the current versions, not stale ones
        assert view.total == len(expected), queue


def random_entry(rng: random.Random, entry_id: int, clock: ManualClock) -> JournalEntry:
    method = rng.choice(("heuristic", "heuristic", "llm", "manual"))
    return JournalEntry(
        id=entry_id,
        timestamp=format_time(clock.now()),
        content=("[SYNTHESIS] " if rng.random() < 0.1 else "") + f"event {entry_id}",
        importance=rng.randint(1, 10),
        importance_method=method,
        scoring_attempts=rng.randint(0, MAX_SCORING_ATTEMPTS) if method == "heuristic" else 0,
        consolidated=rng.random() < 0.2,
    )


def mutate(rng: random.Random, unit: Unit, next_id: int, clock: ManualClock) -> int:
    """One random write in ``unit``; returns the next free id."""
    existing = unit.all(JournalEntry)
    action = rng.random()
    if action < 0.4 or not existing:
        unit.put(random_entry(rng, next_id, clock))
        return next_id + 1
    entry = rng.choice(existing)
    if action < 0.55:
        unit.delete(JournalEntry, entry.record_key())
    elif action < 0.7:
        unit.put(entry.model_copy(update={"consolidated": not entry.consolidated}))
    elif action < 0.85:
        attempts = min(entry.scoring_attempts + 1, MAX_SCORING_ATTEMPTS)
        unit.put(entry.model_copy(update={"scoring_attempts": attempts}))
    else:
        unit.put(entry.model_copy(update={"importance_method": "llm", "importance": 7}))
    return next_id


@pytest.mark.parametrize("seed", range(6))
def test_the_index_matches_filtering_every_entry(
    seed: int, make_assistant: Callable[..., Assistant], clock: ManualClock
) -> None:
    rng = random.Random(seed)
    assistant = make_assistant(f"pending{seed}")
    other = make_assistant(f"pending{seed}")  # another process on the same store
    cache = assistant._core.state
    next_id = 1
    with assistant._core.transaction() as unit:
        for _ in range(40):
            next_id = mutate(rng, unit, next_id, clock)
    assert_same_as_reference(assistant._core.read())  # builds the index
    for _ in range(30):
        step = rng.random()
        if step < 0.6:
            # A unit of work with uncommitted writes (and a nested one), then committed.
            with assistant._core.transaction() as unit:
                for _ in range(rng.randint(1, 6)):
                    next_id = mutate(rng, unit, next_id, clock)
                assert_same_as_reference(unit, rng.randint(0, 12))
                child = unit.child()
                next_id = mutate(rng, child, next_id, clock)
                assert_same_as_reference(child, rng.randint(1, 12))
                child.merge()
        elif step < 0.8:
            # Another process writes: this one's cache catches up through the change
            # feed and the index applies those writes in place (no rebuild).
            with other._core.transaction() as unit:
                for _ in range(rng.randint(1, 4)):
                    next_id = mutate(rng, unit, next_id, clock)
        else:
            # A unit that is dropped: its writes never reach the index.
            unit = cache.begin()
            for _ in range(3):
                next_id = mutate(rng, unit, next_id, clock)
            assert_same_as_reference(unit)
        assert_same_as_reference(assistant._core.read(), rng.randint(1, 50))
    assert pending_index(cache).rebuilds == 1


def test_a_commit_updates_the_index_without_rebuilding_it(
    make_assistant: Callable[..., Assistant], clock: ManualClock
) -> None:
    assistant = make_assistant()
    with assistant._core.transaction() as unit:
        unit.put_all(
            JournalEntry(id=n, timestamp=format_time(clock.now()), content=f"e{n}", importance=5)
            for n in range(1, 21)
        )
    read = assistant._core.read()
    assert [e.id for e in pending_entries(read, "scoring", 3).entries] == [1, 2, 3]
    index = pending_index(assistant._core.state)
    built = index.rebuilds
    with assistant._core.transaction() as unit:
        first = unit.get(JournalEntry, "1")
        assert first is not None
        unit.put(first.model_copy(update={"scoring_attempts": 1}))
        unit.delete(JournalEntry, "2")
    view = pending_entries(assistant._core.read(), "scoring", 3)
    assert [e.id for e in view.entries] == [3, 4, 5]
    assert view.total == 19
    assert index.rebuilds == built
