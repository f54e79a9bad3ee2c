"""The fleet's rules in-process: URLs, due times, idleness, the queue's locks."""

from __future__ import annotations

from collections.abc import Callable

import psycopg
import pytest

from mindspace import Assistant
from mindspace.engine.modes import SleepSchedule
from mindspace.engine.scheduler import backoff_delay, follow_up_delay
from mindspace.engine.tick import TickResult
from mindspace.errors import ConfigError
from mindspace.fleet import Fleet, conninfo_of, is_idle, require_postgres
from mindspace.testing.postgres import LocalPostgres
from mindspace.testing.round_trips import count_round_trips


def test_the_store_url_becomes_a_libpq_conninfo() -> None:
    assert (
        conninfo_of("postgresql+psycopg://me:pw@db.local:5432/mind?sslmode=require")
        == "postgresql://me:pw@db.local:5432/mind?sslmode=require"
    )
    with pytest.raises(ConfigError, match="SQLite runs ticks in-process"):
        require_postgres("sqlite:///here.db")
    with pytest.raises(ConfigError, match="'mysql://u:\\*\\*\\*@h/d'"):
        require_postgres("mysql://u:secret@h/d")


def test_due_times_follow_the_engine_rule() -> None:
    done_event = TickResult(kind="event", status="done", rate=5.0)
    assert follow_up_delay(done_event, 0, awake_rate=5.0) == 0.0
    assert follow_up_delay(TickResult(kind="idle", rate=60.0), 0, awake_rate=5.0) == 60.0
    assert follow_up_delay(TickResult(kind="idle"), 0, awake_rate=5.0) == 5.0
    failed = TickResult(kind="event", status="failed", rate=5.0)
    assert [follow_up_delay(failed, n, awake_rate=5.0) for n in (1, 2, 3, 9)] == [
        5.0,
        10.0,
        20.0,
        300.0,
    ]
    assert backoff_delay(60.0, 1, 30.0) == 60.0  # never faster than the rate


async def test_an_assistant_is_idle_only_with_nothing_to_do(
    make_assistant: Callable[..., Assistant],
) -> None:
    assistant = make_assistant()
    assert is_idle(assistant)
    event = assistant.enqueue_event("hello", source_entity="Bob")
    assert not is_idle(assistant)
    await assistant.tick()
    assert assistant.views.event(event.id).status == "done"  # type: ignore[union-attr]
    assert is_idle(assistant)
    await assistant.call_tool("add_goal", {"description": "Sweep the floor"})
    assert not is_idle(assistant)

    other = make_assistant("sleeper")
    await other.sleep("night")
    assert not is_idle(other)
    scheduled = make_assistant("scheduled")
    await scheduled.set_sleep_schedule(SleepSchedule(enabled=True))
    assert not is_idle(scheduled)


async def test_after_a_tick_the_events_it_left_tell_idleness_without_reading_the_inbox(
    make_assistant: Callable[..., Assistant],
) -> None:
    assistant = make_assistant()
    engine = assistant._core.store.engine  # type: ignore[attr-defined]
    for text in ("A pint, please", "And one for Tom"):
        assistant.enqueue_event(text, source_entity="Bob")
    first = await assistant.tick()
    assert (first.kind, first.events_left) == ("event", 1)
    second = await assistant.tick()
    assert (second.kind, second.events_left) == ("event", 0)
    with count_round_trips(engine) as counted:
        # What a worker asks after its tick once the triggers defer every new event's tick.
        assert not is_idle(assistant, refresh=False, open_events=first.events_left)
        assert is_idle(assistant, refresh=False, open_events=second.events_left)
    assert counted.transactions == 0
    assert is_idle(assistant)  # and the inbox agrees
    assistant.enqueue_event("Last round!", source_entity="Bob")
    assert not is_idle(assistant, refresh=False)  # without the count, the inbox is read


async def test_one_waiting_tick_per_assistant_and_events_pull_it_forward(
    postgres: LocalPostgres, pg_url: str
) -> None:
    fleet = Fleet(pg_url)
    await fleet.prepare()
    await fleet.prepare()  # an existing queue is left as it is
    async with fleet.app.open_async():
        assert await fleet.schedule("alice", 60.0) == "scheduled"
        assert await fleet.schedule("alice", 5.0) == "already scheduled"
        assert await fleet.schedule("bob", 0.0) == "scheduled"
        assert await fleet.schedule("alice", 0.0, prompt=True) == "pulled forward"
        assert await fleet.schedule("alice", 0.0, prompt=True) == "already scheduled"
    database = pg_url.rsplit("/", 1)[1].split("?", 1)[0]
    with psycopg.connect(postgres.conninfo(database)) as conn:
        rows = conn.execute(
            "SELECT args->>'assistant', lock, queueing_lock, "
            "coalesce(scheduled_at, now()) <= now() "
            "FROM procrastinate_jobs WHERE status = 'todo' ORDER BY id"
        ).fetchall()
    assert rows == [("alice", "alice", "alice", True), ("bob", "bob", "bob", True)]
