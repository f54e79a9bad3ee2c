"""The store's change feed and its reads that never load a whole kind, on both backends."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from mindspace.errors import AssistantNotFoundError
from mindspace.state import Change
from mindspace.storage import SqlStore, feed, migrations
from mindspace.storage.migrations import MIGRATIONS
from mindspace.testing.round_trips import count_round_trips


def _goal(n: int) -> dict[str, object]:
    return {
        "id": f"g{n}",
        "description": f"goal {n}",
        "priority": "medium",
        "status": "active",
        "progress": 0.0,
        "created": "2025-12-06T10:00:00Z",
        "updated": "2025-12-06T10:00:00Z",
        "parent_id": None,
        "subtask_ids": [],
        "auto_generated": False,
    }


def _links(memory_id: str) -> dict[str, object]:
    return {"memory_id": memory_id, "linked_to": [], "processed_at": "2025-12-06T10:00:00Z"}


@pytest.fixture
def sql(backend_url: str) -> Iterator[SqlStore]:
    store = SqlStore(backend_url)
    yield store
    store.close()


def test_every_commit_is_in_the_feed_of_its_own_assistant_only(sql: SqlStore) -> None:
    mine = sql.open_assistant("mine", create=True).id
    other = sql.open_assistant("other", create=True).id
    sql.commit(mine, 0, [Change("goal", "g1", _goal(1), new=True), Change("goal", "g2", _goal(2))])
    sql.commit(other, 0, [Change("goal", "g9", _goal(9))])
    sql.commit(mine, 1, [Change("goal", "g1", None), Change("doc", "counters", None)])
    sql.commit(mine, 2, [])  # an empty commit moves the revision and names nothing

    assert sql.changes_since(mine, 0) == [
        (1, "goal", "g1"),
        (1, "goal", "g2"),
        (2, "goal", "g1"),
        (2, "doc", "counters"),
    ]
    assert sql.changes_since(mine, 1) == [(2, "goal", "g1"), (2, "doc", "counters")]
    assert sql.changes_since(mine, 3) == []
    assert sql.changes_since(other, 0) == [(1, "goal", "g9")]


def test_the_feed_is_trimmed_and_then_says_it_no_longer_reaches_back(
    sql: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(feed, "TRIM_EVERY", 5)
    monkeypatch.setattr(feed, "KEEP", 10)
    mine = sql.open_assistant("mine", create=True).id
    for revision in range(14):
        sql.commit(mine, revision, [Change("goal", f"g{revision}", _goal(revision))])
    assert sql.changes_since(mine, 0) is not None  # nothing trimmed before revision 15
    sql.commit(mine, 14, [Change("goal", "g14", _goal(14))])  # revision 15 trims up to 5

    assert sql.changes_since(mine, 4) is None
    kept = sql.changes_since(mine, 5)
    assert kept is not None
    assert [rev for rev, _, _ in kept] == list(range(6, 16))


def test_count_and_page_read_a_kind_without_loading_it(sql: SqlStore) -> None:
    mine = sql.open_assistant("mine", create=True).id
    other = sql.open_assistant("other", create=True).id
    sql.commit(mine, 0, [Change("goal", f"g{n}", _goal(n), new=True) for n in range(12)])
    sql.commit(other, 0, [Change("goal", "g0", _goal(0), new=True)])

    assert sql.count(mine, "goal") == 12
    assert sql.count(other, "goal") == 1
    assert sql.count(mine, "project") == 0
    newest = sql.page(mine, "goal", offset=0, limit=5)
    assert [r["id"] for r in newest] == ["g11", "g10", "g9", "g8", "g7"]
    assert newest[0]["description"] == "goal 11"
    oldest = sql.page(mine, "goal", offset=10, limit=5, newest_first=False)
    assert [r["id"] for r in oldest] == ["g10", "g11"]
    assert sql.page(mine, "goal", offset=20, limit=5) == []


def test_missing_finds_records_without_a_partner_oldest_first(sql: SqlStore) -> None:
    mine = sql.open_assistant("mine", create=True).id
    other = sql.open_assistant("other", create=True).id
    memories = [
        Change("memory", f"m{n}", {"id": f"m{n}", "content": f"memory {n}", **_memory()})
        for n in range(8)
    ]
    sql.commit(mine, 0, memories)
    sql.commit(mine, 1, [Change("memory_links", k, _links(k)) for k in ("m1", "m4", "m7")])
    # A partner of the same key under another assistant does not count.
    sql.commit(other, 0, [Change("memory_links", "m0", _links("m0"))])

    assert sql.missing(mine, "memory", "memory_links", limit=3) == (["m0", "m2", "m3"], 5)
    assert sql.missing(mine, "memory", "memory_links", limit=10) == (
        ["m0", "m2", "m3", "m5", "m6"],
        5,
    )
    assert sql.missing(other, "memory", "memory_links", limit=10) == ([], 0)


def _memory() -> dict[str, object]:
    return {
        "source": "tool",
        "entry_id": None,
        "tags": [],
        "source_type": "observation",
        "source_trust": 0.8,
        "source_entity": None,
        "importance": 5,
        "importance_method": "heuristic",
        "created_at": "2025-12-06T10:00:00Z",
        "occurred_at": "2025-12-06T10:00:00Z",
        "ref": None,
        "context": None,
        "embedder": None,
        "embedding": None,
    }


def test_an_existing_database_starts_its_feed_at_its_current_revision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "old.db"
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        with monkeypatch.context() as older:
            older.setattr(migrations, "MIGRATIONS", tuple(m for m in MIGRATIONS if m.version <= 4))
            migrations.migrate(conn)
        conn.execute(
            text(
                "INSERT INTO assistants (key, created_at, revision) "
                "VALUES ('old', '2025-12-06T10:00:00Z', 7)"
            )
        )
    engine.dispose()

    store = SqlStore.from_path(path)  # applies migration 5
    try:
        info = store.open_assistant("old", create=False)
        assert store.changes_since(info.id, 3) is None  # revisions 4-7 left no feed rows
        assert store.changes_since(info.id, 7) == []
        store.commit(info.id, 7, [Change("goal", "g1", _goal(1))])
        assert store.changes_since(info.id, 7) == [(8, "goal", "g1")]
    finally:
        store.close()


def _event(n: int, status: str) -> dict[str, object]:
    return {
        "id": f"evt_{n}",
        "type": "message",
        "source_entity": "Bob",
        "content": f"message {n}",
        "location": None,
        "metadata": {"n": n},
        "created_at": "2025-12-06T10:00:00Z",
        "updated_at": "2025-12-06T10:00:00Z",
        "status": status,
        "attempts": 0,
        "error": None,
        "reply": None,
    }


def test_a_tick_reads_the_revision_and_open_events_in_one_statement(sql: SqlStore) -> None:
    mine = sql.open_assistant("mine", create=True).id
    other = sql.open_assistant("other", create=True).id
    sql.commit(mine, 0, [Change("goal", "g1", _goal(1))])
    assert sql.revision_and_open_events(mine, 10) == (1, [])  # no event: the revision alone

    for n, status in enumerate(("pending", "done", "processing", "failed", "pending")):
        sql.enqueue(mine, _event(n, status))
    sql.enqueue(other, _event(9, "pending"))
    with count_round_trips(sql.engine) as counted:
        revision, rows = sql.revision_and_open_events(mine, 10)
    assert (counted.transactions, counted.statements) == (1, 1)
    assert revision == 1
    assert rows == sql.open_events(mine, 10)  # the same records as the inbox's own read
    assert [row["id"] for row in rows] == ["evt_0", "evt_2", "evt_4"]
    assert rows[0]["metadata"] == {"n": 0}
    assert [row["id"] for row in sql.revision_and_open_events(mine, 2)[1]] == ["evt_0", "evt_2"]

    with pytest.raises(AssistantNotFoundError):
        sql.revision_and_open_events(other + 100, 10)


def test_a_commit_replaces_records_in_place_inserts_unknown_ones_and_deletes(
    sql: SqlStore,
) -> None:
    mine = sql.open_assistant("mine", create=True).id
    other = sql.open_assistant("other", create=True).id
    sql.commit(mine, 0, [Change("goal", f"g{n}", _goal(n), new=True) for n in (1, 2, 3)])
    sql.commit(other, 0, [Change("goal", "g1", _goal(1), new=True)])
    replaced = {**_goal(1), "description": "goal 1, reworded"}
    with count_round_trips(sql.engine) as counted:
        sql.commit(
            mine,
            1,
            [
                Change("goal", "g1", replaced),  # exists: replaced where it stands
                Change("goal", "g4", _goal(4)),  # not known to be new, and absent
                Change("goal", "g2", None),
                Change("goal", "g3", None),
                Change("goal", "g5", _goal(5), new=True),
            ],
        )
    # The revision check, one DELETE, one upsert and one INSERT of the kind, the feed.
    assert counted.statements == 5
    assert [(g["id"], g["description"]) for g in sql.load(mine, "goal")] == [
        ("g1", "goal 1, reworded"),
        ("g4", "goal 4"),
        ("g5", "goal 5"),
    ]
    assert [g["description"] for g in sql.load(other, "goal")] == ["goal 1"]
    assert [key for _, _, key in sql.changes_since(mine, 1) or []] == ["g1", "g4", "g2", "g3", "g5"]
