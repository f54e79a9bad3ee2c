"""Ticks due the moment a host writes: triggers that defer the tick in the writer's commit.

Whatever host writes to an assistant (``serve``, ``mindspace wake`` or ``tool`` from the
CLI, the MCP server, Evennia, a script calling ``Assistant.enqueue_event``), the write
that makes a tick due defers that tick as a procrastinate job **in the same
transaction**: when the write is visible, so is its job, and procrastinate's own insert
trigger wakes the listening workers (LISTEN/NOTIFY). No process has to be running when
the write happens, and no host needs to know about the fleet.

The writes that make a tick due, and what they do to the assistant's ``tick`` job (one
per assistant: ``lock`` and ``queueing_lock`` are its key, as :mod:`mindspace.fleet.queue`
defers them):

* a new pending event: a job due now; a waiting job is pulled forward to now, unless the
  assistant sleeps and the event is not urgent (a sleeping assistant's next tick is at
  the sleep rate, the engine's rule; its urgent flag or priority >= 8 wakes it);
* the operating mode or sleep schedule written (``wake``, ``sleep``, a new schedule): a
  job due now, pulling a waiting one forward (the new mode's rate starts at once);
* an active goal added or changed, or a new assistant: a job due now if none waits (an
  assistant that ticks already keeps its rate).

Writes by worker processes are skipped (their connections carry the application name
:data:`WORKER_APP`): a tick's own writes are followed by the tick's own scheduling, and
a trigger there would tick every assistant twice. The workers' sweep
(:mod:`mindspace.fleet.sweep`) stays as the safety net for anything else.
"""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection
from psycopg.errors import LockNotAvailable

__all__ = ["WORKER_APP", "install_triggers"]

WORKER_APP = "mindspace worker"
"""The PostgreSQL ``application_name`` of a worker's connections."""


def _functions(task: str) -> str:
    simple = "".join(
        f"""
CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM mindspace_fleet_nudge({row}, {str(prompt).lower()});
    RETURN NULL;
END $$;
"""
        for name, row, prompt in _SIMPLE
    )
    return _base(task) + simple


# (function, the assistant's id in the row, whether a waiting tick is pulled forward)
_SIMPLE = (
    ("mindspace_fleet_on_mode", "NEW.assistant_id", True),
    ("mindspace_fleet_on_goal", "NEW.assistant_id", False),
    ("mindspace_fleet_on_assistant", "NEW.id", False),
)


def _base(task: str) -> str:
    return f"""
CREATE OR REPLACE FUNCTION mindspace_fleet_nudge(_assistant_id integer, _prompt boolean)
    RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    _key text;
    _moved bigint;
    _timeout text;
BEGIN
    IF current_setting('application_name', true) = '{WORKER_APP}' THEN
        RETURN;  -- a tick's own write: the tick schedules what follows it
    END IF;
    SELECT key INTO _key FROM assistants WHERE id = _assistant_id;
    IF _key IS NULL OR to_regclass('procrastinate_jobs') IS NULL THEN
        RETURN;  -- the queue's tables were dropped: the host's write goes on alone
    END IF;
    -- Another transaction deferring this assistant's tick right now holds its queueing
    -- lock until it commits; that job serves this write too. Never wait for it: the
    -- other one may be this very process's queue, waiting for the loop this write blocks.
    _timeout := current_setting('lock_timeout');
    PERFORM set_config('lock_timeout', '100ms', true);
    BEGIN
        INSERT INTO procrastinate_jobs (queue_name, task_name, lock, queueing_lock, args)
        VALUES ('default', '{task}', _key, _key,
                jsonb_build_object('assistant', _key, 'failures', 0))
        ON CONFLICT (queueing_lock) WHERE status = 'todo' DO NOTHING;
        IF NOT FOUND AND _prompt THEN
            UPDATE procrastinate_jobs SET scheduled_at = now()
             WHERE queueing_lock = _key AND status = 'todo' AND scheduled_at > now()
            RETURNING id INTO _moved;
            IF _moved IS NOT NULL THEN
                -- an UPDATE sends no notification of its own: wake the listening workers
                PERFORM pg_notify('procrastinate_any_queue_v1',
                    json_build_object('type', 'job_inserted', 'job_id', _moved)::text);
            END IF;
        END IF;
    EXCEPTION
        WHEN lock_not_available THEN
            NULL;
        WHEN OTHERS THEN
            -- The host's write must never fail for the fleet's sake; the sweep serves it.
            RAISE WARNING 'mindspace fleet: no tick deferred for %: %', _key, SQLERRM;
    END;
    PERFORM set_config('lock_timeout', _timeout, true);
END $$;

CREATE OR REPLACE FUNCTION mindspace_fleet_on_event() RETURNS trigger
    LANGUAGE plpgsql AS $$
DECLARE
    _asleep boolean;
    _urgent boolean;
BEGIN
    SELECT d.value::jsonb ->> 'mode' = 'sleep' INTO _asleep
      FROM docs d WHERE d.assistant_id = NEW.assistant_id AND d.name = 'operating_mode';
    _urgent := coalesce(NEW.metadata::jsonb ->> 'urgent', '') = 'true'
        OR coalesce(NEW.metadata::jsonb ->> 'priority', '') ~ '^(8|9|10)(\\.0*)?$';
    PERFORM mindspace_fleet_nudge(NEW.assistant_id, NOT coalesce(_asleep, false) OR _urgent);
    RETURN NULL;
END $$;

"""


