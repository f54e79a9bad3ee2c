"""The unit of work: read-your-writes, savepoints, one commit, and cache sharing."""

from __future__ import annotations

from typing import ClassVar

import pytest

from mindspace.journal.records import JournalEntry
from mindspace.state import StateCache
from mindspace.state.models import Record
from mindspace.storage import SqlStore
from mindspace.workspace import Goal, SessionMemory


def _goal(goal_id: str, description: str = "d") -> Goal:
    return Goal(id=goal_id, description=description, created="t", updated="t")


def test_reads_see_own_and_parent_writes_and_children_merge_or_vanish(store: SqlStore) -> None:
    info = store.open_assistant("a", create=True)
    cache = StateCache(store, info.id, info.revision)
    unit = cache.begin()
    unit.put(_goal("g1"))

    kept = unit.child()
    kept.put(_goal("g2"))
    assert [g.id for g in kept.all(Goal)] == ["g1", "g2"]
    kept.merge()

    dropped = unit.child()
    dropped.put(_goal("g3"))
    dropped.delete(Goal, "g1")
    assert [g.id for g in dropped.all(Goal)] == ["g2", "g3"]
    # Dropping the child is the rollback: nothing of it reaches the parent.
    assert [g.id for g in unit.all(Goal)] == ["g1", "g2"]

    assert store.load(info.id, "goal") == []  # nothing written before the commit
    cache.commit(unit)
    assert [row["id"] for row in store.load(info.id, "goal")] == ["g1", "g2"]


def test_committed_records_are_shared_and_replacements_keep_order(store: SqlStore) -> None:
    info = store.open_assistant("a", create=True)
    cache = StateCache(store, info.id, info.revision)
    unit = cache.begin()
    unit.put_all([_goal("g1"), _goal("g2"), _goal("g3")])
    unit.put_doc(SessionMemory(key_facts=("The gate closes at midnight",)))
    cache.commit(unit)

    reader = cache.begin()
    writer = cache.begin()
    writer.put(_goal("g2", "changed"))
    assert [g.description for g in writer.all(Goal)] == ["d", "changed", "d"]
    assert [g.description for g in reader.all(Goal)] == ["d", "d", "d"]
    cache.commit(writer)
    fresh = StateCache(store, info.id, store.revision(info.id)).begin()
    assert [g.description for g in fresh.all(Goal)] == ["d", "changed", "d"]
    assert fresh.doc(SessionMemory).key_facts == ("The gate closes at midnight",)


def test_an_empty_unit_commits_nothing(store: SqlStore) -> None:
    info = store.open_assistant("a", create=True)
    cache = StateCache(store, info.id, info.revision)
    assert cache.commit(cache.begin()) == info.revision
    assert store.revision(info.id) == info.revision


def test_a_unit_cannot_undo_a_write_committed_while_it_was_open(store: SqlStore) -> None:
    import pytest

    from mindspace.errors import ConcurrencyError

    info = store.open_assistant("a", create=True)
    cache = StateCache(store, info.id, info.revision)
    long_running = cache.begin()  # e.g. a tick waiting for the LLM
    quick = cache.begin()  # e.g. a host call in the same process
    quick.put_doc(SessionMemory(key_facts=("The gate is shut",)))
    cache.commit(quick)

    long_running.put(_goal("g1"))  # a different record: fine
    stale = long_running.child()
    stale.put_doc(SessionMemory(key_facts=("The gate is open",)))
    stale.merge()
    with pytest.raises(ConcurrencyError, match="doc:session_memory changed"):
        cache.commit(long_running)
    fresh = StateCache(store, info.id, store.revision(info.id)).begin()
    assert fresh.doc(SessionMemory).key_facts == ("The gate is shut",)
    assert fresh.all(Goal) == []  # nothing of the refused unit was written

    disjoint = cache.begin()
    other = cache.begin()
    other.put(_goal("g2"))
    cache.commit(other)
    disjoint.put(_goal("g3"))
    cache.commit(disjoint)  # writes that do not overlap both land
    assert [g.id for g in cache.begin().all(Goal)] == ["g2", "g3"]


def test_a_record_kind_without_its_key_field_is_refused_when_defined() -> None:
    with pytest.raises(TypeError, match="no field 'id'; set key_field"):

        class Nameless(Record):
            kind: ClassVar[str] = "nameless_for_test"

            name: str


def test_a_record_is_keyed_by_its_key_field_as_text() -> None:
    entry = JournalEntry.model_validate(
        {
            "id": 7,
            "timestamp": "2025-01-01T00:00:00Z",
            "content": "c",
            "source_type": "direct",
            "source_trust": 1.0,
            "importance": 5,
        }
    )
    assert entry.record_key() == "7"


def test_derived_state_is_made_once_per_cache_and_follows_its_commits(store: SqlStore) -> None:
    info = store.open_assistant("a", create=True)
    cache = StateCache(store, info.id, info.revision)

    class Heard:
        def __init__(self, cache: StateCache) -> None:
            self.keys: list[str] = []
            cache.listen(Goal.kind, self)

        def applied(self, key: str, record: Record | None) -> None:
            self.keys.append(key)

        def reset(self) -> None:
            self.keys.clear()

    first = cache.derived(Heard)
    assert cache.derived(Heard) is first
    assert StateCache(store, info.id, info.revision).derived(Heard) is not first
    unit = cache.begin()
    unit.put(_goal("g1"))
    cache.commit(unit)
    # Made (and listening) once: a second build would have heard the commit twice.
    assert first.keys == ["g1"]
