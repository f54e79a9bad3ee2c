"""``mindspace worker``: run the ticks of every assistant in a PostgreSQL database.

Start-up, in order: refuse SQLite and unreachable databases with one clear line; under a
PostgreSQL advisory lock (so that workers starting together do it once), create
procrastinate's tables if missing and migrate the store; sweep once (a tick for every
assistant that is not idle: a restarted fleet resumes where it stopped); then run jobs
until SIGTERM or SIGINT, finishing the ticks under way.

Beside procrastinate's worker loop, each worker runs a reaper every heartbeat: it sweeps
(:mod:`mindspace.fleet.sweep`: assistants created, or given an event, a goal or a
schedule by any process since, get their tick within one heartbeat), and retries the
ticks of dead workers: procrastinate marks every worker with a heartbeat, and a ``tick``
job still "doing" on a worker whose heartbeat is older than ``stall_after`` seconds
(killed, or its machine gone) is retried on a live one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from procrastinate import exceptions as queue_errors
from procrastinate.jobs import Status

from mindspace.engine.assistant import Assistant
from mindspace.engine.tick import TickResult
from mindspace.fleet.connection import check_reachable, require_postgres, shown
from mindspace.fleet.queue import TICK_TASK, Fleet
from mindspace.fleet.sweep import Sweeper
from mindspace.fleet.triggers import WORKER_APP

__all__ = ["AssistantSource", "WorkerOptions", "run_worker"]

logger = logging.getLogger("mindspace.fleet")


class AssistantSource(Protocol):
    """The assistants of one database, as the composition root opens them."""

    def keys(self) -> list[str]:
        """Every assistant's key."""
        ...

    def open(self, key: str) -> Assistant:
        """Open the assistant ``key`` (with the configured model and embedder)."""
        ...

    def close(self) -> None:
        """Release the store."""
        ...


@dataclass(frozen=True)
class WorkerOptions:
    """How one worker process runs.

    Attributes:
        concurrency: Ticks this process runs at once (of different assistants).
        heartbeat: Seconds between the worker's heartbeats (and looks for stalled jobs).
        stall_after: A worker silent this long is taken for dead; its tick is retried.
        poll: Most seconds between looks for due jobs (new jobs wake workers at once).
        grace: Seconds a stopping worker lets running ticks finish.
        name: The worker's name in the queue and its log lines.
        awake_rate: The tick rate when a tick tells none (the settings' awake rate).
        max_backoff: The longest wait after failed ticks.
    """

    concurrency: int = 4
    heartbeat: float = 2.0
    stall_after: float = 10.0
    poll: float = 1.0
    grace: float = 30.0
    name: str = "worker"
    awake_rate: float = 5.0
    max_backoff: float = 300.0


def _log_tick(key: str, result: TickResult, seconds: float) -> None:
    if result.kind == "idle":
        logger.debug("%s: idle tick (%.2f s)", key, seconds)
        return
    what = f"{result.kind} tick {result.status}"
    if result.event_id:
        what += f" ({result.event_id})"
    if result.error:
        what += f": {result.error}"
    logger.info("%s: %s in %.2f s", key, what, seconds)


async def _set_up(fleet: Fleet, open_source: Callable[[], AssistantSource]) -> AssistantSource:
    """Create the queue's tables if missing and open the store, one worker at a time."""
    source: AssistantSource | None = None

    def open_it() -> None:
        nonlocal source
        source = open_source()

    await fleet.prepare(open_it)
    assert source is not None
    return source


PROGRESS_EVERY = 60.0
"""Seconds between a worker's progress lines."""


