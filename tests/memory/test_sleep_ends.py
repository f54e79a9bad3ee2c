"""Every sleep has an end (issue 13, item 1): the schedule's wake hour or a default.

A sleep the assistant chose (``go_to_sleep``), one started through ``Assistant.sleep``
and one started by the schedule all wake by themselves; deep sleep ignores urgent events
but not the wake time.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from mindspace import Assistant, ManualClock, ScriptedLLM
from mindspace.engine.modes import SleepSchedule
from mindspace.errors import InvalidInputError


async def test_go_to_sleep_deeply_wakes_at_the_schedules_wake_hour(
    make_assistant: Callable[..., Assistant], clock: ManualClock
) -> None:
    # The repro: schedule 22:00 for 4 h; at 23:00 go_to_sleep deep.
    clock.set(datetime(2025, 12, 6, 23, 0, tzinfo=UTC))
    assistant = make_assistant(llm=ScriptedLLM())
    await assistant.set_sleep_schedule(
        SleepSchedule(enabled=True, sleep_start_hour=22, sleep_duration_hours=4)
    )
    result = await assistant.call_tool("go_to_sleep", {"reason": "x", "deep": True})
    assert result["success"] is True
    assert result["wake_at"] == "2025-12-07T02:00:00Z"
    assert "waking at 2025-12-07T02:00:00Z" in result["message"]
    mode = assistant.views.mode()
    assert (mode.mode, mode.sleep_depth, mode.wake_at) == ("sleep", "deep", result["wake_at"])
    # The schedule is paused while it sleeps by its own choice (spec 003: the wake step
    # restores a schedule the tool disabled).
    assert assistant.views.schedule().enabled is False

    await assistant.tick()  # 23:00: nothing to consolidate, compacting completes
    clock.set(datetime(2025, 12, 7, 1, 0, tzinfo=UTC))
    assistant.enqueue_event("Fire!", source_entity="Cook", metadata={"urgent": True})
    deep = await assistant.tick()
    assert deep.sleep is not None
    assert deep.sleep.woke is False  # deep sleep ignores the urgent event
    assert assistant.views.mode().mode == "sleep"

    clock.set(datetime(2025, 12, 7, 2, 0, tzinfo=UTC))
    woke = await assistant.tick()
    assert woke.sleep is not None
    assert woke.sleep.woke is True
    assert woke.sleep.wake_reason == "scheduled wake time 2025-12-07T02:00:00Z reached"
    mode = assistant.views.mode()
    assert (mode.mode, mode.wake_at, mode.schedule_suspended) == ("awake", None, False)
    assert assistant.views.schedule().enabled is True  # restored on waking

    clock.set(datetime(2025, 12, 7, 3, 0, tzinfo=UTC))
    assert (await assistant.tick()).kind != "sleep"  # awake: the event is handled


async def test_without_a_schedule_a_sleep_lasts_the_default_hours(
    make_assistant: Callable[..., Assistant], clock: ManualClock
) -> None:
    clock.set(datetime(2025, 12, 6, 12, 0, tzinfo=UTC))
    assistant = make_assistant(llm=ScriptedLLM())
    state = await assistant.sleep("maintenance", deep=True)
    assert state.wake_at == "2025-12-06T16:00:00Z"  # MINDSPACE_SLEEP_DEFAULT_HOURS = 4
    await assistant.tick()
    clock.set(datetime(2025, 12, 6, 15, 59, 30, tzinfo=UTC))
    last = await assistant.tick()
    assert last.sleep is not None
    assert last.sleep.woke is False
    assert last.rate == 30  # the next sleep tick is due at the wake time, not 60 s on
    clock.set(datetime(2025, 12, 6, 16, 0, tzinfo=UTC))
    assert (await assistant.tick()).sleep.woke is True  # type: ignore[union-attr]
    assert assistant.views.mode().mode == "awake"


async def test_sleep_hours_and_the_setting_set_the_wake_time(
    make_assistant: Callable[..., Assistant], clock: ManualClock
) -> None:
    clock.set(datetime(2025, 12, 6, 12, 0, tzinfo=UTC))
    assistant = make_assistant(llm=ScriptedLLM())
    assert (await assistant.sleep("nap", hours=0.5)).wake_at == "2025-12-06T12:30:00Z"
    await assistant.wake("done")
    longer = make_assistant(
        "sleeper",
        llm=ScriptedLLM(),
        settings=assistant.settings.model_copy(update={"sleep_default_hours": 9}),
    )
    assert (await longer.sleep("night")).wake_at == "2025-12-06T21:00:00Z"
    with pytest.raises(InvalidInputError, match="at most 168, got 0"):
        await assistant.sleep("forever", hours=0)


async def test_a_scheduled_sleep_knows_its_wake_time(
    make_assistant: Callable[..., Assistant], clock: ManualClock
) -> None:
    clock.set(datetime(2025, 12, 6, 22, 30, tzinfo=UTC))
    assistant = make_assistant(llm=ScriptedLLM())
    await assistant.set_sleep_schedule(
        SleepSchedule(enabled=True, sleep_start_hour=22, sleep_duration_hours=4, min_awake_ticks=0)
    )
    await assistant.tick()  # the schedule puts it to sleep
    mode = assistant.views.mode()
    assert (mode.mode, mode.scheduled, mode.wake_at) == ("sleep", True, "2025-12-07T02:00:00Z")
    assert assistant.views.schedule().enabled is True  # only go_to_sleep pauses it


async def test_an_operator_schedule_set_during_a_chosen_sleep_is_kept(
    make_assistant: Callable[..., Assistant], clock: ManualClock
) -> None:
    clock.set(datetime(2025, 12, 6, 20, 0, tzinfo=UTC))
    assistant = make_assistant(llm=ScriptedLLM())
    await assistant.set_sleep_schedule(SleepSchedule(enabled=True, sleep_start_hour=22))
    await assistant.call_tool("go_to_sleep", {"reason": "tired"})
    await assistant.set_sleep_schedule(SleepSchedule(enabled=False))  # the operator's choice
    await assistant.wake("morning")
    assert assistant.views.schedule().enabled is False
