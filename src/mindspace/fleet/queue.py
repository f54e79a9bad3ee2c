"""The queue: one procrastinate ``tick`` job per assistant, each scheduling the next.

Rules (docs/scale-out.md, "The fleet's rules"):

* every job of an assistant carries ``lock=<key>``: procrastinate starts no job while
  another with the same lock is running, so one assistant's ticks never overlap, on any
  worker;
* every job carries ``queueing_lock=<key>``: at most one job of an assistant waits.
  Scheduling when one waits already is "already scheduled" (``AlreadyEnqueued``); a
  prompt request (an event) pulls the waiting job forward to now;
* a finished tick schedules the next by the engine's rule
  (:func:`~mindspace.engine.scheduler.follow_up_delay`): at once after an event, the
  result's rate otherwise (awake 5 s, asleep 60 s), with backoff after failures, and
  nothing at all when the assistant is idle (:func:`is_idle`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, Literal

import psycopg
from procrastinate import App, PsycopgConnector
from procrastinate.exceptions import AlreadyEnqueued

from mindspace.engine.assistant import Assistant
from mindspace.engine.scheduler import follow_up_delay
from mindspace.engine.tick import TickResult
from mindspace.fleet.connection import conninfo_of
from mindspace.fleet.triggers import install_triggers

__all__ = ["SETUP_LOCK", "TICK_TASK", "Fleet", "Scheduled", "is_idle"]

logger = logging.getLogger("mindspace.fleet")

SETUP_LOCK = 0x6D696E64
"""The advisory lock ("mind") held while one process creates the queue's tables."""

TICK_TASK = "mindspace.tick"
"""The procrastinate task name of a tick (its only argument: ``assistant``, the key)."""

Scheduled = Literal["scheduled", "already scheduled", "pulled forward"]

# Brings an assistant's waiting job forward to now and wakes listening workers (the
# insert trigger's notification; an UPDATE sends none).
_PULL_FORWARD = """
WITH moved AS (
    UPDATE procrastinate_jobs SET scheduled_at = now()
     WHERE queueing_lock = %(lock)s AND status = 'todo' AND scheduled_at > now()
    RETURNING id
)
SELECT id, pg_notify(
    'procrastinate_any_queue_v1', json_build_object('type', 'job_inserted', 'job_id', id)::text
) FROM moved
"""


async def _autocommit(conn: psycopg.AsyncConnection[Any]) -> None:
    """Put a new connection of the queue's pool in autocommit (the ``configure`` hook)."""
    await conn.set_autocommit(True)


def is_idle(assistant: Assistant, *, refresh: bool = True, open_events: int | None = None) -> bool:
    """Whether ``assistant`` needs no tick until something happens to it.

    The rule is the engine's read model (:meth:`AssistantViews.is_idle
    <mindspace.engine.views.AssistantViews.is_idle>`; ``open_events`` as there). An idle
    assistant costs the fleet nothing per period; a host's next write that makes a tick
    due defers it (:mod:`mindspace.fleet.triggers`).
    """
    return assistant.views.is_idle(refresh=refresh, open_events=open_events)


