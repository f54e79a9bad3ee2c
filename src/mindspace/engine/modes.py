"""Operating modes: awake and sleep, the sleep schedule, wake conditions (spec 003 §6-7)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import ClassVar, Literal

from pydantic import Field

from mindspace.clock import Clock, format_time, parse_time
from mindspace.engine.records import Event
from mindspace.state.models import Document
from mindspace.state.unit import Unit

__all__ = [
    "DIRECT_MESSAGE_TYPES",
    "Mode",
    "OperatingMode",
    "SleepPhase",
    "SleepSchedule",
    "check_sleep_schedule",
    "check_wake_conditions",
    "in_sleep_window",
    "perform_wake_transition",
    "planned_wake_time",
    "transition_mode",
]

logger = logging.getLogger("mindspace.engine")

Mode = Literal["awake", "sleep"]
SleepPhase = Literal["compacting", "dreaming"]
SleepDepth = Literal["light", "deep"]
DIRECT_MESSAGE_TYPES = frozenset({"whisper", "direct_message", "tell", "page"})
DEFAULT_SLEEP_HOURS = 4.0
"""How long a sleep lasts when no schedule sets its end (``MINDSPACE_SLEEP_DEFAULT_HOURS``)."""


class OperatingMode(Document):
    """The assistant's mode and, while asleep, its sleep state."""

    name: ClassVar[str] = "operating_mode"

    mode: Mode = "awake"
    since: str | None = None
    reason: str = "started"
    awake_ticks: int = 0
    cooldown_until: str | None = None
    sleep_phase: SleepPhase | None = None
    sleep_depth: SleepDepth = "light"
    sleep_ticks: int = 0
    scheduled: bool = False
    wake_deferred: str | None = None
    wake_at: str | None = None
    """When this sleep ends by itself (set on falling asleep, whoever started it)."""
    schedule_suspended: bool = False
    """``go_to_sleep`` paused the sleep schedule for this sleep; waking turns it back on."""


class SleepSchedule(Document):
    """When the assistant sleeps by itself (``sleep_schedule`` in the spec)."""

    name: ClassVar[str] = "sleep_schedule"

    enabled: bool = False
    sleep_start_hour: float = Field(default=2, ge=0, lt=24)
    sleep_duration_hours: float = Field(default=4, gt=0, le=24)
    tick_rate_sleep: float | None = Field(
        default=None,
        gt=0,
        description="Seconds between sleep ticks; MINDSPACE_TICK_RATE_SLEEP if unset.",
    )
    min_awake_ticks: int = Field(default=10, ge=0)


def in_sleep_window(when: datetime, start_hour: float, duration_hours: float) -> bool:
    """Whether ``when`` falls in the window, which may wrap past midnight (22:00-02:00)."""
    hour = when.hour + when.minute / 60 + when.second / 3600
    return (hour - start_hour) % 24 < duration_hours


def planned_wake_time(
    now: datetime, schedule: SleepSchedule, default_hours: float = DEFAULT_SLEEP_HOURS
) -> datetime:
    """When a sleep that starts at ``now`` ends by itself.

    With the schedule on, at its next wake hour (the end of its window: 02:00 for
    22:00 + 4 h, today or tomorrow); with it off, ``default_hours`` after ``now``
    (``MINDSPACE_SLEEP_DEFAULT_HOURS``).
    """
    if not schedule.enabled:
        return now + timedelta(hours=default_hours)
    wake_hour = (schedule.sleep_start_hour + schedule.sleep_duration_hours) % 24
    hour = now.hour + now.minute / 60 + now.second / 3600 + now.microsecond / 3_600_000_000
    ahead = (wake_hour - hour) % 24 or 24.0
    return now + timedelta(hours=ahead)


def transition_mode(
    unit: Unit,
    clock: Clock,
    target: Mode,
    reason: str,
    *,
    depth: SleepDepth = "light",
    scheduled: bool = False,
    default_hours: float = DEFAULT_SLEEP_HOURS,
    hours: float | None = None,
) -> OperatingMode:
    """Switch to ``target`` (entering sleep starts in the compacting phase).

    Every sleep gets its wake time (:func:`planned_wake_time`, or ``hours`` from now
    when given), whether the schedule, a tool, the API or the CLI started it.
    """
    current = unit.doc(OperatingMode)
    now = format_time(clock.now())
    if target == "sleep":
        wake_at = (
            clock.now() + timedelta(hours=hours)
            if hours is not None
            else planned_wake_time(clock.now(), unit.doc(SleepSchedule), default_hours)
        )
        state = current.model_copy(
            update={
                "mode": "sleep",
                "since": now,
                "reason": reason,
                "sleep_phase": "compacting",
                "sleep_depth": depth,
                "sleep_ticks": 0,
                "scheduled": scheduled,
                "wake_deferred": None,
                "wake_at": format_time(wake_at),
            }
        )
    else:
        state = current.model_copy(update={"mode": "awake", "since": now, "reason": reason})
    unit.put_doc(state)
    logger.info("Mode %s -> %s: %s", current.mode, target, reason)
    return state


