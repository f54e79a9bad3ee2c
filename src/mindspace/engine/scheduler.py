"""When each assistant ticks: one scheduling policy, driven by every host.

:class:`TickPolicy` is pure bookkeeping on a monotonic clock the driver passes in (never
the assistant's :class:`~mindspace.clock.Clock`: the engine's time-based rules read the
injected clock, the cadence of ticks does not). It decides:

* **what is due**: an assistant ticks every ``TickResult.rate`` seconds (the awake rate,
  or the sleep rate while asleep), read after each tick so falling asleep slows the next
  one at once; never two ticks of one assistant at a time;
* **nudges**: a new event makes an awake assistant due now; a sleeping one only for an
  urgent event (so it can wake); a nudge during a running tick asks for another right
  after it;
* **follow-ups**: a tick that handled an event is followed at once by the next (more
  events may wait);
* **backoff**: a tick that crashed or failed waits ``rate * 2**(n-1)`` seconds after the
  n-th failure in a row (at most ``max_backoff``), so a dead model is not hammered.

Drivers only start ticks when the policy says so: :class:`AsyncTickDriver` (below) runs
on an asyncio loop for the HTTP server; the Evennia host polls the same policy from its
reactor. A distributed driver (the worker fleet, ``mindspace.fleet``) follows the same
rules through :func:`follow_up_delay` and :func:`backoff_delay`.

Hosts that tick in the background take a :class:`TickDispatch`: the in-process
:class:`AsyncTickDriver`, or the fleet's queue dispatch (``mindspace serve --ticks queue``),
which enqueues ticks for worker processes instead of running them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Protocol

from mindspace.engine.notices import Notice

if TYPE_CHECKING:
    from mindspace.engine.tick import TickResult

__all__ = [
    "AsyncTickDriver",
    "TickDispatch",
    "TickPolicy",
    "TickSource",
    "backoff_delay",
    "follow_up_delay",
]

logger = logging.getLogger("mindspace.engine")

NEVER = float("inf")
NOW = float("-inf")


def backoff_delay(rate: float, failures: int, max_backoff: float = 300.0) -> float:
    """Seconds to wait after the ``failures``-th failed tick in a row: ``rate * 2**(n-1)``.

    At most ``max_backoff``, never less than ``rate`` (a failing assistant never ticks
    faster than a healthy one).
    """
    delay = min(rate * 2.0 ** min(max(failures, 1) - 1, 16), max_backoff)
    return max(delay, rate)


def follow_up_delay(
    result: TickResult, failures: int, *, awake_rate: float, max_backoff: float = 300.0
) -> float:
    """Seconds until the tick after ``result`` (the policy's rule, for any driver).

    A tick that handled an event is followed at once (more may wait); a failed one backs
    off (``failures`` counts it); any other waits the result's rate.
    """
    rate = result.rate if result.rate > 0 else awake_rate
    if result.status == "failed":
        return backoff_delay(rate, failures, max_backoff)
    if result.kind == "event" and result.status == "done":
        return 0.0
    return rate


@dataclass
class _Slot:
    rate: float
    next_due: float = NOW
    running: bool = False
    again: bool = False
    failures: int = 0
    asleep: bool = False


class TickPolicy:
    """The schedule of a set of assistants (see the module docstring).

    Args:
        awake_rate: Seconds between ticks before an assistant's first tick tells its rate.
        max_backoff: The longest wait after repeated failures.
    """

    def __init__(self, *, awake_rate: float, max_backoff: float = 300.0) -> None:
        self.awake_rate = awake_rate
        self.max_backoff = max_backoff
        self._slots: dict[str, _Slot] = {}

    def add(self, key: str) -> None:
        """Schedule ``key`` (due at once); adding it again changes nothing."""
        self._slots.setdefault(key, _Slot(rate=self.awake_rate))

    def remove(self, key: str) -> None:
        """Stop scheduling ``key``."""
        self._slots.pop(key, None)

    def keys(self) -> list[str]:
        """The scheduled assistants."""
        return list(self._slots)

    def due(self, now: float) -> list[str]:
        """The assistants whose tick is due at ``now`` and not running."""
        return [k for k, s in self._slots.items() if not s.running and s.next_due <= now]

    def is_running(self, key: str) -> bool:
        """Whether a tick of ``key`` is running."""
        slot = self._slots.get(key)
        return slot is not None and slot.running

    def next_due(self, key: str) -> float:
        """When ``key`` is next due (``-inf``: now; ``inf``: not scheduled)."""
        slot = self._slots.get(key)
        return slot.next_due if slot is not None else NEVER

    def rate(self, key: str) -> float:
        """The rate of ``key`` as of its last tick."""
        slot = self._slots.get(key)
        return slot.rate if slot is not None else self.awake_rate

    def failures(self, key: str) -> int:
        """Failed ticks of ``key`` in a row."""
        slot = self._slots.get(key)
        return slot.failures if slot is not None else 0

    def wait(self, now: float) -> float:
        """Seconds until the earliest not-running assistant is due (``inf`` if none)."""
        waiting = [s.next_due for s in self._slots.values() if not s.running]
        return max(0.0, min(waiting) - now) if waiting else NEVER

    def start(self, key: str) -> None:
        """A tick of ``key`` starts now."""
        self.add(key)
        slot = self._slots[key]
        slot.running, slot.again = True, False

    def nudge(self, key: str, *, urgent: bool = False) -> bool:
        """A new event for ``key``: returns whether it became due now (or right after)."""
        slot = self._slots.get(key)
        if slot is None or (slot.asleep and not urgent):
            return False
        if slot.running:
            slot.again = True
        else:
            slot.next_due = NOW
        return True

    def finish(self, key: str, now: float, result: TickResult) -> None:
        """A tick of ``key`` ended with ``result``; schedule the next one."""
        slot = self._slots.get(key)
        if slot is None:
            return
        slot.running = False
        slot.rate = result.rate if result.rate > 0 else self.awake_rate
        slot.asleep = result.mode == "sleep"
        if result.status == "failed":
            self._back_off(slot, now)
        else:
            slot.failures = 0
            followed = result.kind == "event" and result.status == "done"
            slot.next_due = now if followed else now + slot.rate
        if slot.again:
            slot.again, slot.next_due = False, now

    def crash(self, key: str, now: float) -> None:
        """A tick of ``key`` raised; back off before the next one."""
        slot = self._slots.get(key)
        if slot is None:
            return
        slot.running = False
        self._back_off(slot, now)
        if slot.again:
            slot.again, slot.next_due = False, now

    def _back_off(self, slot: _Slot, now: float) -> None:
        slot.failures += 1
        slot.next_due = now + backoff_delay(slot.rate, slot.failures, self.max_backoff)


class TickSource(Protocol):
    """What an :class:`AsyncTickDriver` ticks: a host's set of open assistants."""

    def open_keys(self) -> Sequence[str]:
        """The assistants to schedule (a host may open more over time)."""
        ...

    async def tick(self, key: str) -> TickResult:
        """Run one tick of ``key``."""
        ...

    def watch(self, key: str, listener: Callable[[Notice], None]) -> None:
        """Call ``listener`` with every notice of ``key`` (to hear of new events)."""
        ...


class TickDispatch(Protocol):
    """How a host's assistants get ticked in the background while it runs.

    :class:`AsyncTickDriver` ticks them in this process; the worker fleet's queue
    dispatch enqueues their ticks for ``mindspace worker`` processes.
    """

    def start(self) -> None:
        """Begin (on the running event loop)."""
        ...

    async def stop(self) -> None:
        """End; running in-process ticks get a grace period."""
        ...

    def nudge(self, key: str, *, urgent: bool = False) -> None:
        """A new event for ``key``: tick it soon (the dispatch also hears notices itself)."""
        ...


MAX_WAIT = 1.0
"""Longest the driver waits before it looks for newly opened assistants again."""
STOP_GRACE = 10.0
"""Seconds :meth:`AsyncTickDriver.stop` lets running ticks finish before cancelling them."""


class AsyncTickDriver:
    """Runs :class:`TickPolicy` on an asyncio loop: each due tick as its own task.

    A slow model for one assistant never delays another; an assistant's own ticks never
    overlap.

    Args:
        source: The assistants to tick.
        policy: The schedule (a new one at ``awake_rate`` 5 s by default).
        monotonic: The schedule's time source (the running loop's ``time()``).
    """

    def __init__(
        self,
        source: TickSource,
        policy: TickPolicy,
        *,
        monotonic: Callable[[], float] | None = None,
    ) -> None:
        self.source = source
        self.policy = policy
        self._monotonic = monotonic
        self._running: dict[str, asyncio.Task[None]] = {}
        self._watched: set[str] = set()
        self._stop = asyncio.Event()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.ticks_run = 0

    def now(self) -> float:
        """The schedule's current time."""
        if self._monotonic is not None:
            return self._monotonic()
        return asyncio.get_running_loop().time()

    def nudge(self, key: str, *, urgent: bool = False) -> None:
        """A new event for ``key`` (the driver hears of queued events by itself)."""
        if self.policy.nudge(key, urgent=urgent):
            self._wake.set()

    def schedule(self) -> None:
        """Add the source's assistants not yet scheduled, and listen for their events."""
        for key in self.source.open_keys():
            if key not in self._watched:
                self._watched.add(key)
                self.policy.add(key)
                self.source.watch(key, partial(self._heard, key))

    def run_due(self, now: float) -> list[str]:
        """Start a tick task for every due assistant; returns their keys."""
        started = self.policy.due(now)
        for key in started:
            self.policy.start(key)
            self._running[key] = asyncio.create_task(self._tick(key), name=f"tick {key}")
        return started

    async def drain(self) -> None:
        """Wait until every running tick has finished."""
        while self._running:
            await asyncio.gather(*self._running.values(), return_exceptions=True)

    async def run(self) -> None:
        """The loop: start due ticks, then wait for the next one (or a nudge, or stop)."""
        while not self._stop.is_set():
            try:
                self.schedule()
                self.run_due(self.now())
            except Exception:
                logger.exception("The ticker could not schedule ticks; trying again")
            wait = min(MAX_WAIT, self.policy.wait(self.now()))
            self._wake.clear()
            waiters = [
                asyncio.ensure_future(self._stop.wait()),
                asyncio.ensure_future(self._wake.wait()),
            ]
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

    def _heard(self, key: str, notice: Notice) -> None:
        if notice.kind == "event_queued":
            self.nudge(key, urgent=bool(notice.data.get("urgent")))

    async def _tick(self, key: str) -> None:
        try:
            result = await self.source.tick(key)
        except Exception:
            logger.exception("The background tick of %r failed", key)
            self.policy.crash(key, self.now())
        else:
            self.ticks_run += 1
            self.policy.finish(key, self.now(), result)
        finally:
            self._running.pop(key, None)
            self._wake.set()