async def _reap(fleet: Fleet, sweeper: Sweeper, options: WorkerOptions) -> None:
    """Every heartbeat: sweep, retry the ticks of dead workers (module docstring); log."""
    manager = fleet.app.job_manager
    last_report, last_ticks = time.monotonic(), fleet.ticks_run
    while True:
        await asyncio.sleep(options.heartbeat)
        try:
            swept = await sweeper.sweep()
            if swept.scheduled:
                logger.debug("%s: swept, ticks scheduled for %s", options.name, swept.scheduled)
        except Exception:
            logger.exception("Could not look for assistants that need a tick; trying again")
        now = time.monotonic()
        if now - last_report >= PROGRESS_EVERY:
            ran = fleet.ticks_run - last_ticks
            logger.info(
                "%s: %d ticks in the last %.0f s (%.1f/s)",
                options.name,
                ran,
                now - last_report,
                ran / (now - last_report),
            )
            last_report, last_ticks = now, fleet.ticks_run
        try:
            stalled = await manager.get_stalled_jobs(
                task_name=TICK_TASK, seconds_since_heartbeat=options.stall_after
            )
            for job in stalled:
                key = str(job.task_kwargs.get("assistant"))
                try:
                    await manager.retry_job(job)
                except queue_errors.UniqueViolation:
                    # A tick of this assistant waits already (queueing_lock): end the dead
                    # one, and make sure the waiting one runs now.
                    await manager.finish_job_by_id_async(job.id or 0, Status.FAILED, False)
                    await fleet.schedule(key, 0.0, prompt=True)
                except queue_errors.ConnectorException:
                    continue  # another worker retried it first
                logger.warning(
                    "%s: its tick was running on a worker that stopped answering (killed?); "
                    "retrying it here",
                    key,
                )
        except Exception:
            logger.exception("Could not look for stalled ticks; trying again")


async def run_worker(
    url: str,
    open_source: Callable[[], AssistantSource],
    options: WorkerOptions | None = None,
) -> int:
    """Run one worker until SIGTERM or SIGINT; returns the ticks it ran.

    Args:
        url: The store's database (``postgresql+psycopg://...``).
        open_source: Opens the store (called once, under the set-up lock).
        options: How to run.

    Raises:
        ConfigError: ``url`` is not PostgreSQL (SQLite runs ticks in ``mindspace serve``).
        StorageError: the database cannot be reached.
    """
    options = options or WorkerOptions()
    require_postgres(url)
    # Every connection of this process (the store's and the queue's) names itself a
    # worker: the fleet's triggers skip a tick's own writes (mindspace.fleet.triggers).
    os.environ["PGAPPNAME"] = WORKER_APP
    await asyncio.to_thread(check_reachable, url)
    source: AssistantSource | None = None
    fleet = Fleet(
        url,
        awake_rate=options.awake_rate,
        max_backoff=options.max_backoff,
        pool_size=options.concurrency + 3,
        on_tick=_log_tick,
    )
    try:
        source = await _set_up(fleet, open_source)
        fleet.open_with(source.open)
        async with fleet.app.open_async():
            started = time.perf_counter()
            # The first sweep sees every assistant: a restarted fleet resumes here.
            sweeper = Sweeper(fleet)
            swept = await sweeper.sweep()
            total = len(await asyncio.to_thread(source.keys))
            idle = swept.jobless - len(swept.scheduled) - len(swept.failed)
            logger.info(
                "%s: %d assistants in %s; %d need ticks, %d are idle (%.1f s). "
                "Running up to %d ticks at once; press Ctrl+C to stop.",
                options.name,
                total,
                shown(url),
                total - idle,
                idle,
                time.perf_counter() - started,
                options.concurrency,
            )
            reaper = asyncio.create_task(_reap(fleet, sweeper, options), name="mindspace reaper")
            try:
                await fleet.app.run_worker_async(
                    concurrency=options.concurrency,
                    name=options.name,
                    wait=True,
                    fetch_job_polling_interval=options.poll,
                    abort_job_polling_interval=max(options.poll, 5.0),
                    listen_notify=True,
                    delete_jobs="successful",
                    install_signal_handlers=True,
                    update_heartbeat_interval=options.heartbeat,
                    stalled_worker_timeout=options.stall_after,
                    shutdown_graceful_timeout=options.grace,
                )
            finally:
                reaper.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await reaper
        logger.info("%s stopped after %d ticks.", options.name, fleet.ticks_run)
        return fleet.ticks_run
    finally:
        if source is not None:
            source.close()
