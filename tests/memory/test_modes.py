"""Operating modes and the sleep schedule, on a manual clock (spec 003 §6-7)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from mindspace import Assistant, ManualClock, ScriptedLLM
from mindspace.engine.modes import SleepSchedule, in_sleep_window


@pytest.mark.parametrize(
    ("hour", "minute", "inside"),
    [(21, 59, False), (22, 0, True), (23, 30, True), (0, 0, True), (1, 59, True), (2, 0, False)],
)
def test_a_22_to_02_window_wraps_midnight(hour: int, minute: int, inside: bool) -> None:
    when = datetime(2025, 12, 6, hour, minute, tzinfo=UTC)
    assert in_sleep_window(when, start_hour=22, duration_hours=4) is inside


@pytest.fixture
async def night_owl(make_assistant: Callable[..., Assistant], clock: ManualClock) -> Assistant:
    """Sleeps 22:00-02:00 after at least 3 awake ticks; it is 21:58 now."""
    clock.set(datetime(2025, 12, 6, 21, 58, tzinfo=UTC))
    assistant = make_assistant(llm=ScriptedLLM())
    await assistant.set_sleep_schedule(
        SleepSchedule(enabled=True, sleep_start_hour=22, sleep_duration_hours=4, min_awake_ticks=3)
    )
    return assistant


async def test_the_schedule_respects_min_awake_ticks_and_wraps_midnight(
    night_owl: Assistant, clock: ManualClock
) -> None:
    await night_owl.tick()  # 21:58, outside the window
    clock.advance(minutes=3)  # 22:01: inside, but only 1 awake tick so far
    first = await night_owl.tick()
    assert night_owl.views.mode().mode == "awake"
    assert first.notes == []
    await night_owl.tick()  # the third awake tick
    assert night_owl.views.mode().mode == "sleep"
    assert night_owl.views.mode().reason == "scheduled sleep window 22:00-02:00"
    assert night_owl.views.tick_rate() == 60
    clock.set(datetime(2025, 12, 7, 1, 30, tzinfo=UTC))  # past midnight: still asleep
    assert (await night_owl.tick()).kind == "sleep"
    assert night_owl.views.mode().mode == "sleep"
    clock.set(datetime(2025, 12, 7, 2, 0, tzinfo=UTC))
    woke = await night_owl.tick()
    assert woke.sleep is not None
    assert woke.sleep.woke is True
    assert "scheduled wake" in (woke.sleep.wake_reason or "")
    assert night_owl.views.mode().mode == "awake"
    assert night_owl.views.tick_rate() == 5


async def _asleep_and_dreaming(assistant: Assistant) -> None:
    await assistant.sleep("night")
    result = await assistant.tick()  # nothing to consolidate: compacting completes at once
    assert result.sleep is not None
    assert result.sleep.phase_after == "dreaming"


async def test_an_urgent_event_wakes_a_light_sleeper(
    make_assistant: Callable[..., Assistant],
) -> None:
    assistant = make_assistant(llm=ScriptedLLM())
    await _asleep_and_dreaming(assistant)
    assistant.enqueue_event("Just chatting", source_entity="Bob")  # not urgent
    assert (await assistant.tick()).sleep.woke is False  # type: ignore[union-attr]
    assistant.enqueue_event("Fire!", source_entity="Cook", metadata={"urgent": True})
    result = await assistant.tick()
    assert result.sleep is not None
    assert result.sleep.woke is True
    assert result.sleep.wake_reason == "urgent message from Cook"
    assert assistant.views.mode().mode == "awake"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"type": "whisper"},
        {"metadata": {"priority": 8}},
        {"metadata": {"classification": "direct_addressing"}},
        {"metadata": {"classification": "direct_message"}},
    ],
)
async def test_each_kind_of_urgent_event_wakes(
    make_assistant: Callable[..., Assistant], kwargs: dict[str, object]
) -> None:
    assistant = make_assistant(llm=ScriptedLLM())
    await _asleep_and_dreaming(assistant)
    assistant.enqueue_event("Wake up", source_entity="Alice", **kwargs)  # type: ignore[arg-type]
    assert (await assistant.tick()).sleep.woke is True  # type: ignore[union-attr]


async def test_a_deep_sleeper_ignores_urgent_events(
    make_assistant: Callable[..., Assistant],
) -> None:
    assistant = make_assistant(llm=ScriptedLLM())
    await assistant.sleep("maintenance", deep=True)
    await assistant.tick()
    assistant.enqueue_event("Fire!", source_entity="Cook", metadata={"urgent": True})
    assert (await assistant.tick()).sleep.woke is False  # type: ignore[union-attr]
    assert assistant.views.mode().mode == "sleep"


async def test_a_wake_during_compacting_is_deferred_until_it_completes(
    memory_assistant: Assistant,
) -> None:
    per_tick = memory_assistant.settings.sleep_consolidation_per_tick
    for n in range(per_tick + 3):  # two compacting ticks' worth
        await memory_assistant.call_tool(
            "add_journal_entry", {"content": f"Player Bob paid {n} coins", "importance": 4}
        )
    await memory_assistant.sleep("night")
    memory_assistant.enqueue_event("Help!", source_entity="Cook", metadata={"urgent": True})

    first = await memory_assistant.tick()
    assert first.sleep is not None
    assert first.sleep.woke is False
    assert first.sleep.deferred_wake == ("urgent message from Cook")
    assert first.sleep.operations["run_sleep_consolidation"]["remaining"] == 3

    second = await memory_assistant.tick()
    assert second.sleep is not None
    assert second.sleep.operations["run_sleep_consolidation"]["completed"] is True
    assert second.sleep.woke is True
    assert second.sleep.wake_reason == "urgent message from Cook (after compacting)"
    assert memory_assistant.views.mode().mode == "awake"


async def test_the_cooldown_keeps_it_awake_for_60_minutes(
    night_owl: Assistant, clock: ManualClock
) -> None:
    clock.set(datetime(2025, 12, 6, 22, 30, tzinfo=UTC))
    await night_owl.sleep("early night")
    await night_owl.wake("a player knocked")
    assert night_owl.views.mode().cooldown_until == "2025-12-06T23:30:00Z"
    for _ in range(5):  # enough awake ticks, inside the window, but cooling down
        await night_owl.tick()
        clock.advance(minutes=10)
    assert night_owl.views.mode().mode == "awake"  # 23:20
    clock.advance(minutes=11)  # 23:31: the cooldown is over
    await night_owl.tick()
    assert night_owl.views.mode().mode == "sleep"


async def test_waking_resets_the_counters_and_clears_the_sleep_state(
    night_owl: Assistant,
) -> None:
    await night_owl.sleep("night")
    state = await night_owl.wake("morning")
    assert (state.mode, state.sleep_phase, state.awake_ticks, state.sleep_ticks) == (
        "awake",
        None,
        0,
        0,
    )
    assert state.wake_deferred is None


async def test_the_assistant_can_put_itself_to_sleep(
    make_assistant: Callable[..., Assistant],
) -> None:
    llm = ScriptedLLM()
    assistant = make_assistant(llm=llm)
    llm.enqueue(tool_calls=[{"name": "go_to_sleep", "arguments": {"reason": "The inn is closed"}}])
    assistant.enqueue_event("Good night, barkeep!", source_entity="Alice")
    result = await assistant.tick()
    assert result.tool_calls == [("go_to_sleep", True)]
    assert result.loop is not None
    assert result.loop.stopped_by == "terminal_tool"
    assert assistant.views.mode().mode == "sleep"
    assert assistant.views.mode().reason == "The inn is closed"
    assert (await assistant.tick()).kind == "sleep"
