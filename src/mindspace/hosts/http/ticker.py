"""The background ticker: ticks each open assistant at its own rate, never overlapping.

An assistant ticks every ``Assistant.tick_rate()`` seconds: ``MINDSPACE_TICK_RATE_AWAKE``
(5 s) awake, the schedule's ``tick_rate_sleep`` or ``MINDSPACE_TICK_RATE_SLEEP`` (60 s)
asleep. The rate is read after each tick, so falling asleep slows the next one down at
once. Each assistant's tick runs as its own task, so a slow model for one assistant never
delays another; a tick still running when its next one is due is not doubled (the next
waits for a new turn). A new event nudges its assistant to tick at once while awake (and
when urgent, asleep too, so it can wake).

Scheduling uses the event loop's monotonic time, never the assistant's clock: the
engine's time-based rules read the injected clock, the cadence of ticks does not.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from mindspace.hosts.http.hub import AssistantHub

__all__ = ["BackgroundTicker"]

logger = logging.getLogger("mindspace.http")

MAX_WAIT = 1.0
"""Longest the loop waits before it looks for newly opened assistants again."""
STOP_GRACE = 10.0
"""Seconds :meth:`BackgroundTicker.stop` lets running ticks finish before cancelling them."""


class BackgroundTicker:
    """Ticks the hub's assistants on a schedule until stopped.

    Args:
        hub: Whose assistants to tick.
        monotonic: The time source for the schedule (the running loop's ``time()``).
    """

    def __init__(self, hub: AssistantHub, *, monotonic: Callable[[], float] | None = None) -> None:
        self.hub = hub
        self._monotonic = monotonic
        self._next: dict[str, float] = {}
        self._running: dict[str, asyncio.Task[None]] = {}
        self._stop = asyncio.Event()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.ticks_run = 0
        hub.on_nudge(self.nudge)

    def now(self) -> float:
        """The scheduler's current time."""
        if self._monotonic is not None:
            return self._monotonic()
        return asyncio.get_running_loop().time()

    def nudge(self, key: str) -> None:
        """Make ``key`` due now (a new event arrived)."""
        self._next[key] = float("-inf")
        self._wake.set()

    def due(self, now: float) -> list[str]:
        """The open assistants whose tick is due at ``now`` and not already running."""
        return [
            key
            for key in self.hub.open_keys()
            if self._next.get(key, float("-inf")) <= now and key not in self._running
        ]

    def run_due(self, now: float) -> list[str]:
        """Start a tick task for every due assistant; returns their keys."""
        started = self.due(now)
        for key in started:
            self._next[key] = now  # a nudge from here on asks for another tick
            self._running[key] = asyncio.create_task(self._tick(key), name=f"tick {key}")
        return started

    async def drain(self) -> None:
        """Wait until every running tick has finished."""
        while self._running:
            await asyncio.gather(*self._running.values(), return_exceptions=True)

    async def _tick(self, key: str) -> None:
        try:
            await self.hub.tick(key)
            self.ticks_run += 1
        except Exception:
            logger.exception("The background tick of %r failed", key)
        finally:
            # A nudge during the tick (a new event) keeps the assistant due at once.
            if self._next.get(key) != float("-inf"):
                self._next[key] = self.now() + self._rate(key)
            self._running.pop(key, None)
            self._wake.set()

    def _rate(self, key: str) -> float:
        try:
            return self.hub.get(key).tick_rate()
        except Exception:
            logger.exception("Could not read the tick rate of %r; using the awake rate", key)
            return self.hub.settings.tick_rate_awake

    async def run(self) -> None:
        """The loop: start due ticks, then wait for the next one (or a nudge, or stop)."""
        while not self._stop.is_set():
            now = self.now()
            try:
                self.hub.open_all()
                self.run_due(now)
            except Exception:
                logger.exception("The ticker could not schedule ticks; trying again")
            pending = [t for k, t in self._next.items() if k not in self._running]
            wait = min([MAX_WAIT, *(max(0.0, t - now) for t in pending)])
            self._wake.clear()
            waiters = [asyncio.ensure_future(self._stop.wait())]
            waiters.append(asyncio.ensure_future(self._wake.wait()))
            try:
                await asyncio.wait(waiters, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiter in waiters:
                    waiter.cancel()

    def start(self) -> None:
        """Run the loop as a task on the running event loop."""
        if self._task is None or self._task.done():
            self._stop.clear()
            self._task = asyncio.create_task(self.run(), name="mindspace ticker")

    async def stop(self) -> None:
        """Stop the loop; running ticks get :data:`STOP_GRACE` seconds to finish."""
        self._stop.set()
        if self._task is not None:
            await self._task
            self._task = None
        if self._running:
            _, late = await asyncio.wait(list(self._running.values()), timeout=STOP_GRACE)
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)
