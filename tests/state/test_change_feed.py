"""Catching up with another process through the change feed, and lazy record kinds.

Each "process" is its own SqlStore and StateCache on one database, as two hosts
sharing a file (or a PostgreSQL database) would be.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from mindspace import ManualClock
from mindspace.embeddings import HashingEmbedder
from mindspace.errors import ConcurrencyError
from mindspace.offline import OfflineLLM
from mindspace.state import Document, Record, StateCache
from mindspace.state import lazy as lazy_module
from mindspace.state import unit as unit_module
from mindspace.storage import SqlStore, feed
from mindspace.testing.assistants import assistant_on
from mindspace.workspace import Goal, Project, SessionMemory


class LazyGoal(Goal):
    """Goals read the way a lazy kind is: by key, never all at once."""

    lazy: ClassVar[bool] = True


class Listener:
    """A cache listener that writes down what it hears."""

    def __init__(self) -> None:
        self.heard: list[tuple[str, str | None]] = []
        self.resets = 0

    def applied(self, key: str, record: Record | None) -> None:
        if record is None:
            self.heard.append((key, None))
        else:
            self.heard.append((key, getattr(record, "description", getattr(record, "summary", ""))))

    def reset(self) -> None:
        self.resets += 1


class Process:
    """One store and cache on the shared database: what another process would hold."""

    def __init__(self, url: str) -> None:
        self.store = SqlStore(url)
        info = self.store.open_assistant("barkeep", create=True)
        self.cache = StateCache(self.store, info.id, self.store.revision(info.id))

    def write(self, *items: Record | Document, deleted: tuple[str, ...] = ()) -> None:
        self.cache.refresh_if_stale()
        unit = self.cache.begin()
        for item in items:
            if isinstance(item, Document):
                unit.put_doc(item)
            else:
                unit.put(item)
        for key in deleted:
            unit.delete(Goal, key)
        self.cache.commit(unit)


def _goal(goal_id: str, description: str = "d") -> Goal:
    return Goal(id=goal_id, description=description, created="t", updated="t")


@pytest.fixture
def pair(backend_url: str) -> Iterator[tuple[Process, Process]]:
    here, there = Process(backend_url), Process(backend_url)
    yield here, there
    here.store.close()
    there.store.close()


def test_another_process_s_writes_are_applied_key_by_key(pair: tuple[Process, Process]) -> None:
    here, there = pair
    there.write(_goal("g1", "dig"), _goal("g2", "build"), _goal("g3", "paint"))
    here.cache.refresh_if_stale()
    assert [g.description for g in here.cache.begin().all(Goal)] == ["dig", "build", "paint"]
    assert here.cache.begin().doc(SessionMemory).key_facts == ()
    goal_version = here.cache.version("goal")
    doc_version = here.cache.version("doc:session_memory")
    epoch = here.cache.epoch

    there.write(_goal("g2", "build twice"), _goal("g4", "sell"), deleted=("g1",))
    there.write(SessionMemory(key_facts=("The well is dry",)))

    assert here.cache.refresh_if_stale()
    assert here.cache.epoch == epoch  # caught up, not reloaded
    assert here.cache.revision == there.cache.revision
    unit = here.cache.begin()
    assert [(g.id, g.description) for g in unit.all(Goal)] == [
        ("g2", "build twice"),
        ("g3", "paint"),
        ("g4", "sell"),
    ]
    assert unit.doc(SessionMemory).key_facts == ("The well is dry",)
    assert here.cache.version("goal") != goal_version  # derived caches see the change
    assert here.cache.version("doc:session_memory") != doc_version
    assert not here.cache.refresh_if_stale()


def test_listeners_hear_every_changed_key_even_of_kinds_not_loaded(
    pair: tuple[Process, Process],
) -> None:
    here, there = pair
    goals, projects = Listener(), Listener()
    here.cache.listen("goal", goals)
    here.cache.listen("project", projects)
    here.cache.records(Goal)  # goals are loaded here, projects are not
    there.write(
        _goal("g1", "dig"),
        Project(key="inn", summary="Run the inn", created_at="t", last_active="t"),
    )
    there.write(_goal("g1", "dig deeper"), _goal("g2", "rest"))
    there.write(deleted=("g2",))

    here.cache.refresh_if_stale()
    # Each key is reloaded once, as it is now; a deleted key is heard as None.
    assert goals.heard == [("g1", "dig deeper"), ("g2", None)]
    assert projects.heard == [("inn", "Run the inn")]
    assert goals.resets == projects.resets == 0


def test_a_trimmed_feed_falls_back_to_a_full_reload(
    pair: tuple[Process, Process], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(feed, "TRIM_EVERY", 5)
    monkeypatch.setattr(feed, "KEEP", 10)
    here, there = pair
    listener = Listener()
    here.cache.listen("goal", listener)
    here.cache.records(Goal)
    epoch = here.cache.epoch
    for n in range(15):  # revision 15 trims the feed to revisions after 5
        there.write(_goal(f"g{n}", f"step {n}"))

    assert here.cache.refresh_if_stale()
    assert here.cache.epoch == epoch + 1
    assert listener.resets == 1
    assert listener.heard == []
    assert len(here.cache.begin().all(Goal)) == 15


def test_too_many_changes_fall_back_to_a_full_reload(
    pair: tuple[Process, Process], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(unit_module, "MAX_INCREMENTAL", 3)
    here, there = pair
    here.cache.records(Goal)
    epoch = here.cache.epoch
    there.write(*(_goal(f"g{n}") for n in range(4)))
    assert here.cache.refresh_if_stale()
    assert here.cache.epoch == epoch + 1
    assert len(here.cache.begin().all(Goal)) == 4


def test_a_unit_open_across_a_catch_up_cannot_undo_the_other_process_s_write(
    pair: tuple[Process, Process],
) -> None:
    here, there = pair
    there.write(_goal("g1", "dig"))
    here.cache.refresh_if_stale()
    long_running = here.cache.begin()  # e.g. a tick waiting for the model
    assert long_running.get(Goal, "g1") is not None

    there.write(_goal("g1", "dig deeper"))
    there.write(SessionMemory(key_facts=("The gate is shut",)))
    here.cache.refresh_if_stale()  # another call in this process catches up meanwhile

    long_running.put(_goal("g1", "dig (stale)"))
    with pytest.raises(ConcurrencyError, match="goal:g1 changed"):
        here.cache.commit(long_running)

    stale_doc = here.cache.begin()
    there.write(SessionMemory(key_facts=("The gate is open",)))
    here.cache.refresh_if_stale()
    stale_doc.put_doc(SessionMemory(key_facts=("The gate is ajar",)))
    with pytest.raises(ConcurrencyError, match="doc:session_memory changed"):
        here.cache.commit(stale_doc)

    other_record = here.cache.begin()
    there.write(_goal("g2", "rest"))
    here.cache.refresh_if_stale()
    other_record.put(_goal("g3", "sing"))  # touches nothing the other process wrote
    here.cache.commit(other_record)
    assert [g.description for g in here.cache.begin().all(Goal)] == ["dig deeper", "rest", "sing"]
    assert there.cache.refresh_if_stale()
    assert [g.id for g in there.cache.begin().all(Goal)] == ["g1", "g2", "g3"]


class CountingStore(SqlStore):
    """A store that counts the records it loads by key."""

    loaded_keys = 0

    def load_keys(self, assistant_id: int, kind: str, keys: object) -> list[dict[str, object]]:  # type: ignore[override]
        keys = list(keys)  # type: ignore[call-overload]
        CountingStore.loaded_keys += len(keys)
        return super().load_keys(assistant_id, kind, keys)


def test_a_lazy_kind_is_read_by_key_through_a_bounded_cache(
    backend_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lazy_module, "LAZY_CACHE_SIZE", 3)
    monkeypatch.setattr(CountingStore, "loaded_keys", 0)
    there = Process(backend_url)
    store = CountingStore(backend_url)
    try:
        info = store.open_assistant("barkeep", create=True)
        there.write(*(_goal(f"g{n}", f"step {n}") for n in range(5)))
        cache = StateCache(store, info.id, store.revision(info.id))
        unit = cache.begin()

        with pytest.raises(TypeError, match=r"lazy.*page/count/missing"):
            unit.all(LazyGoal)
        with pytest.raises(TypeError, match="lazy"):
            cache.records(LazyGoal)
        assert store.load(info.id, "goal")  # the store still has them all
        first = unit.get(LazyGoal, "g1")
        assert isinstance(first, LazyGoal)
        assert first.description == "step 1"
        assert unit.get(LazyGoal, "g1") == first
        assert unit.get(LazyGoal, "nope") is None
        assert CountingStore.loaded_keys == 2  # the second read of g1 hit the cache

        unit.put(LazyGoal(id="g9", description="mine", created="t", updated="t"))
        unit.delete(LazyGoal, "g2")
        found = unit.get_many(LazyGoal, ["g9", "g2", "g0", "g1", "missing"])
        assert list(found) == ["g9", "g0", "g1"]  # asked order; own writes win
        assert CountingStore.loaded_keys == 4  # g0 and "missing" (g1 cached)

        unit.get_many(LazyGoal, ["g3", "g4"])  # the bound of 3 evicts the oldest
        CountingStore.loaded_keys = 0
        unit.get(LazyGoal, "g1")
        assert CountingStore.loaded_keys == 1

        # Putting over a key never read is an update, not a second row.
        writer = cache.begin()
        writer.put(LazyGoal(id="g0", description="step zero", created="t", updated="t"))
        cache.commit(writer)
        assert [r["description"] for r in store.load_keys(info.id, "goal", ["g0"])] == ["step zero"]

        there.write(_goal("g1", "step one, again"), _goal("g5", "new"), deleted=("g4",))
        cache.refresh_if_stale()
        fresh = cache.begin()
        assert fresh.get(LazyGoal, "g1").description == "step one, again"  # type: ignore[union-attr]
        assert fresh.get(LazyGoal, "g4") is None
        assert fresh.get(LazyGoal, "g5").description == "new"  # type: ignore[union-attr]
        assert fresh.get(LazyGoal, "g0").description == "step zero"  # type: ignore[union-attr]
    finally:
        store.close()
        there.store.close()


WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from mindspace import ManualClock
    from mindspace.testing.assistants import assistant_on
    from mindspace.embeddings import HashingEmbedder
    from mindspace.offline import OfflineLLM
    from mindspace.storage import SqlStore

    async def main() -> None:
        store = SqlStore.from_path(sys.argv[1])
        a = assistant_on(store, "barkeep", llm=OfflineLLM(announce=False),
                           clock=ManualClock(), embedder=HashingEmbedder(384))
        done = await a.call_tool("store_memory", {"content": sys.argv[2]})
        print(done["memory_id"])

    asyncio.run(main())
    """
)