def check_sleep_schedule(unit: Unit, clock: Clock) -> tuple[bool, Mode | None, str]:
    """``(should_transition, target_mode, reason)`` by the sleep schedule."""
    schedule = unit.doc(SleepSchedule)
    state = unit.doc(OperatingMode)
    if not schedule.enabled:
        return False, None, "sleep schedule disabled"
    now = clock.now()
    inside = in_sleep_window(now, schedule.sleep_start_hour, schedule.sleep_duration_hours)
    window = _window_text(schedule)
    if state.mode == "sleep":
        if state.scheduled and not inside:
            return True, "awake", f"scheduled wake: the sleep window {window} has ended"
        return False, None, "asleep"
    if not inside:
        return False, None, f"outside the sleep window {window}"
    if state.cooldown_until and now < parse_time(state.cooldown_until):
        return False, None, f"in wake cooldown until {state.cooldown_until}"
    if state.awake_ticks < schedule.min_awake_ticks:
        return (
            False,
            None,
            f"only {state.awake_ticks} of {schedule.min_awake_ticks} awake ticks so far",
        )
    return True, "sleep", f"scheduled sleep window {window}"


def check_wake_conditions(
    unit: Unit,
    clock: Clock,
    pending: Sequence[Event],
    *,
    default_hours: float = DEFAULT_SLEEP_HOURS,
) -> tuple[bool, str, bool]:
    """``(should_wake, reason, deferred)`` for a sleeping assistant.

    Wakes at its wake time (``wake_at``; a sleep stored without one, from an older
    version, ends ``default_hours`` after it began), whatever the depth; on the
    schedule; or on an urgent event when sleeping lightly: a direct
    message, ``metadata.urgent``, priority >= 8, or classification ``direct_addressing``
    or ``direct_message``. While compacting, a wake is deferred until it completes:
    ``deferred`` is True and ``reason`` says why it would wake.
    """
    state = unit.doc(OperatingMode)
    if state.mode != "sleep":
        return False, "awake", False
    reason = ""
    due, target, why = check_sleep_schedule(unit, clock)
    wake_at = _wake_at(state, default_hours)
    if due and target == "awake":
        reason = why
    elif wake_at is not None and clock.now() >= wake_at:
        reason = f"scheduled wake time {format_time(wake_at)} reached"
    elif state.sleep_depth == "light":
        urgent = [
            e for e in pending if not e.ambient and (e.urgent or e.type in DIRECT_MESSAGE_TYPES)
        ]
        if urgent:
            first = urgent[0]
            reason = f"urgent {first.type} from {first.source_entity or 'someone'}"
    if not reason:
        return False, "no wake condition", False
    if state.sleep_phase == "compacting":
        return False, reason, True
    return True, reason, False


def _wake_at(state: OperatingMode, default_hours: float) -> datetime | None:
    if state.wake_at is not None:
        return parse_time(state.wake_at)
    if state.scheduled or state.since is None:
        return None  # the schedule's window ends it
    return parse_time(state.since) + timedelta(hours=default_hours)


def perform_wake_transition(
    unit: Unit, clock: Clock, reason: str, *, cooldown_minutes: float = 60
) -> OperatingMode:
    """Wake (spec 003 §6): set the cooldown, reset the activity counter, clear the sleep
    state, restore the sleep schedule if ``go_to_sleep`` paused it, then go awake."""
    if unit.doc(OperatingMode).schedule_suspended:
        unit.put_doc(unit.doc(SleepSchedule).model_copy(update={"enabled": True}))
    transition_mode(unit, clock, "awake", reason)
    state = unit.doc(OperatingMode)
    until = clock.now() + timedelta(minutes=cooldown_minutes)
    woke = state.model_copy(
        update={
            "cooldown_until": format_time(until),
            "awake_ticks": 0,
            "sleep_phase": None,
            "sleep_depth": "light",
            "sleep_ticks": 0,
            "scheduled": False,
            "wake_deferred": None,
            "wake_at": None,
            "schedule_suspended": False,
        }
    )
    unit.put_doc(woke)
    return woke


def _window_text(schedule: SleepSchedule) -> str:
    start = schedule.sleep_start_hour
    end = (start + schedule.sleep_duration_hours) % 24
    return f"{_hhmm(start)}-{_hhmm(end)}"


def _hhmm(hours: float) -> str:
    minutes = round(hours * 60)
    return f"{minutes // 60 % 24:02d}:{minutes % 60:02d}"
