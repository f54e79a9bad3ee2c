"""The worker fleet's composition: ticks queued in PostgreSQL and the workers that run them.

Split from :mod:`mindspace.runtime` (which builds stores, models and embedders) because the
fleet composes those into a process of its own. :mod:`mindspace.fleet` (procrastinate on
the store's PostgreSQL) is an adapter: it is imported when a worker or a queue is built,
and hosts reach it only through this module. See docs/scale-out.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mindspace.config import Settings
from mindspace.engine import Assistant
from mindspace.errors import ConfigError
from mindspace.runtime import Runtime

if TYPE_CHECKING:
    from mindspace.engine.scheduler import TickDispatch, TickSource

__all__ = ["queue_ticks", "require_queue_database", "run_worker"]


class _RuntimeAssistants:
    """A worker's assistants: one composition root, its model and embedder shared by all."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime.prepare()

    def keys(self) -> list[str]:
        return self.runtime.keys()

    def open(self, key: str) -> Assistant:
        return self.runtime.open(key, create=False)

    def close(self) -> None:
        self.runtime.close()


def _fleet_on(settings: Settings, db: str | Path | None) -> tuple[str, Any]:
    """The fleet's database URL, checked to be PostgreSQL, and the fleet module.

    Raises:
        ConfigError: the database is not PostgreSQL, or the ``fleet`` extra is missing.
    """
    url = settings.resolved_database_url(db)
    try:
        import mindspace.fleet as fleet
    except ImportError as exc:
        raise ConfigError(
            "The worker fleet needs the 'fleet' extra: pip install -e '.[fleet]' in a "
            "mindspace clone "
            f"(missing: {exc.name or exc})."
        ) from None
    fleet.require_postgres(url)
    return url, fleet


def run_worker(
    settings: Settings,
    db: str | Path | None = None,
    *,
    concurrency: int = 4,
    name: str = "worker",
    heartbeat: float = 2.0,
    stall_after: float = 10.0,
) -> int:
    """Run a fleet worker for every assistant in ``db`` until SIGTERM/SIGINT.

    Returns the ticks it ran. See docs/scale-out.md.

    Raises:
        ConfigError: the database is SQLite (ticks run in ``mindspace serve``), or the
            ``fleet`` extra is missing.
        StorageError: the database cannot be reached.
    """
    url, fleet = _fleet_on(settings, db)
    options = fleet.WorkerOptions(
        concurrency=concurrency,
        heartbeat=heartbeat,
        stall_after=stall_after,
        name=name,
        awake_rate=settings.tick_rate_awake,
    )

    def open_source() -> _RuntimeAssistants:
        return _RuntimeAssistants(Runtime.from_settings(settings, url))

    ticks: int = asyncio.run(fleet.run_worker(url, open_source, options))
    return ticks


def require_queue_database(settings: Settings, db: str | Path | None = None) -> None:
    """Check that ``db`` can hold the fleet's queue: PostgreSQL, reachable.

    Raises:
        ConfigError: the database is not PostgreSQL, or the ``fleet`` extra is missing.
        StorageError: the database cannot be reached.
    """
    url, fleet = _fleet_on(settings, db)
    fleet.connection.check_reachable(url)


def queue_ticks(
    source: TickSource,
    settings: Settings,
    db: str | Path | None = None,
    *,
    asleep: Callable[[str], bool] | None = None,
) -> TickDispatch:
    """A tick dispatch that enqueues the ticks of ``source``'s assistants for the fleet.

    For ``mindspace serve --ticks queue``: events heard from ``source`` enqueue prompt
    ticks (``asleep`` tells which assistants only an urgent event should hurry).

    Raises:
        ConfigError: the database is not PostgreSQL, or the ``fleet`` extra is missing.
        StorageError: the database cannot be reached.
    """
    url, fleet = _fleet_on(settings, db)
    queue = fleet.Fleet(url, awake_rate=settings.tick_rate_awake)
    dispatch: TickDispatch = fleet.QueueDispatch(source, queue, asleep=asleep)
    return dispatch
