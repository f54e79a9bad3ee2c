"""The awake tick: take the next event (or work on goals), run the loop, commit once.

A tick is one unit of work. Everything it changes - the tools' writes, conversation
history, metrics, and the event's ``done`` mark - is committed together at the end, so
a crash mid-tick stores nothing of it and the event runs again from the start.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

from mindspace.clock import format_time, parse_time
from mindspace.context.assembly import AssembledPrompt
from mindspace.context.contexts import ContextConfig, get_context_config
from mindspace.context.patterns import (
    ExecutionConfig,
    ExecutionPattern,
    select_execution_pattern,
    token_pressure,
)
from mindspace.context.tokens import estimate_tokens
from mindspace.engine.compaction import compact_conversation_history
from mindspace.engine.events import EventQueue
from mindspace.engine.hygiene import ReplyPolicy
from mindspace.engine.loop import CutHandling, LoopResult, offered_tools, run_react_loop
from mindspace.engine.modes import (
    OperatingMode,
    SleepSchedule,
    check_sleep_schedule,
    transition_mode,
)
from mindspace.engine.outcome import ReplyOutcome, is_addressed, reply_outcome, tick_tool_use
from mindspace.engine.prompting import PromptInputs
from mindspace.engine.records import (
    BufferedMessage,
    ContextBuffer,
    ConversationMessage,
    EngineState,
    Event,
    StoredToolCall,
)
from mindspace.engine.sleep import SleepCycle, SleepTickResult
from mindspace.errors import LLMError
from mindspace.llm.port import Message
from mindspace.memory.entities import EntityBook
from mindspace.memory.working import WorkingMemoryBook
from mindspace.state.unit import Unit
from mindspace.workspace.records import ContextUsage, Counters, Goal
from mindspace.workspace.status import record_tick_tool_use

if TYPE_CHECKING:
    from mindspace.engine.assistant import Assistant

__all__ = ["AUTONOMOUS_TASK", "ReplyOutcome", "TickResult", "Ticker", "is_addressed"]

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

    @property
    def cut(self) -> CutHandling | None:
        """Whether the reply hit the length limit (``continued`` or ``trimmed``)."""
        return self.loop.cut if self.loop else None

    @property
    def tool_calls(self) -> list[tuple[str, bool]]:
        """(name, ok) of every tool call in the tick."""
        return [(c.name, c.ok) for c in self.loop.calls] if self.loop else []


class Ticker:
    """Runs ticks for one assistant."""

    def __init__(self, assistant: Assistant) -> None:
        self.assistant = assistant
        self.sleep_cycle = SleepCycle(assistant)

    @property
    def queue(self) -> EventQueue:
        """The assistant's event queue."""
        a = self.assistant
        return EventQueue(a.store, a.info.id, a.clock)

    async def tick(self) -> TickResult:
        """One tick: asleep, a sleep tick; awake, an event if pending, else goals, else idle."""
        a = self.assistant
        async with a.lock:
            a.state.refresh_if_stale()
            events = self.queue.open()
            if a.read().doc(OperatingMode).mode == "sleep":
                a.notify("tick_started", mode="sleep")
                sleep = await self.sleep_cycle.tick(events)
                if sleep.woke:
                    a.notify("mode_changed", mode="awake", reason=sleep.wake_reason)
                a.notify("tick_finished", tick="sleep", phase=sleep.phase_after)
                return TickResult(kind="sleep", status="done", sleep=sleep)
            a.notify("tick_started", mode="awake", pending_events=len(events))
            buffered = self._buffer_ambient([e for e in events if e.ambient])
            actionable = [e for e in events if not e.ambient]
            if actionable:
                result = await self._tick_event(actionable[0])
            elif self._autonomous_due():
                result = await self._tick_autonomous()
            else:
                result = TickResult(kind="idle")
            result.ambient_buffered = buffered
            self._after_awake_tick(result)
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

    def _after_awake_tick(self, result: TickResult) -> None:
        a = self.assistant
        unit = a.read()
        if not unit.doc(SleepSchedule).enabled:
            return  # awake ticks are only counted for the schedule's min_awake_ticks
        with a.transaction() as unit:
            state = unit.doc(OperatingMode)
            unit.put_doc(state.model_copy(update={"awake_ticks": state.awake_ticks + 1}))
            due, target, reason = check_sleep_schedule(unit, a.clock)
            if due and target == "sleep":
                transition_mode(unit, a.clock, "sleep", reason, scheduled=True)
                result.notes.append(f"fell asleep: {reason}")
                a.notify("mode_changed", mode="sleep", reason=reason)

    async def run_context(self, context_type: str, *, task: str, entity: str = "") -> TickResult:
        """Run one LLM session in ``context_type`` (reflection, pre_compaction...) now."""
        async with self.assistant.lock:
            self.assistant.state.refresh_if_stale()
            return await self._run(context_type, entity, task=task)

    # -- events ----------------------------------------------------------------------
    def _buffer_ambient(self, ambient: list[Event]) -> int:
        if not ambient:
            return 0
        a = self.assistant
        now = format_time(a.clock.now())
        with a.transaction() as unit:
            buffer = unit.doc(ContextBuffer)
            added = tuple(
                BufferedMessage(at=e.created_at, source=e.source_entity, text=e.content)
                for e in ambient
            )
            keep = a.settings.context_buffer_size
            unit.put_doc(ContextBuffer(messages=(*buffer.messages, *added)[-keep:]))
            for event in ambient:
                unit.put(event.model_copy(update={"status": "done", "updated_at": now}))
        return len(ambient)

    async def _tick_event(self, event: Event) -> TickResult:
        a = self.assistant
        queue = self.queue
        if event.attempts >= a.settings.max_event_attempts:
            error = (
                f"Gave up on event {event.id!r} after {event.attempts} interrupted attempts; "
                "retry it with Assistant.retry_event() once the cause is fixed."
            )
            queue.mark(event, status="failed", error=error)
            logger.error(error)
            return TickResult(kind="event", status="failed", event_id=event.id, error=error)
        event = queue.mark(event, status="processing", attempts=event.attempts + 1)
        entity = event.source_entity or ""
        result = await self._run(
            "tick_event", entity, event=event, assessment=_event_assessment(event)
        )
        if result.status == "failed":
            queue.mark(event, status="failed", error=result.error)
            logger.error("Event %r failed: %s", event.id, result.error)
        return result

    def _autonomous_due(self) -> bool:
        a = self.assistant
        unit = a.read()
        if not any(g.status == "active" for g in unit.all(Goal)):
            return False
        last = unit.doc(EngineState).last_autonomous_at
        if last is None:
            return True
        interval = timedelta(seconds=a.settings.autonomous_interval)
        return a.clock.now() - parse_time(last) >= interval

    async def _tick_autonomous(self) -> TickResult:
        result = await self._run("tick_autonomous", "", task=AUTONOMOUS_TASK)
        if result.status == "failed":
            # A failing model must not turn the rate limit into a hot retry loop.
            logger.error("Autonomous tick failed: %s", result.error)
            with self.assistant.transaction() as unit:
                state = unit.doc(EngineState)
                now = format_time(self.assistant.clock.now())
                unit.put_doc(state.model_copy(update={"last_autonomous_at": now}))
        return result

    # -- the shared path -------------------------------------------------------------
    async def _run(
        self,
        context_type: str,
        entity: str,
        *,
        event: Event | None = None,
        task: str | None = None,
        assessment: dict[str, Any] | None = None,
    ) -> TickResult:
        a = self.assistant
        config = get_context_config(context_type)
        kind: TickKind = (
            "event" if event else ("autonomous" if task == AUTONOMOUS_TASK else "context")
        )
        unit = a.state.begin()
        counters = unit.doc(Counters)
        unit.put_doc(counters.model_copy(update={"tick_count": counters.tick_count + 1}))
        if event is not None and event.source_entity:
            # First contact creates the profile; working memory follows the conversation.
            # The message is kept verbatim on the profile in this tick's commit, so what
            # people say is remembered whether or not the model calls a tool.
            entities = EntityBook(unit, a.clock, a.settings, a.guard)
            entities.meet(event.source_entity)
            entities.note_message(event.source_entity, event.content, event_type=event.type)
            topic = event.metadata.get("topic")
            WorkingMemoryBook(unit, a.clock).note_message(
                event.source_entity, event.content, topic=topic if isinstance(topic, str) else None
            )
        emergency = None
        if kind in ("event", "autonomous"):
            emergency = await compact_conversation_history(
                unit, a.clock, a.settings, a.llm, threshold=a.settings.compact_emergency_threshold
            )
        try:
            pattern, prompt, loop = await self.session(
                unit, config, entity, event=event, task=task, assessment=assessment
            )
        except LLMError as exc:
            # Nothing of the tick is kept; the event is marked failed by the caller.
            return TickResult(
                kind=kind,
                status="failed",
                event_id=event.id if event else None,
                context_type=context_type,
                pattern=self.compose(unit, config, assessment),
                error=f"{type(exc).__name__}: {exc}",
            )
        now = format_time(a.clock.now())
        self._remember(unit, entity, event, loop)
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
        a.state.commit(unit)
        if failure is not None:
            logger.warning("Event %r: %s", event.id if event else None, failure)
        notes = []
        if emergency is not None and emergency.compacted:
            notes.append(f"emergency compaction: {emergency.to_dict()['threads']}")
        return TickResult(
            notes=notes,
            kind=kind,
            status="done",
            event_id=event.id if event else None,
            reply=reply,
            reply_target=_reply_target(event),
            context_type=context_type,
            pattern=pattern,
            prompt=prompt,
            loop=loop,
            outcome=outcome,
        )

    async def session(
        self,
        unit: Unit,
        config: ContextConfig,
        entity: str,
        *,
        event: Event | None = None,
        task: str | None = None,
        assessment: dict[str, Any] | None = None,
        record_usage: bool = True,
    ) -> tuple[ExecutionPattern, AssembledPrompt, LoopResult]:
        """Compose, assemble and run the loop inside ``unit`` (the caller commits).

        ``record_usage`` is off for side sessions (pre-compaction extraction), whose
        prompt is not the assistant's context window.

        Raises:
            LLMError: the model failed after the adapter's retries.
        """
        a = self.assistant
        pattern = self.compose(unit, config, assessment)
        present = event.metadata.get("present") if event is not None else None
        # The tool definitions travel with every request: they count in the estimate and
        # come off the budget before the conversation history gets its share.
        tools = offered_tools(a.tools, config, pattern)
        tool_tokens = _tool_tokens(json.dumps([t.schema() for t in tools])) if tools else 0
        inputs = PromptInputs(
            unit=unit,
            settings=a.settings,
            clock=a.clock,
            config=config,
            assistant_key=a.key,
            entity=entity,
            event=event,
            task=task,
            present_entities=tuple(str(p) for p in present) if isinstance(present, list) else (),
            reserved_tokens=tool_tokens,
        )
        prompt = await a.prompt_builder.build(inputs)
        if record_usage:
            unit.put_doc(
                ContextUsage(
                    estimated_used=prompt.estimated_tokens + tool_tokens,
                    source="estimate",
                    recorded_at=format_time(a.clock.now()),
                )
            )
        loop = await run_react_loop(
            llm=a.llm,
            messages=list(prompt.messages),
            registry=a.tools,
            config=config,
            pattern=pattern,
            unit=unit,
            run_tool=a.loop_tool_runner,
            clock=a.clock,
            max_tokens=a.settings.llm_max_tokens,
            temperature=a.settings.llm_temperature,
            event_id=event.id if event else None,
            record_usage=record_usage,
            reply_policy=ReplyPolicy(
                assistant_key=a.key,
                # The instructions only: memories and goals also live in the system
                # message, and a reply may rightly quote them word for word.
                system_prompt=next(
                    (c.content for c in prompt.components if c.key == "system_prompt"), ""
                ),
                event_text=event.content if event is not None else "",
                max_chars=a.settings.max_reply_chars,
            ),
        )
        loop.tool_tokens = tool_tokens
        return pattern, prompt, loop

    def compose(
        self, unit: Unit, config: ContextConfig, assessment: dict[str, Any] | None
    ) -> ExecutionPattern:
        """The execution pattern for ``config`` with the runtime signals of this moment."""
        a = self.assistant
        static = unit.doc(ExecutionConfig).as_static_config()
        usage = unit.doc(ContextUsage).estimated_used or 0
        signals = {
            "token_pressure": token_pressure(usage / a.settings.model_limit * 100),
            "recent_errors": unit.doc(EngineState).recent_errors,
        }
        merged = dict(assessment or {})
        merged["context_signals"] = {**signals, **dict(merged.get("context_signals") or {})}
        return select_execution_pattern(static, config, merged)

    def _remember(self, unit: Unit, entity: str, event: Event | None, loop: LoopResult) -> None:
        now = format_time(self.assistant.clock.now())
        state = unit.doc(EngineState)
        number = state.next_message
        new: list[Message] = []
        if event is not None:
            new.append(Message("user", event.content))
        new.extend(loop.transcript)
        for message in new:
            number += 1
            unit.put(
                ConversationMessage(
                    id=f"m{number}",
                    entity=entity,
                    role=message.role,
                    content=message.content,
                    tool_calls=tuple(
                        StoredToolCall(id=c.id, tool=c.name, arguments=c.arguments)
                        for c in message.tool_calls
                    ),
                    tool_call_id=message.tool_call_id,
                    created_at=now,
                )
            )
        unit.put_doc(state.model_copy(update={"next_message": number}))

    async def _deliver(self, result: TickResult) -> None:
        world = self.assistant.world
        if world is None or not result.reply:
            return
        try:
            await world.say(result.reply, target=result.reply_target)
        except Exception:  # the host failed; the reply is kept on the event
            logger.exception("The host could not deliver the reply to %r", result.reply_target)


def _reply_target(event: Event | None) -> str | None:
    if event is None:
        return None
    private = event.type == "whisper" or event.classification == "direct_message"
    return event.source_entity if private else None


@lru_cache(maxsize=64)
def _tool_tokens(schemas: str) -> int:
    return estimate_tokens(schemas)


def _event_assessment(event: Event) -> dict[str, Any] | None:
    # A host (or a classifier) may tell the engine what kind of event this is.
    event_class = event.metadata.get("event_class")
    if isinstance(event_class, str):
        return {"context_signals": {"event_class": event_class}}
    return None
