"""One LLM session: compose the execution pattern, assemble the prompt, run the loop.

Awake ticks, context sessions (reflection, pre-compaction...) and the sleep cycle's
extraction all run a session through :class:`Sessions` inside a unit of work the caller
commits.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from mindspace.clock import format_time
from mindspace.context.assembly import AssembledPrompt
from mindspace.context.assessment import (
    ASSESSED_CONTEXTS,
    ASSESSMENT_MAX_TOKENS,
    AssessmentReading,
    assessment_messages,
    combine_assessments,
    read_assessment,
)
from mindspace.context.components import COMPONENT_PENDING_EVENT
from mindspace.context.contexts import ContextConfig, get_context_config
from mindspace.context.patterns import (
    ExecutionConfig,
    ExecutionPattern,
    select_execution_pattern,
    token_pressure,
)
from mindspace.engine.core import EngineCore
from mindspace.engine.executor import ToolExecutor
from mindspace.engine.hygiene import ReplyPolicy
from mindspace.engine.loop import LoopResult, SideSession, offered_tools, run_react_loop
from mindspace.engine.prompting import PromptInputs
from mindspace.engine.records import EngineState, Event
from mindspace.engine.side import SideRunner, SubAgentCount
from mindspace.errors import LLMError
from mindspace.llm.port import Message, clean_response
from mindspace.state.unit import Unit
from mindspace.tokens import estimate_tokens
from mindspace.tools.base import Tool
from mindspace.tools.profiles import listed_schemas
from mindspace.workspace.records import ContextUsage

__all__ = ["Sessions"]


logger = logging.getLogger("mindspace.engine")


class Sessions:
    """Runs LLM sessions for one assistant.

    Args:
        core: The assistant's state and ports.
        executor: Runs the tools the model calls.
    """

    def __init__(self, core: EngineCore, executor: ToolExecutor) -> None:
        self.core = core
        self.executor = executor
        self.sub_agents = SubAgentCount()
        # A tool called outside a loop (by a host, or once approved) gets side sessions too.
        executor.side_factory = self.direct_side

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
        side_of: SideRunner | None = None,
        tool_result: str | None = None,
        history: Sequence[Message] | None = None,
    ) -> tuple[ExecutionPattern, AssembledPrompt, LoopResult]:
        """Compose, assemble and run the loop inside ``unit`` (the caller commits).

        ``record_usage`` is off for side sessions (pre-compaction extraction), whose
        prompt is not the assistant's context window. ``side_of`` is the runner of the
        session whose tool started this one (``goal_decompose``, a sub-agent); such a
        session is never assessed. With ``task_assessment_enabled`` an event or
        autonomous session first asks the model for its layer-3 assessment
        (:mod:`mindspace.context.assessment`).
        ``tool_result`` fills the tool_result component instead of the last awake tool
        result ("" leaves it empty). A ``task`` in a context without the pending_event
        component (reflection_cont) is sent as the closing user turn, so the model has
        something to answer.

        Raises:
            LLMError: the model failed after the adapter's retries.
        """
        a = self.core
        reading = None
        if side_of is None:
            reading = await self._assess(unit, config, event, task, assessment)
        if reading is not None and reading.assessment is not None:
            assessment = combine_assessments(assessment, reading.assessment)
        pattern = self.compose(unit, config, assessment)

        # The tool definitions travel with every request: they count in the estimate and
        # come off the budget before the conversation history gets its share.
        tools = offered_tools(a.tools, config, pattern)
        profile = a.settings.tool_profile
        if profile == "full":
            # The same text as json.dumps of the schemas, from each tool's cached JSON; the
            # estimate is memoised, so this no longer parses and re-serialises every schema.
            listed = "[" + ", ".join(t.schema_json() for t in tools) + "]"
        else:
            listed = json.dumps(listed_schemas(tools, profile)[0])
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
            history=tuple(history) if history is not None else None,
        )
        prompt = await a.prompt_builder.build(inputs)
        messages = list(prompt.messages)
        if task and COMPONENT_PENDING_EVENT not in config.enabled_components:
            messages = _close_with(messages, task)
        side = self._runner(unit, pattern, tools, entity)
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
            run_tool=functools.partial(self.executor.for_loop, side=side),
            clock=a.clock,
            max_tokens=a.settings.llm_max_tokens,
            temperature=a.settings.llm_temperature,
            event_id=event.id if event else None,
            record_usage=record_usage,
            tool_profile=profile,
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
        loop.side_sessions = side.sessions
        if reading is not None:
            loop.assessment = reading.assessment
            loop.assessment_problem = reading.problem
        return pattern, prompt, loop

    async def side(
        self,
        unit: Unit,
        context_type: str,
        task: str,
        *,
        entity: str = "",
        tool_result: str | None = None,
        history: Sequence[Message] | None = None,
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
            history=history,
        )
        return SideSession(context_type, task, pattern, prompt, loop)

    def direct_side(self, unit: Unit) -> SideRunner:
        """Side sessions for a tool called outside a loop, as if from an event tick."""
        config = get_context_config("tick_event")
        pattern = self.compose(unit, config, None)
        return self._runner(unit, pattern, offered_tools(self.core.tools, config, pattern), "")

    def _runner(
        self, unit: Unit, pattern: ExecutionPattern, tools: Sequence[Tool[Any]], entity: str
    ) -> SideRunner:
        static = self._static(unit)
        return SideRunner(
            self._run_side,
            pattern=pattern,
            tools=[t.name for t in tools],
            entity=entity,
            budget=int(static["sub_agent_budget"]),
            max_iterations=self.core.settings.sub_agent_max_iterations,
            count=self.sub_agents,
        )

    async def _run_side(
        self, unit: Unit, config: ContextConfig, entity: str, task: str, parent: SideRunner
    ) -> tuple[ExecutionPattern, AssembledPrompt, LoopResult]:
        # A side session's prompt is not the assistant's context window, and it is not
        # assessed: its limits come from the tool that started it.
        return await self.run(unit, config, entity, task=task, record_usage=False, side_of=parent)

    async def _assess(
        self,
        unit: Unit,
        config: ContextConfig,
        event: Event | None,
        task: str | None,
        given: dict[str, Any] | None,
    ) -> AssessmentReading | None:
        """Layer 3: one short request for the model's assessment, when it is switched on."""
        a = self.core
        if config.context_type not in ASSESSED_CONTEXTS:
            return None
        if not self._static(unit)["task_assessment_enabled"]:
            return None
        base = self.compose(unit, config, given)  # what the host's assessment left
        if base.max_iterations == 1 and base.dangerous_requires_confirm:
            return None  # nothing left to narrow
        text = task or (event.content if event is not None else "")
        try:
            response = await a.llm.complete(
                assessment_messages(text, base),
                (),
                max_tokens=min(ASSESSMENT_MAX_TOKENS, a.settings.llm_max_tokens),
                temperature=a.settings.llm_temperature,
            )
        except LLMError as exc:
            logger.warning("Task assessment skipped: the model failed (%s)", exc)
            return AssessmentReading(None, f"the model failed: {exc}")
        response, _ = clean_response(response)  # not text becomes U+FFFD (validation.py)
        reading = read_assessment(response.text or "")
        if reading.problem is not None:
            logger.warning("Task assessment ignored (%s): %r", reading.problem, response.text)
        return reading

    def _static(self, unit: Unit) -> dict[str, Any]:
        """Layer 1: the stored execution_config, with the settings' switches and budget."""
        static = unit.doc(ExecutionConfig).as_static_config()
        s = self.core.settings
        static["task_assessment_enabled"] = bool(
            static["task_assessment_enabled"] or s.task_assessment_enabled
        )
        static["sub_agents_enabled"] = bool(static["sub_agents_enabled"] or s.sub_agents_enabled)
        static["sub_agent_budget"] = min(int(static["sub_agent_budget"]), s.sub_agent_budget)
        return static

    def compose(
        self, unit: Unit, config: ContextConfig, assessment: dict[str, Any] | None
    ) -> ExecutionPattern:
        """The execution pattern for ``config`` with the runtime signals of this moment."""
        a = self.core
        static = self._static(unit)
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


def _close_with(messages: list[Message], task: str) -> list[Message]:
    """``messages`` ending in ``task`` as the user's turn (joined to a closing user message:
    several chat templates refuse two user messages in a row)."""
    if messages and messages[-1].role == "user" and not messages[-1].cache_point:
        last = messages[-1]
        # Under the pending event's heading, as the assembled turn puts a request.
        closing = f"{last.content or ''}\n\n## Pending Event\n{task}"
        return [*messages[:-1], replace(last, content=closing)]
    return [*messages, Message("user", task)]
