"""Reading records by key and streaming a kind, on SQLite and on PostgreSQL."""

from __future__ import annotations

from mindspace.state import Change
from mindspace.storage import SqlStore


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


def test_load_keys_returns_only_the_asked_records_of_that_assistant(backend_url: str) -> None:
    store = SqlStore(backend_url)
    try:
        mine = store.open_assistant("mine", create=True).id
        other = store.open_assistant("other", create=True).id
        store.commit(mine, 0, [Change("goal", f"g{n}", _goal(n), new=True) for n in range(1200)])
        store.commit(other, 0, [Change("goal", "g5", {**_goal(5), "description": "not mine"})])
        wanted = ["g5", "g1100", "g3", "missing", "g5"]
        found = store.load_keys(mine, "goal", wanted)
        assert [r["id"] for r in found] == ["g3", "g5", "g1100"]  # insertion order, no repeats
        assert found[1]["description"] == "goal 5"
        every = store.load_keys(mine, "goal", [f"g{n}" for n in range(1200)])
        assert len(every) == 1200  # more keys than one query's parameters
    finally:
        store.close()


def test_scan_streams_chosen_fields_in_insertion_order(backend_url: str) -> None:
    store = SqlStore(backend_url)
    try:
        mine = store.open_assistant("mine", create=True).id
        store.commit(mine, 0, [Change("goal", f"g{n}", _goal(n), new=True) for n in range(25)])
        rows = list(store.scan(mine, "goal", ["id", "progress"], batch=10))
        assert [r["id"] for r in rows] == [f"g{n}" for n in range(25)]
        assert set(rows[0]) == {"id", "progress"}
    finally:
        store.close()
