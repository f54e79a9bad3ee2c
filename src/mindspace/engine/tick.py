"""The awake tick: take the next event (or work on goals), run the loop, commit once.

A tick is one unit of work. Everything it changes - the tools' writes, conversation
history, metrics, and the event's ``done`` mark - is committed together at the end, so
a crash mid-tick stores nothing of it and the event runs again from the start.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from typing import Any, Literal

from mindspace.clock import format_time, parse_time
from mindspace.config import Settings
from mindspace.context.assembly import AssembledPrompt
from mindspace.context.contexts import get_context_config
from mindspace.context.patterns import (
    ExecutionPattern,
)
from mindspace.engine.core import EngineCore
from mindspace.engine.events import EventQueue
from mindspace.engine.intake import buffer_ambient, committed, take_event
from mindspace.engine.loop import CutHandling, LoopResult, SideSession
from mindspace.engine.modes import (
    Mode,
    OperatingMode,
    SleepSchedule,
)
from mindspace.engine.night.budget import sleep_tick_seconds
from mindspace.engine.night.cycle import SleepCycle, SleepTickResult
from mindspace.engine.night.precompaction import extract_then_compact
from mindspace.engine.outcome import ReplyOutcome, is_addressed, reply_outcome, tick_tool_use
from mindspace.engine.records import (
    EngineState,
    Event,
)
from mindspace.engine.session import Sessions
from mindspace.engine.tick_records import (
    count_awake_tick,
    event_assessment,
    remember,
    reply_target,
)
from mindspace.errors import ConcurrencyError, LLMError
from mindspace.state.unit import Unit
from mindspace.tracing import Span
from mindspace.workspace.records import Counters, Goal
from mindspace.workspace.status import record_tick_tool_use

__all__ = [
    "AUTONOMOUS_TASK",
    "ReplyOutcome",
    "TickResult",
    "Ticker",
    "is_addressed",
    "tick_rate",
]

logger = logging.getLogger("mindspace.engine")

AUTONOMOUS_TASK = (
    "No event is pending. Work toward your active goals: take the most useful next step "
    "with your tools and update the goals' progress. If nothing can be done now, call noop."
)

TickKind = Literal["event", "autonomous", "context", "sleep", "idle"]


@dataclass
class TickResult:
    """What one tick did."""

    kind: TickKind
    status: Literal["done", "failed", "idle"] = "idle"
    event_id: str | None = None
    reply: str | None = None
    reply_target: str | None = None
    context_type: str | None = None
    pattern: ExecutionPattern | None = None
    prompt: AssembledPrompt | None = None
    loop: LoopResult | None = None
    error: str | None = None
    ambient_buffered: int = 0
    sleep: SleepTickResult | None = None
    notes: list[str] = field(default_factory=list)
    outcome: ReplyOutcome | None = None
    """For event ticks: whether the speaker got the model's reply, the fallback, or none."""
    mode: Mode = "awake"
    """The operating mode after the tick."""
    rate: float = 0.0
    """Seconds until the next tick should run, by the mode after this one."""
    sessions: list[SideSession] = field(default_factory=list)
    """Sessions run before the tick's own (pre-compaction extraction), for the viewer."""
    formed: tuple[str, ...] = ()
    """Ids of the memories formed from the event's words before the model was called."""
    events_left: int = 0
    """Events the tick found open (ambient ones aside) and did not take: the next tick
    has work. Events enqueued while the tick ran are not counted."""

    @property
    def cut(self) -> CutHandling | None:
        """Whether the reply hit the length limit (``continued`` or ``trimmed``)."""
        return self.loop.cut if self.loop else None

    @property
    def tool_calls(self) -> list[tuple[str, bool]]:
        """(name, ok) of every tool call in the tick."""
        return [(c.name, c.ok) for c in self.loop.calls] if self.loop else []


