"""``mindspace serve --ticks queue``: the HTTP server enqueues ticks instead of running them.

:class:`QueueDispatch` is the server's :class:`~mindspace.engine.scheduler.TickDispatch`
when workers run the ticks. It hears every ``event_queued`` and ``mode_changed`` notice of the
assistants the server has open and enqueues a prompt tick (pulling a waiting one
forward), once per assistant at a time: nudges that arrive while one is being enqueued
are folded into it, and the queue's ``queueing_lock`` folds those of other servers. An
assistant the server opens after it started (created through it, or found in the store)
gets one at once, for the events posted before its notices were heard. The workers' sweep
(:mod:`mindspace.fleet.sweep`) is the guarantee behind this: whatever the server misses
is ticked within one heartbeat; the server makes it sooner.

Once the fleet's triggers are on the store (:mod:`mindspace.fleet.triggers`, put there
by the first worker or by this server's start), every write defers its own tick in its
commit, and this dispatch only opens the queue: it is the path for a store without them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from functools import partial

from mindspace.engine.notices import Notice
from mindspace.engine.scheduler import TickSource
from mindspace.fleet.queue import Fleet

__all__ = ["QueueDispatch"]

logger = logging.getLogger("mindspace.fleet")

WATCH_INTERVAL = 1.0
"""Seconds between looks for assistants the server opened since (to hear their events)."""


class QueueDispatch:
    """Enqueues ticks for the worker fleet when events arrive (see the module docstring).

    Args:
        source: The server's assistants (the HTTP hub).
        fleet: The queue (opened and closed by :meth:`start` and :meth:`stop`).
        asleep: Whether an assistant sleeps now: a non-urgent event does not hurry its
            next tick (the engine's rule; a sleeping assistant has a tick scheduled).
    """

    def __init__(
        self,
        source: TickSource,
        fleet: Fleet,
        *,
        asleep: Callable[[str], bool] | None = None,
    ) -> None:
        self.source = source
        self.fleet = fleet
        self._asleep = asleep
        self._watched: set[str] = set()
        self._in_flight: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._watcher: asyncio.Task[None] | None = None
        self._opened = asyncio.Event()
        self.enqueued = 0

    def start(self) -> None:
        """Open the queue and listen for events (on the running loop)."""
        if self._watcher is None or self._watcher.done():
            self._watcher = asyncio.create_task(self._watch(), name="mindspace queue dispatch")

    async def stop(self) -> None:
        """Finish the enqueues under way, then close the queue."""
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
            self._watcher = None
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        with contextlib.suppress(Exception):
            await self.fleet.app.close_async()

    def nudge(self, key: str, *, urgent: bool = False) -> None:
        """A new event for ``key``: enqueue a prompt tick (deduplicated).

        Nothing to do once the fleet's triggers are on the store: the event's own commit
        deferred its tick (and enqueueing beside it would only contend for its lock).
        """
        if self.fleet.triggered:
            return
        if not urgent and self._asleep is not None:
            try:
                if self._asleep(key):
                    return
            except Exception:
                logger.exception("Could not read the mode of %r; enqueueing its tick", key)
        if key in self._in_flight:
            return  # the enqueue under way serves this event too: its job has not run yet
        self._in_flight.add(key)
        task = asyncio.create_task(self._enqueue(key), name=f"enqueue tick {key}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _enqueue(self, key: str) -> None:
        try:
            await self._opened.wait()
            outcome = await self.fleet.schedule(key, 0.0, prompt=True)
            self.enqueued += 1
            logger.debug("Tick of %r: %s", key, outcome)
        except Exception:
            logger.exception("Could not enqueue a tick of %r; a worker will pick it up later", key)
        finally:
            self._in_flight.discard(key)

    async def _watch(self) -> None:
        try:
            await self.fleet.prepare()
            await self.fleet.app.open_async()
        except Exception:
            logger.exception("Could not open the task queue; events will not start ticks")
            return
        self._opened.set()
        if self.fleet.triggered:
            logger.info("Ticks are deferred by the store's own commits (the fleet's triggers)")
            return
        first = True
        while True:
            try:
                for key in self.source.open_keys():
                    if key not in self._watched:
                        self._watched.add(key)
                        self.source.watch(key, partial(self._heard, key))
                        if not first:
                            # Opened since (created through this server, most often):
                            # events posted before this look went unheard, and one
                            # prompt tick serves them all. The assistants there at start
                            # are the workers' (their sweep); this only makes it sooner.
                            self.nudge(key, urgent=True)
                first = False
            except Exception:
                logger.exception("Could not list the assistants to watch; trying again")
            await asyncio.sleep(WATCH_INTERVAL)

    def _heard(self, key: str, notice: Notice) -> None:
        if notice.kind == "event_queued":
            self.nudge(key, urgent=bool(notice.data.get("urgent")))
        elif notice.kind == "mode_changed":
            # put to sleep or woken by a host: its ticks follow the new mode's rate now
            self.nudge(key, urgent=True)
