"""What hosts and operators set directly: the mode, the sleep schedule, the user's prompt.

Each change is one serialised write (:meth:`EngineCore.retrying`), so it waits for a
running tick and never interleaves with one. The :class:`~mindspace.engine.assistant.Assistant`
facade offers these as its own methods.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from mindspace.engine.core import EngineCore
from mindspace.engine.modes import (
    OperatingMode,
    SleepSchedule,
    perform_wake_transition,
    transition_mode,
)
from mindspace.errors import InvalidInputError
from mindspace.state.unit import Unit
from mindspace.workspace.prompts import PromptDesk
from mindspace.workspace.records import ContextUsage, SessionMetrics

__all__ = ["Controls"]


class Controls:
    """One assistant's operator controls.

    Args:
        core: The assistant's state and ports.
    """

    def __init__(self, core: EngineCore) -> None:
        self._core = core

    async def sleep(
        self, reason: str, *, deep: bool = False, hours: float | None = None
    ) -> OperatingMode:
        """Put the assistant to sleep now (see :meth:`Assistant.sleep`).

        Raises:
            InvalidInputError: ``hours`` is not a positive number of at most 168 (a week).
        """
        core = self._core
        if hours is not None and not 0 < hours <= 168:
            raise InvalidInputError(
                f"Sleep hours must be more than 0 and at most 168, got {hours!r}",
                "Pass e.g. hours=8, or leave it out for the schedule's wake hour.",
            )

        depth: Literal["light", "deep"] = "deep" if deep else "light"
        return await self._switch(
            "sleep",
            reason,
            lambda unit: transition_mode(
                unit,
                core.clock,
                "sleep",
                reason,
                depth=depth,
                default_hours=core.settings.sleep_default_hours,
                hours=hours,
            ),
        )

    async def wake(self, reason: str) -> OperatingMode:
        """Wake the assistant now, even mid-phase (what is done so far is kept)."""
        core = self._core
        cooldown = core.settings.wake_cooldown_minutes
        return await self._switch(
            "awake",
            reason,
            lambda unit: perform_wake_transition(
                unit, core.clock, reason, cooldown_minutes=cooldown
            ),
        )

    async def _switch(
        self,
        mode: Literal["sleep", "awake"],
        reason: str,
        transition: Callable[[Unit], OperatingMode],
    ) -> OperatingMode:
        """``transition`` unless the assistant is in ``mode`` already; hosts hear of a change."""
        core = self._core

        async def body(unit: Unit) -> tuple[OperatingMode, bool]:
            if unit.doc(OperatingMode).mode == mode:
                return unit.doc(OperatingMode), False
            return transition(unit), True

        state, changed = await core.retrying(body)
        if changed:
            core.notify("mode_changed", mode=mode, reason=reason)
        return state

    async def set_sleep_schedule(self, schedule: SleepSchedule) -> None:
        """Replace the sleep schedule (waking no longer turns a paused one back on)."""

        async def body(unit: Unit) -> None:
            unit.put_doc(schedule)
            state = unit.doc(OperatingMode)
            if state.schedule_suspended:  # the operator's schedule wins over the pause
                unit.put_doc(state.model_copy(update={"schedule_suspended": False}))

        await self._core.retrying(body)

    async def set_user_system_prompt(self, text: str) -> None:
        """Set the user's system prompt; only hosts and operators can (no tool can)."""
        core = self._core

        async def body(unit: Unit) -> None:
            PromptDesk(unit, core.clock, core.settings).set_user_prompt(text)

        await core.retrying(body)

    async def record_context_usage(
        self, tokens: int, source: Literal["estimate", "provider"]
    ) -> None:
        """Record how many tokens the context window holds.

        Raises:
            InvalidInputError: a negative count.
        """
        if tokens < 0:
            raise InvalidInputError(f"Token count must be >= 0, got {tokens!r}", "Pass a count.")
        core = self._core

        async def body(unit: Unit) -> None:
            unit.put_doc(ContextUsage(estimated_used=tokens, source=source, recorded_at=core.now()))

        await core.retrying(body)

    async def start_session(self) -> None:
        """Begin a new session: metrics restart from zero at the current time."""
        core = self._core

        async def body(unit: Unit) -> None:
            unit.put_doc(SessionMetrics(session_start=core.now()))

        await core.retrying(body)