_FUNCTION_COUNT = 5
"""The functions :func:`_functions` creates (the nudge and one per trigger)."""

_TRIGGERS = (
    ("events", "AFTER INSERT", "NEW.status = 'pending'", "mindspace_fleet_on_event"),
    (
        "docs",
        "AFTER INSERT OR UPDATE",
        "NEW.name IN ('operating_mode', 'sleep_schedule')",
        "mindspace_fleet_on_mode",
    ),
    ("goals", "AFTER INSERT OR UPDATE", "NEW.status = 'active'", "mindspace_fleet_on_goal"),
    ("assistants", "AFTER INSERT", "true", "mindspace_fleet_on_assistant"),
)


async def install_triggers(conn: AsyncConnection[Any], task: str) -> bool:
    """Put the triggers on the store's tables unless they are there already, as they are.

    False if the store or the queue has no tables yet, or if the tables stayed locked
    (then the sweep serves the fleet until a later start installs them). Creating a
    trigger locks its table exclusively, so a start that finds them current touches
    nothing (hosts and workers keep running while another process starts).

    Args:
        conn: An autocommit connection to the store's database (the caller holds the
            fleet's set-up lock).
        task: The procrastinate name of the tick task.
    """
    found = await conn.execute("SELECT to_regclass('events'), to_regclass('procrastinate_jobs')")
    row = await found.fetchone()
    if row is None or row[0] is None or row[1] is None:
        return False
    functions = _functions(task)
    if await _current(conn, functions):
        return True
    try:
        async with conn.transaction():
            # Never queue every reader of these tables behind a long wait for the lock.
            await conn.execute("SET LOCAL lock_timeout = '5s'")
            # Fixed SQL of this module (no parameters): the functions, then the triggers.
            await conn.execute(functions.encode())
            for table, when, condition, function in _TRIGGERS:
                name = f"mindspace_fleet_{table}"
                await conn.execute(f"DROP TRIGGER IF EXISTS {name} ON {table}".encode())
                await conn.execute(
                    f"CREATE TRIGGER {name} {when} ON {table} FOR EACH ROW "
                    f"WHEN ({condition}) EXECUTE FUNCTION {function}()".encode()
                )
    except LockNotAvailable:
        return False
    return True


async def _current(conn: AsyncConnection[Any], functions: str) -> bool:
    """Whether every trigger is there and every function's body is this module's."""
    found = await conn.execute(
        "SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal AND tgname = ANY(%s)",
        ([f"mindspace_fleet_{table}" for table, *_ in _TRIGGERS],),
    )
    row = await found.fetchone()
    if row is None or row[0] != len(_TRIGGERS):
        return False
    found = await conn.execute("SELECT prosrc FROM pg_proc WHERE proname LIKE 'mindspace_fleet_%%'")
    bodies = {body for (body,) in await found.fetchall()}
    return all(body in functions for body in bodies) and len(bodies) == _FUNCTION_COUNT
