"""The tick schedule: TickPolicy on hand-passed times, AsyncTickDriver on a fake source."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from functools import partial

import pytest

from mindspace.engine.notices import Notice
from mindspace.engine.scheduler import AsyncTickDriver, TickPolicy
from mindspace.engine.tick import TickResult

RATE = 5.0


def _done(rate: float = RATE, *, kind: str = "autonomous", mode: str = "awake") -> TickResult:
    return TickResult(kind=kind, status="done", mode=mode, rate=rate)  # type: ignore[arg-type]


def _failed(rate: float = RATE) -> TickResult:
    return TickResult(kind="event", status="failed", rate=rate, error="model down")


def _ticked(policy: TickPolicy, key: str, now: float, result: TickResult) -> None:
    assert key in policy.due(now)
    policy.start(key)
    policy.finish(key, now, result)


# -- TickPolicy ------------------------------------------------------------------------------
def test_a_new_assistant_is_due_at_once_then_every_awake_rate() -> None:
    policy = TickPolicy(awake_rate=RATE)
    policy.add("barkeep")
    assert policy.due(0.0) == ["barkeep"]
    _ticked(policy, "barkeep", 0.0, _done())
    assert policy.due(4.9) == []
    assert policy.wait(1.0) == pytest.approx(4.0)
    assert policy.due(5.0) == ["barkeep"]


def test_a_tick_that_fell_asleep_slows_the_next_one_at_once() -> None:
    policy = TickPolicy(awake_rate=RATE)
    policy.add("barkeep")
    _ticked(policy, "barkeep", 0.0, _done(60.0, mode="sleep"))
    assert policy.rate("barkeep") == 60.0
    assert policy.due(5.0) == []
    assert policy.due(59.9) == []
    assert policy.due(60.0) == ["barkeep"]


def test_an_event_tick_is_followed_at_once_for_the_events_still_waiting() -> None:
    policy = TickPolicy(awake_rate=RATE)
    policy.add("barkeep")
    _ticked(policy, "barkeep", 10.0, _done(kind="event"))
    assert policy.due(10.0) == ["barkeep"]
    _ticked(policy, "barkeep", 11.0, _done(kind="idle"))
    assert policy.due(11.0) == []  # nothing left: back to the awake rate
    assert policy.next_due("barkeep") == 16.0


def test_a_nudge_during_a_running_tick_asks_for_another_right_after() -> None:
    policy = TickPolicy(awake_rate=RATE)
    policy.add("barkeep")
    policy.start("barkeep")
    assert policy.nudge("barkeep") is True
    assert policy.is_running("barkeep")
    assert policy.due(1.0) == []  # never two ticks of one assistant at a time
    policy.finish("barkeep", 3.0, _done(kind="idle"))
    assert policy.due(3.0) == ["barkeep"]


def test_a_nudge_makes_an_awake_assistant_due_now() -> None:
    policy = TickPolicy(awake_rate=RATE)
    policy.add("barkeep")
    _ticked(policy, "barkeep", 0.0, _done())
    assert policy.due(1.0) == []
    assert policy.nudge("barkeep") is True
    assert policy.due(1.0) == ["barkeep"]
    assert policy.nudge("stranger") is False  # not scheduled


def test_asleep_only_an_urgent_nudge_makes_it_due() -> None:
    policy = TickPolicy(awake_rate=RATE)
    policy.add("barkeep")
    _ticked(policy, "barkeep", 0.0, _done(60.0, mode="sleep"))
    assert policy.nudge("barkeep") is False
    assert policy.due(1.0) == []
    assert policy.nudge("barkeep", urgent=True) is True
    assert policy.due(1.0) == ["barkeep"]


def test_failed_and_crashed_ticks_back_off_doubling_up_to_the_cap_then_reset() -> None:
    policy = TickPolicy(awake_rate=RATE, max_backoff=30.0)
    policy.add("barkeep")
    now = 0.0
    waits = []
    for n in range(5):
        assert policy.due(now) == ["barkeep"]
        policy.start("barkeep")
        if n % 2:
            policy.crash("barkeep", now)
        else:
            policy.finish("barkeep", now, _failed())
        waits.append(policy.next_due("barkeep") - now)
        now = policy.next_due("barkeep")
    assert waits == [5.0, 10.0, 20.0, 30.0, 30.0]
    assert policy.failures("barkeep") == 5

    _ticked(policy, "barkeep", now, _done())
    assert policy.failures("barkeep") == 0
    assert policy.next_due("barkeep") == now + RATE
    policy.start("barkeep")
    policy.finish("barkeep", now + RATE, _failed())
    assert policy.next_due("barkeep") == now + 2 * RATE  # the first failure again


# -- AsyncTickDriver -------------------------------------------------------------------------
class FakeSource:
    """Assistants whose ticks wait on a gate the test opens; counts overlapping ticks."""

    def __init__(self, keys: Sequence[str]) -> None:
        self.keys = list(keys)
        self.gates: dict[str, asyncio.Event] = {}
        self.listeners: dict[str, Callable[[Notice], None]] = {}
        self.active = dict.fromkeys(self.keys, 0)
        self.most_at_once = dict.fromkeys(self.keys, 0)
        self.ticks: list[str] = []
        self.finished: list[str] = []
        self.changed = asyncio.Condition()

    def open_keys(self) -> Sequence[str]:
        return self.keys

    def watch(self, key: str, listener: Callable[[Notice], None]) -> None:
        self.listeners[key] = listener

    async def tick(self, key: str) -> TickResult:
        self.active[key] += 1
        self.most_at_once[key] = max(self.most_at_once[key], self.active[key])
        async with self.changed:
            self.ticks.append(key)
            self.changed.notify_all()
        gate = self.gates.get(key)
        if gate is not None:
            await gate.wait()
        self.active[key] -= 1
        async with self.changed:
            self.finished.append(key)
            self.changed.notify_all()
        return _done(kind="idle")

    async def until(self, predicate: Callable[[], bool]) -> None:
        async with self.changed:
            await asyncio.wait_for(self.changed.wait_for(predicate), timeout=10)


def _finished_times(source: FakeSource, key: str, times: int) -> bool:
    return source.finished.count(key) == times


async def test_a_slow_assistant_never_overlaps_itself_nor_delays_another() -> None:
    source = FakeSource(["slow", "fast"])
    source.gates["slow"] = asyncio.Event()
    clock = [0.0]
    driver = AsyncTickDriver(source, TickPolicy(awake_rate=RATE), monotonic=lambda: clock[0])
    driver.schedule()

    assert sorted(driver.run_due(clock[0])) == ["fast", "slow"]
    await source.until(lambda: source.finished == ["fast"])
    for step in range(1, 4):  # three more rounds while "slow" is still thinking
        clock[0] = step * RATE
        assert driver.run_due(clock[0]) == ["fast"]
        await source.until(partial(_finished_times, source, "fast", step + 1))
    assert source.finished == ["fast"] * 4
    assert driver.policy.is_running("slow")

    source.gates["slow"].set()
    await driver.drain()
    assert source.finished[-1] == "slow"
    assert source.most_at_once == {"slow": 1, "fast": 1}
    assert driver.ticks_run == 5


async def test_a_queued_event_notice_nudges_the_running_driver() -> None:
    source = FakeSource(["barkeep"])
    clock = [0.0]
    driver = AsyncTickDriver(source, TickPolicy(awake_rate=RATE), monotonic=lambda: clock[0])
    driver.start()
    try:
        await source.until(lambda: source.finished == ["barkeep"])
        assert driver.policy.next_due("barkeep") == RATE  # the clock stands still at 0

        listener = source.listeners["barkeep"]
        listener(Notice("tick_finished", "barkeep", "2025-12-06T10:00:00Z", {}))
        assert driver.policy.due(clock[0]) == []  # other notices nudge nothing
        listener(
            Notice(
                "event_queued",
                "barkeep",
                "2025-12-06T10:00:00Z",
                {"event_id": "evt_1", "type": "message", "source": "Alice", "urgent": False},
            )
        )
        await source.until(lambda: source.finished == ["barkeep", "barkeep"])
    finally:
        await driver.stop()
    assert source.most_at_once == {"barkeep": 1}
