"""The fleet's triggers in-process: a host's write defers its tick in its own commit."""

from __future__ import annotations

import os
from collections.abc import Iterator

import psycopg
import pytest

from mindspace import Settings
from mindspace.engine.modes import SleepSchedule
from mindspace.fleet import Fleet
from mindspace.fleet.triggers import WORKER_APP
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on
from mindspace.testing.postgres import LocalPostgres

LATER = "UPDATE procrastinate_jobs SET scheduled_at = now() + interval '60 seconds'"
"""Puts every waiting tick a minute away (as a sleeping assistant's is)."""


def _sql(postgres: LocalPostgres, url: str, sql: str) -> list[tuple[object, ...]]:
    database = url.rsplit("/", 1)[1].split("?", 1)[0]
    with psycopg.connect(postgres.conninfo(database), autocommit=True) as conn:
        cursor = conn.execute(sql.encode())
        return list(cursor.fetchall()) if cursor.description else []


def _jobs(postgres: LocalPostgres, url: str) -> list[tuple[str, bool]]:
    """Each waiting tick job: (assistant, due now)."""
    rows = _sql(
        postgres,
        url,
        "SELECT args->>'assistant', coalesce(scheduled_at, now()) <= now() "
        "FROM procrastinate_jobs WHERE status = 'todo' ORDER BY id",
    )
    return [(str(key), bool(due)) for key, due in rows]


@pytest.fixture
def store(pg_url: str) -> Iterator[SqlStore]:
    """The migrated store, with the fleet's queue and triggers on its database."""
    opened = SqlStore(pg_url)
    yield opened
    opened.close()


async def _prepared(url: str) -> Fleet:
    fleet = Fleet(url)
    await fleet.prepare()
    assert fleet.triggered
    return fleet


async def test_events_modes_schedules_and_goals_defer_one_tick_each_in_their_commit(
    postgres: LocalPostgres, pg_url: str, store: SqlStore, settings: Settings
) -> None:
    await _prepared(pg_url)
    await _prepared(pg_url)  # a second start finds them current and leaves them
    alice = assistant_on(store, "alice", llm=OfflineLLM(announce=False), settings=settings)
    assert _jobs(postgres, pg_url) == [("alice", True)]  # created: one look at it
    alice.enqueue_event("hello", source_entity="Bob")
    alice.enqueue_event("again", source_entity="Bob")
    assert _jobs(postgres, pg_url) == [("alice", True)]  # one waiting tick serves both

    # a sleeping assistant's tick waits a minute; only an urgent event hurries it
    bob = assistant_on(store, "bob", llm=OfflineLLM(announce=False), settings=settings)
    await bob.sleep("night")
    _sql(postgres, pg_url, LATER)
    bob.enqueue_event("psst", source_entity="Carol")
    assert ("bob", False) in _jobs(postgres, pg_url)
    bob.enqueue_event("Fire!", source_entity="Carol", metadata={"urgent": True})
    assert ("bob", True) in _jobs(postgres, pg_url)
    # waking pulls the waiting tick forward too
    _sql(postgres, pg_url, LATER)
    await bob.wake("morning")
    assert ("bob", True) in _jobs(postgres, pg_url)

    carol = assistant_on(store, "carol", llm=OfflineLLM(announce=False), settings=settings)
    _sql(postgres, pg_url, "DELETE FROM procrastinate_jobs")
    await carol.set_sleep_schedule(SleepSchedule(enabled=True))
    assert _jobs(postgres, pg_url) == [("carol", True)]
    _sql(postgres, pg_url, "DELETE FROM procrastinate_jobs")
    await carol.call_tool("add_goal", {"description": "Keep the fire going"})
    assert _jobs(postgres, pg_url) == [("carol", True)]


async def test_a_workers_own_writes_defer_nothing(
    postgres: LocalPostgres, pg_url: str, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    SqlStore(pg_url).close()  # migrate the store
    await _prepared(pg_url)
    monkeypatch.setitem(os.environ, "PGAPPNAME", WORKER_APP)
    store = SqlStore(pg_url)
    try:
        dave = assistant_on(store, "dave", llm=OfflineLLM(announce=False), settings=settings)
        dave.enqueue_event("hello", source_entity="Bob")
        await dave.call_tool("add_goal", {"description": "Sweep the floor"})
    finally:
        store.close()
    assert _jobs(postgres, pg_url) == []


async def test_a_hosts_write_is_kept_when_the_queue_is_gone(
    postgres: LocalPostgres, pg_url: str, store: SqlStore, settings: Settings
) -> None:
    await _prepared(pg_url)
    _sql(postgres, pg_url, "DROP TABLE procrastinate_jobs CASCADE")
    erin = assistant_on(store, "erin", llm=OfflineLLM(announce=False), settings=settings)
    event = erin.enqueue_event("still here?", source_entity="Bob")
    assert erin.views.event(event.id) is not None
