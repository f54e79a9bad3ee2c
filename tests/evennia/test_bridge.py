"""The bridge: asyncio work handed back to the reactor thread, and reactor work awaited."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from django.core.exceptions import SynchronousOnlyOperation
from twisted.internet import reactor
from twisted.internet.defer import CancelledError, Deferred

from mindspace.hosts.evennia.bridge import Bridge, BridgeClosedError
from mindspace.hosts.evennia.testing import settle, wait


@pytest.fixture
def bridge() -> Bridge:
    made = Bridge(reactor)
    yield made
    made.stop()


def test_the_loop_starts_lazily_in_a_daemon_thread_and_stops(bridge: Bridge) -> None:
    assert not bridge.running
    loop = bridge.loop()
    assert bridge.running
    assert bridge.thread is not None
    assert bridge.thread.daemon
    assert bridge.thread is not threading.current_thread()
    assert loop is bridge.loop()  # one loop, started once
    bridge.stop()
    assert not bridge.running
    assert bridge.closed
    with pytest.raises(BridgeClosedError, match="shutting down"):
        bridge.loop()


def test_a_coroutine_result_arrives_on_the_reactor_thread(bridge: Bridge) -> None:
    seen: dict[str, object] = {}

    async def work() -> int:
        seen["coroutine"] = threading.current_thread()
        await asyncio.sleep(0.01)
        return 42

    deferred = bridge.run(work())

    def callback(value: int) -> int:
        seen["callback"] = threading.current_thread()
        return value

    deferred.addCallback(callback)
    assert wait(deferred) == 42
    assert seen["coroutine"] is bridge.thread
    assert seen["callback"] is threading.main_thread()


def test_a_coroutine_error_fails_the_deferred(bridge: Bridge) -> None:
    async def broken() -> None:
        raise ValueError("bad input 'x'")

    with pytest.raises(ValueError, match="bad input"):
        wait(bridge.run(broken()))


def test_the_core_calls_back_into_the_reactor_thread(bridge: Bridge) -> None:
    def on_reactor(a: int, b: int) -> tuple[int, threading.Thread]:
        return a + b, threading.current_thread()

    def later(value: str) -> Deferred:
        deferred: Deferred = Deferred()
        reactor.callLater(0.01, deferred.callback, value.upper())
        return deferred

    def failing() -> None:
        raise KeyError("nope")

    async def work() -> tuple[object, ...]:
        total, thread = await bridge.call_in_reactor(on_reactor, 1, b=2)
        deferred_value = await bridge.call_in_reactor(later, "done")
        try:
            await bridge.call_in_reactor(failing)
        except KeyError as exc:
            error = exc
        return total, thread, deferred_value, error

    total, thread, value, error = wait(bridge.run(work()))
    assert total == 3
    assert thread is threading.main_thread()
    assert value == "DONE"
    assert isinstance(error, KeyError)


def test_django_refuses_the_database_on_the_asyncio_thread(bridge: Bridge) -> None:
    from evennia.accounts.models import AccountDB

    async def touch() -> int:
        return int(AccountDB.objects.count())

    with pytest.raises(SynchronousOnlyOperation):
        wait(bridge.run(touch()))

    async def through_the_reactor() -> int:
        return int(await bridge.call_in_reactor(AccountDB.objects.count))

    assert wait(bridge.run(through_the_reactor())) >= 0


def test_stop_cancels_running_work_but_lets_short_writes_finish(bridge: Bridge) -> None:
    finished: list[str] = []

    async def long_tick() -> None:
        await asyncio.sleep(60)
        finished.append("tick")  # never: cancelled

    async def store_event() -> None:
        await asyncio.sleep(0.2)
        finished.append("event")

    tick = bridge.run(long_tick())
    event = bridge.run(store_event(), finish_at_shutdown=True)
    settle(lambda: bridge.running, what="bridge started")
    started = time.monotonic()
    bridge.stop(timeout=3)
    assert time.monotonic() - started < 3
    assert finished == ["event"]
    with pytest.raises(CancelledError):
        wait(tick)
    assert wait(event) is None
    with pytest.raises(BridgeClosedError):
        wait(bridge.run(store_event()))


def test_cancelling_the_deferred_cancels_the_coroutine(bridge: Bridge) -> None:
    cancelled = threading.Event()

    async def slow() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    deferred = bridge.run(slow())
    settle(lambda: bridge.running)
    time.sleep(0.05)
    deferred.cancel()
    assert cancelled.wait(5)
    with pytest.raises(CancelledError):
        wait(deferred)