async def test_a_memory_written_by_another_process_is_found_without_a_rebuild(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SqlStore.from_path(db_path)
    try:
        assistant = assistant_on(
            store,
            "barkeep",
            llm=OfflineLLM(announce=False),
            clock=ManualClock(),
            embedder=HashingEmbedder(384),
        )
        for fact in ("Alice drinks ale", "Bob sells bread", "The inn opens at dawn"):
            assert (await assistant.call_tool("store_memory", {"content": fact}))["success"]
        warm = await assistant.views.search_memories({"query": "harp"})
        assert warm.result["success"]
        index = assistant._core.memory_index
        assert index.count() == 3  # built
        resets: list[int] = []
        monkeypatch.setattr(index, "reset", lambda: resets.append(1))
        epoch = assistant._core.state.epoch

        done = subprocess.run(
            [sys.executable, "-c", WRITER, str(db_path), "Carol plays the harp at the inn"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        written = done.stdout.strip()

        found = await assistant.views.search_memories({"query": "who plays the harp"})
        assert found.result["success"]
        assert found.result["memories"][0]["id"] == written
        assert assistant._core.state.epoch == epoch  # caught up through the feed
        assert resets == []  # the index was updated in place, not rebuilt
        assert index.count() == 4
    finally:
        store.close()
