"""The bridge between Twisted's reactor thread and mindspace's asyncio loop.

Evennia runs Twisted's epoll reactor, and Django refuses database calls from any
thread running an asyncio loop. So mindspace gets one asyncio event loop of its own, in
a daemon thread inside the server process, started on first use and stopped when the
reactor shuts down (a reload restarts the whole server process, and the bridge with it).

Two directions:

* reactor -> asyncio: :meth:`Bridge.run` schedules a coroutine on the loop
  (``asyncio.run_coroutine_threadsafe``) and returns a Deferred that fires *on the
  reactor thread* (``reactor.callFromThread``) with the coroutine's result or failure.
* asyncio -> reactor: :meth:`Bridge.call_in_reactor` runs a function on the reactor
  thread (``maybeDeferred`` there, so it may return a Deferred) and awaits its result
  on the loop. Every Evennia or Django action of the assistant goes this way.

Neither side ever blocks waiting for the other, except :meth:`Bridge.stop` at shutdown,
which waits a bounded time for the loop to finish.

Example:
    >>> bridge = get_bridge()
    >>> d = bridge.run(assistant.tick())        # on the reactor thread
    >>> d.addCallback(lambda result: caller.msg(result.reply))
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from mindspace.errors import MindspaceError

__all__ = ["Bridge", "BridgeClosedError", "BridgeError", "get_bridge"]

logger = logging.getLogger("mindspace.evennia")

T = TypeVar("T")

STOP_TIMEOUT = 5.0
"""Seconds :meth:`Bridge.stop` waits for unfinished work before giving up on it."""


class BridgeError(MindspaceError):
    """The bridge between the reactor and the asyncio loop failed."""


class BridgeClosedError(BridgeError):
    """The bridge was stopped (the server is shutting down); nothing more can run."""


def _default_reactor() -> Any:
    # Imported late: importing twisted.internet.reactor installs a reactor, and inside
    # Evennia the server has installed its own (epoll) before any game code runs.
    from twisted.internet import reactor

    return reactor


class Bridge:
    """One asyncio loop in a daemon thread, reachable from the reactor and back.

    Args:
        reactor: The Twisted reactor (the global one by default).
        name: The loop thread's name.
    """

    def __init__(self, reactor: Any = None, *, name: str = "mindspace-asyncio") -> None:
        self._reactor = reactor
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._trigger: Any = None
        self._interruptible: set[concurrent.futures.Future[Any]] = set()
        self._at_stop: list[Callable[[], Coroutine[Any, Any, None]]] = []

    # -- lifecycle ---------------------------------------------------------------------
    @property
    def reactor(self) -> Any:
        """The reactor this bridge answers on."""
        if self._reactor is None:
            self._reactor = _default_reactor()
        return self._reactor

    @property
    def running(self) -> bool:
        """Whether the loop thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    @property
    def closed(self) -> bool:
        """Whether :meth:`stop` was called; a closed bridge never starts again."""
        return self._closed

    @property
    def thread(self) -> threading.Thread | None:
        """The loop's thread, once started."""
        return self._thread

    def loop(self) -> asyncio.AbstractEventLoop:
        """The asyncio loop, started on first use.

        Raises:
            BridgeClosedError: the bridge was stopped.
        """
        with self._lock:
            if self._closed:
                raise BridgeClosedError(
                    "The mindspace bridge was stopped because the server is shutting down; "
                    "nothing more can run until the server starts again."
                )
            if self._loop is None:
                loop = asyncio.new_event_loop()
                started = threading.Event()
                thread = threading.Thread(
                    target=self._serve, args=(loop, started), name=self._name, daemon=True
                )
                thread.start()
                started.wait()
                self._loop, self._thread = loop, thread
                self._trigger = self.reactor.addSystemEventTrigger("before", "shutdown", self.stop)
                logger.info("mindspace: asyncio loop started in thread %r", self._name)
            return self._loop

    @staticmethod
    def _serve(loop: asyncio.AbstractEventLoop, started: threading.Event) -> None:
        asyncio.set_event_loop(loop)
        loop.call_soon(started.set)
        try:
            loop.run_forever()
        finally:
            loop.close()

    def at_stop(self, cleanup: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run ``cleanup()`` on the loop when the bridge stops (after unfinished work)."""
        if cleanup not in self._at_stop:
            self._at_stop.append(cleanup)

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Stop the loop: cancel running work, let short writes finish, end the thread.

        Called by the reactor's ``before shutdown`` trigger (so at every reload and
        shutdown); safe to call more than once. Work is cancelled (a tick's unit of work
        is discarded and the engine retries its event at the next start), except work
        submitted with ``finish_at_shutdown=True`` (storing an event), which gets up to
        ``timeout`` seconds to finish.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            loop, thread = self._loop, self._thread
            trigger, self._trigger = self._trigger, None
        if trigger is not None and self._reactor is not None:
            with contextlib.suppress(ValueError, KeyError):  # already running as that trigger
                self._reactor.removeSystemEventTrigger(trigger)
        if loop is None or thread is None:
            return
        for future in list(self._interruptible):
            future.cancel()
        try:
            drained = asyncio.run_coroutine_threadsafe(_drain(timeout, self._at_stop), loop)
            drained.result(timeout + 2)
        except (concurrent.futures.TimeoutError, RuntimeError):
            logger.warning("mindspace: unfinished work was dropped at shutdown")
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        if thread.is_alive():
            logger.warning("mindspace: the asyncio thread did not stop within %.0fs", timeout)
        else:
            logger.info("mindspace: asyncio loop stopped")

    # -- reactor -> asyncio ------------------------------------------------------------
    def submit(
        self, coro: Coroutine[Any, Any, T], *, finish_at_shutdown: bool = False
    ) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the loop from any thread; returns a concurrent future.

        Raises:
            BridgeClosedError: the bridge was stopped (``coro`` is closed unrun).
        """
        try:
            loop = self.loop()
        except BridgeClosedError:
            coro.close()
            raise
        future = asyncio.run_coroutine_threadsafe(coro, loop)
        if not finish_at_shutdown:
            self._interruptible.add(future)
            future.add_done_callback(self._interruptible.discard)
        return future

    def run(self, coro: Coroutine[Any, Any, T], *, finish_at_shutdown: bool = False) -> Any:
        """Run ``coro`` on the loop; returns a Deferred fired on the reactor thread.

        Call this on the reactor thread. Cancelling the Deferred cancels the coroutine,
        and so does :meth:`stop` unless ``finish_at_shutdown`` is set.

        Returns:
            twisted.internet.defer.Deferred: fires with the result, or fails with the
            coroutine's exception (``BridgeClosedError`` once the bridge is stopped).
        """
        from twisted.internet.defer import Deferred, fail

        try:
            future = self.submit(coro, finish_at_shutdown=finish_at_shutdown)
        except BridgeClosedError as exc:
            return fail(exc)

        def cancel(_deferred: Any) -> None:
            future.cancel()

        deferred: Any = Deferred(cancel)
        reactor = self.reactor

        def done(fut: concurrent.futures.Future[T]) -> None:
            reactor.callFromThread(_fire, deferred, fut)

        future.add_done_callback(done)
        return deferred

    # -- asyncio -> reactor ------------------------------------------------------------
    async def call_in_reactor(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run ``fn(*args, **kwargs)`` on the reactor thread and await its result.

        ``fn`` may return a Deferred; its eventual result is returned. An exception
        raised by ``fn`` (or a failed Deferred) is raised here. Call this on the loop.

        Raises:
            BridgeClosedError: the reactor is shutting down and will not answer.
        """
        from twisted.internet.defer import maybeDeferred

        loop = asyncio.get_running_loop()
        answer: asyncio.Future[Any] = loop.create_future()

        def settle(setter: Callable[[Any], None], value: Any) -> None:
            if not answer.done():
                setter(value)

        def ok(result: Any) -> None:
            loop.call_soon_threadsafe(settle, answer.set_result, result)

        def failed(failure: Any) -> None:
            error = failure.value
            if not isinstance(error, BaseException):  # pragma: no cover - defensive
                error = BridgeError(f"The reactor call failed with {failure!r}")
            loop.call_soon_threadsafe(settle, answer.set_exception, error)

        def start() -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed while the reactor ran fn
                maybeDeferred(fn, *args, **kwargs).addCallbacks(ok, failed)

        if self._closed:
            raise BridgeClosedError(
                f"Cannot run {getattr(fn, '__name__', fn)!r} in the game: the server is "
                "shutting down."
            )
        self.reactor.callFromThread(start)
        return await answer


def _fire(deferred: Any, future: concurrent.futures.Future[Any]) -> None:
    from twisted.internet.defer import CancelledError
    from twisted.python.failure import Failure

    failure: Any = Failure
    if deferred.called:
        return
    if future.cancelled():
        deferred.errback(failure(CancelledError("The mindspace task was cancelled")))
        return
    error = future.exception()
    if error is not None:
        deferred.errback(failure(error))
    else:
        deferred.callback(future.result())


async def _drain(seconds: float, cleanups: list[Callable[[], Coroutine[Any, Any, None]]]) -> None:
    current = asyncio.current_task()
    pending = [t for t in asyncio.all_tasks() if t is not current]
    if pending:
        _done, late = await asyncio.wait(pending, timeout=seconds)
        for task in late:
            task.cancel()
        if late:
            await asyncio.wait(late, timeout=1)
    for cleanup in cleanups:
        try:
            await asyncio.wait_for(cleanup(), 1)
        except Exception:
            logger.exception("mindspace: a cleanup at shutdown failed")


_BRIDGE: Bridge | None = None
_BRIDGE_LOCK = threading.Lock()


def get_bridge() -> Bridge:
    """The process-wide bridge: one asyncio loop per server process, started lazily."""
    global _BRIDGE
    with _BRIDGE_LOCK:
        if _BRIDGE is None:
            _BRIDGE = Bridge()
        return _BRIDGE