class Fleet:
    """The procrastinate app on the store's database, with the ``tick`` task.

    Args:
        url: The store's SQLAlchemy URL (``postgresql+psycopg://...``).
        open_assistant: Opens an assistant by key (a worker calls it once per key and
            keeps the assistant for the process's life).
        awake_rate: The rate of a tick whose result tells none.
        max_backoff: The longest wait after failed ticks.
        pool_size: Most connections this process opens for the queue.
        on_tick: Called after every tick with the key, the result and its seconds.
    """

    def __init__(
        self,
        url: str,
        *,
        open_assistant: Callable[[str], Assistant] | None = None,
        awake_rate: float = 5.0,
        max_backoff: float = 300.0,
        pool_size: int = 4,
        on_tick: Callable[[str, TickResult, float], None] | None = None,
    ) -> None:
        self.url = url
        self.awake_rate = awake_rate
        self.max_backoff = max_backoff
        self.on_tick = on_tick
        self._open_assistant = open_assistant
        self._assistants: dict[str, Assistant] = {}
        # Autocommit: every query of the queue is one statement (fetch, finish, defer...),
        # and a pooled connection in a transaction costs a BEGIN and a COMMIT round trip
        # around each (two of the queue's ~4 round trips a job; bench/RESULTS.md, "Worker
        # fleet CPU a tick, round 5").
        connector = PsycopgConnector(
            conninfo=conninfo_of(url),
            min_size=1,
            max_size=max(2, pool_size),
            configure=_autocommit,
        )
        self.app = App(connector=connector)
        self.task = self.app.task(name=TICK_TASK, pass_context=False)(self._tick)
        self.ticks_run = 0
        self.triggered = False
        """Whether :meth:`prepare` put the triggers on the store's tables (host writes then
        defer their ticks themselves)."""
        self.idle_at: dict[str, int] = {}
        """The revision at which this process's last tick of an assistant found it idle
        (the sweep need not ask again while the revision stays there)."""

    async def prepare(self, then: Callable[[], None] | None = None) -> None:
        """Create procrastinate's tables if missing, call ``then`` (in a thread), add triggers.

        All under a PostgreSQL advisory lock, so processes starting together create the
        tables once and migrate the store one at a time; an existing queue is left as it
        is. The triggers (:mod:`mindspace.fleet.triggers`) defer a tick in the commit of
        every host's write that makes one due.
        """
        async with await psycopg.AsyncConnection.connect(
            conninfo_of(self.url), autocommit=True
        ) as conn:
            await conn.execute("SELECT pg_advisory_lock(%s)", (SETUP_LOCK,))
            try:
                found = await conn.execute("SELECT to_regclass('procrastinate_jobs')")
                row = await found.fetchone()
                if row is None or row[0] is None:
                    logger.info("Creating the task queue's tables (procrastinate)")
                    schema = self.app.schema_manager.get_schema()
                    async with conn.transaction():
                        # The package's own schema file: trusted SQL, no parameters.
                        await conn.execute(schema.encode())
                if then is not None:
                    await asyncio.to_thread(then)
                # After the store's migration (``then``): the triggers are on its tables.
                self.triggered = await install_triggers(conn, TICK_TASK)
                if not self.triggered:
                    logger.warning(
                        "The store has no tables yet: ticks are deferred by the sweep until "
                        "a worker restarts on the migrated store"
                    )
            finally:
                await conn.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK,))

    # -- scheduling ----------------------------------------------------------------------
    async def schedule(
        self, key: str, delay: float = 0.0, *, failures: int = 0, prompt: bool = False
    ) -> Scheduled:
        """Make sure a tick of ``key`` waits, due in ``delay`` seconds.

        Args:
            key: The assistant.
            delay: Seconds from now.
            failures: Failed ticks in a row so far (the next failure backs off further).
            prompt: A waiting job due later is pulled forward to now (a new event).
        """
        options: dict[str, Any] = {"lock": key, "queueing_lock": key}
        if delay > 0:
            options["schedule_in"] = {"seconds": delay}
        try:
            await self.task.configure(**options).defer_async(assistant=key, failures=failures)
        except AlreadyEnqueued:
            if prompt and delay <= 0:
                rows = await self.app.connector.execute_query_all_async(_PULL_FORWARD, lock=key)
                if rows:
                    return "pulled forward"
            return "already scheduled"
        return "scheduled"

    # -- the task ------------------------------------------------------------------------
    def open_with(self, open_assistant: Callable[[str], Assistant]) -> None:
        """Open assistants with ``open_assistant`` from now on (a worker, once its store is up)."""
        self._open_assistant = open_assistant

    def assistant(self, key: str) -> Assistant:
        """The assistant ``key``, opened once per process."""
        assistant = self._assistants.get(key)
        if assistant is None:
            if self._open_assistant is None:
                raise RuntimeError("This Fleet only enqueues ticks; it was given no opener")
            assistant = self._open_assistant(key)
            self._assistants[key] = assistant
        return assistant

    async def _tick(self, assistant: str, failures: int = 0) -> None:
        key = assistant
        started = time.perf_counter()
        try:
            result = await self.assistant(key).tick()
        except Exception:
            failures += 1
            try:
                rate = self.assistant(key).views.tick_rate()
            except Exception:  # the store itself may be what failed
                rate = self.awake_rate
            delay = follow_up_delay(
                TickResult(kind="idle", status="failed", rate=rate),
                failures,
                awake_rate=self.awake_rate,
                max_backoff=self.max_backoff,
            )
            logger.exception(
                "The tick of %r crashed (failure %d in a row); next try in %.0f s",
                key,
                failures,
                delay,
            )
            await self.schedule(key, delay, failures=failures)
            raise
        self.ticks_run += 1
        failures = failures + 1 if result.status == "failed" else 0
        if self.on_tick is not None:
            self.on_tick(key, result, time.perf_counter() - started)
        # The engine follows an event tick at once because more events may wait; when
        # none does (nor anything else), that tick would only find the assistant idle.
        # With the triggers on, an event enqueued while this tick ran deferred a tick of
        # its own, so the events this tick left are all it must look at: no inbox read.
        left = result.events_left if self.triggered else None
        if result.status != "failed" and is_idle(
            self.assistant(key), refresh=False, open_events=left
        ):
            logger.debug("%s is idle: no tick scheduled until something happens", key)
            self.idle_at[key] = self.assistant(key).revision
            return
        delay = follow_up_delay(
            result, failures, awake_rate=self.awake_rate, max_backoff=self.max_backoff
        )
        await self.schedule(key, delay, failures=failures)
