"""One LLM session: compose the execution pattern, assemble the prompt, run the loop.

Awake ticks, context sessions (reflection, pre-compaction...) and the sleep cycle's
extraction all run a session through :class:`Sessions` inside a unit of work the caller
commits.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from mindspace.clock import format_time
from mindspace.context.assembly import AssembledPrompt
from mindspace.context.components import COMPONENT_PENDING_EVENT
from mindspace.context.contexts import ContextConfig, get_context_config
from mindspace.context.patterns import (
    ExecutionConfig,
    ExecutionPattern,
    select_execution_pattern,
    token_pressure,
)
from mindspace.context.tokens import estimate_tokens
from mindspace.engine.core import EngineCore
from mindspace.engine.executor import ToolExecutor
from mindspace.engine.hygiene import ReplyPolicy
from mindspace.engine.loop import LoopResult, offered_tools, run_react_loop
from mindspace.engine.prompting import PromptInputs
from mindspace.engine.records import EngineState, Event
from mindspace.llm.port import Message
from mindspace.state.unit import Unit
from mindspace.workspace.records import ContextUsage

__all__ = ["Sessions", "SideSession"]


@dataclass
class SideSession:
    """A session run inside another tick (reflection while asleep, pre-compaction
    extraction...): what the context-window viewer shows of it."""

    context_type: str
    pattern: ExecutionPattern
    prompt: AssembledPrompt
    loop: LoopResult

    @property
    def reply(self) -> str:
        """The model's final text ("" when it ended without one)."""
        return self.loop.reply or ""


class Sessions:
    """Runs LLM sessions for one assistant.

    Args:
        core: The assistant's state and ports.
        executor: Runs the tools the model calls.
    """

    def __init__(self, core: EngineCore, executor: ToolExecutor) -> None:
        self.core = core
        self.executor = executor

    async def run(
        self,
        unit: Unit,
        config: ContextConfig,
        entity: str,
        *,
        event: Event | None = None,
        task: str | None = None,
        assessment: dict[str, Any] | None = None,
        record_usage: bool = True,
        tool_result: str | None = None,
    ) -> tuple[ExecutionPattern, AssembledPrompt, LoopResult]:
        """Compose, assemble and run the loop inside ``unit`` (the caller commits).

        ``record_usage`` is off for side sessions (pre-compaction extraction), whose
        prompt is not the assistant's context window. ``tool_result`` fills the
        tool_result component instead of the last awake tool result ("" leaves it empty).
        A ``task`` in a context without the pending_event component (reflection_cont)
        is sent as the closing user turn, so the model has something to answer.

        Raises:
            LLMError: the model failed after the adapter's retries.
        """
        a = self.core
        pattern = self.compose(unit, config, assessment)

        # The tool definitions travel with every request: they count in the estimate and
        # come off the budget before the conversation history gets its share.
        tools = offered_tools(a.tools, config, pattern)
        # The same text as json.dumps of the schemas, from each tool's cached JSON; the
        # estimate is memoised, so this no longer parses and re-serialises every schema.
        listed = "[" + ", ".join(t.schema_json() for t in tools) + "]"
        tool_tokens = _tool_tokens(listed) if tools else 0
        inputs = PromptInputs(
            unit=unit,
            settings=a.settings,
            clock=a.clock,
            config=config,
            assistant_key=a.key,
            entity=entity,
            event=event,
            task=task,
            present_entities=event.meta.present if event is not None else (),
            reserved_tokens=tool_tokens,
            tool_result=tool_result,
        )
        prompt = await a.prompt_builder.build(inputs)
        messages = list(prompt.messages)
        if task and COMPONENT_PENDING_EVENT not in config.enabled_components:
            messages.append(Message("user", task))
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
            messages=messages,
            registry=a.tools,
            config=config,
            pattern=pattern,
            unit=unit,
            run_tool=self.executor.for_loop,
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

    async def side(
        self,
        unit: Unit,
        context_type: str,
        task: str,
        *,
        entity: str = "",
        tool_result: str | None = None,
    ) -> SideSession:
        """Run a session of ``context_type`` inside another tick's ``unit``.

        Its prompt is not the assistant's context window, so the recorded usage stays;
        the caller keeps the returned :class:`SideSession` for the viewer.

        Raises:
            LLMError: the model failed after the adapter's retries.
        """
        pattern, prompt, loop = await self.run(
            unit,
            get_context_config(context_type),
            entity,
            task=task,
            record_usage=False,
            tool_result=tool_result,
        )
        return SideSession(context_type, pattern, prompt, loop)

    def compose(
        self, unit: Unit, config: ContextConfig, assessment: dict[str, Any] | None
    ) -> ExecutionPattern:
        """The execution pattern for ``config`` with the runtime signals of this moment."""
        a = self.core
        static = unit.doc(ExecutionConfig).as_static_config()
        usage = unit.doc(ContextUsage).estimated_used or 0
        signals = {
            "token_pressure": token_pressure(usage / a.settings.model_limit * 100),
            "recent_errors": unit.doc(EngineState).recent_errors,
        }
        merged = dict(assessment or {})
        merged["context_signals"] = {**signals, **dict(merged.get("context_signals") or {})}
        return select_execution_pattern(static, config, merged)


@lru_cache(maxsize=64)
def _tool_tokens(schemas: str) -> int:
    return estimate_tokens(schemas)