class Ticker:
    """Runs ticks for one assistant.

    Args:
        core: The assistant's state and ports.
        sessions: Runs the LLM session of an event, autonomous or context tick.
        sleep_cycle: Runs the sleep ticks.
    """

    def __init__(self, core: EngineCore, sessions: Sessions, sleep_cycle: SleepCycle) -> None:
        self.core = core
        self.sessions = sessions
        self.sleep_cycle = sleep_cycle
        self._counted = False
        """Whether the running awake tick was counted in its own commit."""

    @property
    def queue(self) -> EventQueue:
        """The assistant's event queue."""
        return self.core.queue

    async def tick(self) -> TickResult:
        """One tick: asleep, a sleep tick; awake, an event if pending, else goals, else idle."""
        with self.core.tracer.span(
            "tick", "mindspace.tick", {"mindspace.assistant": self.core.key}
        ) as span:
            result = await self._tick()
            _trace_tick(span, result)
            return result

    async def _tick(self) -> TickResult:
        a = self.core
        async with a.lock:
            # One round trip where the store can: the revision (to catch up with other
            # processes' commits) and the open events. The tick reads no revision again.
            revision, events = self.queue.open_with_revision()
            a.state.refresh_if_stale(revision)
            # Just refreshed under the lock: read the cache without asking the store again.
            if a.state.begin().doc(OperatingMode).mode == "sleep":
                a.notify("tick_started", mode="sleep")
                sleep = await self.sleep_cycle.tick(events)
                if sleep.woke:
                    a.notify("mode_changed", mode="awake", reason=sleep.wake_reason)
                a.notify("tick_finished", tick="sleep", phase=sleep.phase_after)
                result = TickResult(kind="sleep", status="done", sleep=sleep)
                result.events_left = sum(1 for e in events if not e.ambient)
                if sleep.sessions:  # the context-window viewer shows the last session
                    last = sleep.sessions[-1]
                    result.context_type = last.context_type
                    result.pattern, result.prompt, result.loop = (
                        last.pattern,
                        last.prompt,
                        last.loop,
                    )
                return self._finish(result)
            a.notify("tick_started", mode="awake", pending_events=len(events))
            self._counted = False
            ambient = [e for e in events if e.ambient]
            actionable = [e for e in events if not e.ambient]
            if actionable:
                # The overheard words are buffered in the same commit as the event's memory.
                result = await self._tick_event(actionable[0], ambient)
            else:
                await buffer_ambient(a, ambient)
                if self._autonomous_due():
                    result = await self._tick_autonomous()
                else:
                    result = TickResult(kind="idle")
            result.ambient_buffered = len(ambient)
            result.events_left = max(len(actionable) - 1, 0)
            if not self._counted:  # a tick that committed nothing of its own
                await self._after_awake_tick(result)
            self._finish(result)
        await self._deliver(result)
        if result.reply:
            a.notify(
                "reply", text=result.reply, target=result.reply_target, event_id=result.event_id
            )
        a.notify(
            "tick_finished",
            tick=result.kind,
            status=result.status,
            event_id=result.event_id,
            error=result.error,
        )
        return result

    def _finish(self, result: TickResult) -> TickResult:
        """Note the mode after the tick and the seconds until the next one."""
        # The tick's own commits are in the cache; a write from elsewhere since then only
        # shifts the next tick's time, which the next tick's own refresh corrects.
        unit = self.core.state.begin()
        state = unit.doc(OperatingMode)
        result.mode = state.mode
        result.rate = tick_rate(unit, self.core.settings)
        if state.mode == "sleep" and state.wake_at is not None:
            # A slow sleep rate must not overshoot the wake time by most of a tick.
            until = (parse_time(state.wake_at) - self.core.clock.now()).total_seconds()
            if until > 0:
                result.rate = min(result.rate, until)
        return result

    async def _after_awake_tick(self, result: TickResult) -> None:
        """Count an awake tick that committed nothing of its own (idle, or failed)."""
        a = self.core
        if not a.state.begin().doc(SleepSchedule).enabled:
            return  # awake ticks are only counted for the schedule's min_awake_ticks

        async def count(unit: Unit) -> str | None:
            return count_awake_tick(unit, a.clock)

        # Redone on fresh state when another process wrote since the tick began (a
        # failed model call may have taken long).
        self._fell_asleep(result, await committed(a, count))

    def _fell_asleep(self, result: TickResult, reason: str | None) -> None:
        """Tell of a scheduled sleep that the tick's commit began (``reason``), if any."""
        if reason is not None:
            result.notes.append(f"fell asleep: {reason}")
            self.core.notify("mode_changed", mode="sleep", reason=reason)

    async def run_context(self, context_type: str, *, task: str, entity: str = "") -> TickResult:
        """Run one LLM session in ``context_type`` (reflection, pre_compaction...) now."""
        async with self.core.lock:
            self.core.state.refresh_if_stale()
            return self._finish(
                await self._redone(partial(self._run, context_type, entity, task=task))
            )

    # -- events ----------------------------------------------------------------------
    async def _tick_event(self, event: Event, ambient: list[Event]) -> TickResult:
        a = self.core
        queue = self.queue
        if event.attempts >= a.settings.max_event_attempts:
            error = (
                f"Gave up on event {event.id!r} after {event.attempts} interrupted attempts; "
                "retry it with Assistant.retry_event() once the cause is fixed."
            )
            await buffer_ambient(a, ambient)
            queue.mark(event, status="failed", error=error)
            logger.error(error)
            return TickResult(kind="event", status="failed", event_id=event.id, error=error)
        taken = event.model_copy(
            update={
                "status": "processing",
                "attempts": event.attempts + 1,
                "updated_at": format_time(a.clock.now()),
            }
        )
        formed = await take_event(a, taken, ambient)
        entity = taken.source_entity or ""
        result = await self._redone(
            partial(
                self._run,
                "tick_event",
                entity,
                event=taken,
                assessment=event_assessment(taken),
                awake=True,
            )
        )
        if result.status == "failed":
            queue.mark(taken, status="failed", error=result.error)
            logger.error("Event %r failed: %s", taken.id, result.error)
        result.formed = formed
        return result

    def _autonomous_due(self) -> bool:
        a = self.core
        unit = a.state.begin()  # refreshed by the tick under the lock
        if not any(g.status == "active" for g in unit.all(Goal)):
            return False
        last = unit.doc(EngineState).last_autonomous_at
        if last is None:
            return True
        interval = timedelta(seconds=a.settings.autonomous_interval)
        return a.clock.now() - parse_time(last) >= interval

    async def _tick_autonomous(self) -> TickResult:
        result = await self._redone(
            partial(self._run, "tick_autonomous", "", task=AUTONOMOUS_TASK, awake=True)
        )
        if result.status == "failed":
            # A failing model must not turn the rate limit into a hot retry loop.
            logger.error("Autonomous tick failed: %s", result.error)
            with self.core.transaction() as unit:
                state = unit.doc(EngineState)
                now = format_time(self.core.clock.now())
                unit.put_doc(state.model_copy(update={"last_autonomous_at": now}))
        return result

    # -- the shared path -------------------------------------------------------------
    async def _redone(self, session: Callable[[], Awaitable[TickResult]]) -> TickResult:
        """Await ``session()`` (a :meth:`_run`); redo it on fresh state if another process won.

        Nothing of a lost attempt was written (the reply is delivered only after the
        commit), so the session is simply run again, at most ``conflict_retries`` times;
        the event's attempt count is not bumped by a redo.
        """
        retries = self.core.settings.conflict_retries
        for attempt in range(retries + 1):
            try:
                return await session()
            except ConcurrencyError as exc:
                if attempt >= retries:
                    raise
                logger.info("Tick of %r lost a race (%s); redoing it", self.core.key, exc)
                self.core.state.refresh_if_stale()
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def _run(
        self,
        context_type: str,
        entity: str,
        *,
        event: Event | None = None,
        task: str | None = None,
        assessment: dict[str, Any] | None = None,
        awake: bool = False,
    ) -> TickResult:
        """One session in ``context_type`` and the tick's single commit.

        ``awake``: an awake tick of the loop, counted toward the sleep schedule in the
        same commit (and put to sleep there when the schedule says so).
        """
        a = self.core
        config = get_context_config(context_type)
        kind: TickKind = (
            "event" if event else ("autonomous" if task == AUTONOMOUS_TASK else "context")
        )
        unit = a.state.begin()
        counters = unit.doc(Counters)
        unit.put_doc(counters.model_copy(update={"tick_count": counters.tick_count + 1}))
        emergency = None
        side: list[SideSession] = []
        if kind in ("event", "autonomous"):
            # Every thread is read by pre-compaction extraction before it is compacted.
            done = await extract_then_compact(
                unit, a, self.sessions, threshold=a.settings.compact_emergency_threshold
            )
            emergency, side = done.compaction, done.sessions
        try:
            pattern, prompt, loop = await self.sessions.run(
                unit, config, entity, event=event, task=task, assessment=assessment
            )
        except LLMError as exc:
            # Nothing of the tick is kept; the event is marked failed by the caller.
            return TickResult(
                kind=kind,
                status="failed",
                event_id=event.id if event else None,
                context_type=context_type,
                pattern=self.sessions.compose(unit, config, assessment),
                error=f"{type(exc).__name__}: {exc}",
            )
        now = format_time(a.clock.now())
        remember(unit, a.clock, entity, event, loop)
        outcome, reply, failure = reply_outcome(event, loop, a.settings.fallback_reply)
        state = unit.doc(EngineState)
        updates: dict[str, Any] = {"recent_errors": loop.recent_errors}
        if loop.last_tool_result is not None:
            updates["last_tool_result"] = loop.last_tool_result
        if kind == "autonomous":
            updates["last_autonomous_at"] = now
        unit.put_doc(state.model_copy(update=updates))
        if event is not None:
            # A tick that could not answer is still done (its writes are kept and running
            # it again would repeat them); the failure is recorded in the event's error.
            unit.put(
                event.model_copy(
                    update={"status": "done", "reply": reply, "error": failure, "updated_at": now}
                )
            )
        record_tick_tool_use(unit, tick_tool_use(loop, outcome), a.settings.tool_health_window)
        fell = count_awake_tick(unit, a.clock) if awake else None
        a.state.commit(unit)
        self._counted = awake
        if failure is not None:
            logger.warning("Event %r: %s", event.id if event else None, failure)
        notes: list[str] = []
        if emergency is not None and emergency.compacted:
            notes.append(f"emergency compaction: {emergency.to_dict()['threads']}")
        if loop.not_text:
            notes.append(
                f"the model's output held {loop.not_text} character(s) that are not text "
                "(lone surrogates or NUL); each was replaced with U+FFFD"
            )
            logger.warning("Replaced %d non-text characters in the model's output", loop.not_text)
        result = TickResult(
            notes=notes,
            kind=kind,
            status="done",
            event_id=event.id if event else None,
            reply=reply,
            reply_target=reply_target(event),
            context_type=context_type,
            pattern=pattern,
            prompt=prompt,
            loop=loop,
            outcome=outcome,
            sessions=side,
        )
        self._fell_asleep(result, fell)
        return result

    async def _deliver(self, result: TickResult) -> None:
        world = self.core.world
        # Only an event's reply answers someone. The prose of an autonomous or context
        # tick is the assistant thinking to itself (it acts through tools); the host
        # finds it in ``result.reply``.
        if world is None or not result.reply or result.kind != "event":
            return
        try:
            await world.say(result.reply, target=result.reply_target)
        except Exception:  # the host failed; the reply is kept on the event
            logger.exception("The host could not deliver the reply to %r", result.reply_target)


def _trace_tick(span: Span, result: TickResult) -> None:
    """Put what the tick did on its span: mode, kind, status, and the error if it failed."""
    span.set("mindspace.mode", "sleep" if result.kind == "sleep" else "awake")
    span.set("mindspace.tick.kind", result.kind)
    span.set("mindspace.tick.status", result.status)
    if result.event_id is not None:
        span.set("mindspace.event.id", result.event_id)
    if result.loop is not None and result.loop.usages:
        span.set("gen_ai.usage.input_tokens", result.loop.prompt_tokens)
        span.set("gen_ai.usage.cache_read.input_tokens", result.loop.cached_tokens)
    if result.error is not None:
        # "LLMError: ..." names the exception; other failures get one bounded name.
        kind = result.error.partition(":")[0]
        span.fail(kind if kind.isidentifier() else "TickFailed", result.error)


def tick_rate(unit: Unit, settings: Settings) -> float:
    """Seconds until the next tick should run, by the mode in ``unit``."""
    if unit.doc(OperatingMode).mode == "sleep":
        return sleep_tick_seconds(unit, settings)
    return settings.tick_rate_awake
