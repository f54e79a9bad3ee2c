"""The ReAct loop under a composed execution pattern.

Each iteration asks the LLM once, then runs the tool calls it made:

* a tool that is not offered in this context (filtered out by name or category) is
  refused, as are unknown tools and malformed arguments; the error goes back to the
  model and counts towards ``recent_errors``;
* SAFE_CHAIN tools continue the loop; a TERMINAL tool ends it when the pattern says so;
* a DANGEROUS tool under ``dangerous_requires_confirm`` becomes a pending approval and
  the model is told it awaits approval;
* ASYNC_REQUIRED tools are awaited like any other.

The loop ends on a plain-text answer (the reply), a terminal tool, a single-action
pattern after its one round, or ``max_iterations`` - a hard stop.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from mindspace.clock import Clock, format_time
from mindspace.context.contexts import ContextConfig
from mindspace.context.patterns import ExecutionPattern
from mindspace.engine.records import Approval, EngineState
from mindspace.llm.port import LLM, LLMResponse, Message, ToolCall
from mindspace.state.unit import Unit
from mindspace.tools.base import Tool, ToolCategory
from mindspace.tools.registry import ToolRegistry
from mindspace.workspace.records import ContextUsage
from mindspace.workspace.status import LoopSnapshot

__all__ = ["LoopResult", "ToolCallRecord", "ToolRunnerFn", "offered_tools", "run_react_loop"]

logger = logging.getLogger("mindspace.engine")

StopReason = Literal["final_answer", "terminal_tool", "single_action", "max_iterations"]
MAX_STORED_RESULT_CHARS = 4_000


@dataclass(frozen=True)
class ToolCallRecord:
    """One tool call made in the loop."""

    iteration: int
    call_id: str
    name: str
    arguments: str
    ok: bool
    result: dict[str, Any]
    status: Literal["ran", "refused", "awaiting_approval"] = "ran"


@dataclass
class LoopResult:
    """How the loop went."""

    reply: str | None = None
    stopped_by: StopReason = "max_iterations"
    iterations: int = 0
    calls: list[ToolCallRecord] = field(default_factory=list)
    transcript: list[Message] = field(default_factory=list)
    recent_errors: int = 0
    last_tool_result: str | None = None


ToolRunnerFn = Callable[[str, str, Unit, LoopSnapshot], Awaitable[tuple[bool, dict[str, Any]]]]
"""Runs one tool call inside the loop's unit; returns (ok, result)."""


def offered_tools(
    registry: ToolRegistry, config: ContextConfig, pattern: ExecutionPattern
) -> list[Tool[Any]]:
    """The tools this context offers: its name filter and the pattern's categories."""
    tools = registry.tools()
    if config.tool_filter is not None:
        allowed = set(config.tool_filter)
        tools = [t for t in tools if t.name in allowed]
    if pattern.allowed_categories is not None:
        categories = set(pattern.allowed_categories)
        tools = [t for t in tools if t.category.value in categories]
    return tools


async def run_react_loop(
    *,
    llm: LLM,
    messages: list[Message],
    registry: ToolRegistry,
    config: ContextConfig,
    pattern: ExecutionPattern,
    unit: Unit,
    run_tool: ToolRunnerFn,
    clock: Clock,
    max_tokens: int | None,
    temperature: float | None,
    event_id: str | None = None,
    record_usage: bool = True,
) -> LoopResult:
    """Run the loop; raises :class:`~mindspace.errors.LLMError` when the model fails."""
    tools = offered_tools(registry, config, pattern)
    by_name = {t.name: t for t in tools}
    schemas = [t.schema() for t in tools]
    result = LoopResult(recent_errors=unit.doc(EngineState).recent_errors)
    conversation = list(messages)
    names_this_cycle: list[str] = []

    for iteration in range(1, pattern.max_iterations + 1):
        result.iterations = iteration
        response = await llm.complete(
            conversation, schemas, max_tokens=max_tokens, temperature=temperature
        )
        if record_usage:
            _record_usage(unit, response, clock)
        if not response.tool_calls:
            result.reply = (response.text or "").strip() or None
            if result.reply:
                result.transcript.append(Message("assistant", result.reply))
            result.stopped_by = "final_answer"
            return result

        said = Message("assistant", response.text, response.tool_calls)
        conversation.append(said)
        result.transcript.append(said)
        ended = False
        for index, call in enumerate(response.tool_calls):
            snapshot = LoopSnapshot(
                iteration=iteration,
                max_iterations=pattern.max_iterations,
                tools_this_cycle=tuple(names_this_cycle),
                in_chain=True,
                chain_depth=iteration,
                pending_tools=tuple(c.name for c in response.tool_calls[index + 1 :]),
            )
            record = await _one_call(
                call,
                iteration,
                by_name,
                registry,
                pattern,
                unit,
                run_tool,
                snapshot,
                clock,
                event_id,
            )
            names_this_cycle.append(call.name)
            result.calls.append(record)
            result.recent_errors = 0 if record.ok else result.recent_errors + 1
            text = _result_text(record.result)
            result.last_tool_result = f"{call.name}: {text}"
            answer = Message("tool", text, tool_call_id=call.id)
            conversation.append(answer)
            result.transcript.append(answer)
            tool = by_name.get(call.name)
            if (
                record.status == "ran"
                and tool is not None
                and tool.category is ToolCategory.TERMINAL
                and pattern.terminal_ends_loop
            ):
                ended = True
        if ended:
            result.stopped_by = "terminal_tool"
            return result
        if pattern.mode == "single_action":
            result.stopped_by = "single_action"
            return result

    logger.warning(
        "ReAct loop stopped at max_iterations=%d without a final answer", pattern.max_iterations
    )
    result.stopped_by = "max_iterations"
    return result


async def _one_call(
    call: ToolCall,
    iteration: int,
    offered: dict[str, Tool[Any]],
    registry: ToolRegistry,
    pattern: ExecutionPattern,
    unit: Unit,
    run_tool: ToolRunnerFn,
    snapshot: LoopSnapshot,
    clock: Clock,
    event_id: str | None,
) -> ToolCallRecord:
    tool = offered.get(call.name)
    if tool is None and call.name in registry:
        refusal = {
            "success": False,
            "error": f"Tool {call.name!r} is not available in this context",
            "suggestion": "Use one of the offered tools: " + ", ".join(sorted(offered)),
        }
        return ToolCallRecord(
            iteration, call.id, call.name, call.arguments, False, refusal, "refused"
        )
    if (
        tool is not None
        and tool.category is ToolCategory.DANGEROUS
        and pattern.dangerous_requires_confirm
    ):
        return _await_approval(call, iteration, unit, clock, event_id)
    ok, outcome = await run_tool(call.name, call.arguments, unit, snapshot)
    return ToolCallRecord(iteration, call.id, call.name, call.arguments, ok, outcome)


def _await_approval(
    call: ToolCall, iteration: int, unit: Unit, clock: Clock, event_id: str | None
) -> ToolCallRecord:
    state = unit.doc(EngineState)
    approval_id = f"apr_{state.next_approval + 1}"
    unit.put_doc(state.model_copy(update={"next_approval": state.next_approval + 1}))
    unit.put(
        Approval(
            id=approval_id,
            tool=call.name,
            arguments=call.arguments,
            event_id=event_id,
            requested_at=format_time(clock.now()),
        )
    )
    outcome = {
        "success": True,
        "status": "awaiting_approval",
        "approval_id": approval_id,
        "message": f"{call.name!r} is DANGEROUS and awaits approval by a host or an admin; "
        "it has not run yet and will run once approved.",
    }
    return ToolCallRecord(
        iteration, call.id, call.name, call.arguments, True, outcome, "awaiting_approval"
    )


def _record_usage(unit: Unit, response: LLMResponse, clock: Clock) -> None:
    if response.usage is None:
        return
    unit.put_doc(
        ContextUsage(
            estimated_used=response.usage.prompt_tokens,
            source="provider",
            recorded_at=format_time(clock.now()),
        )
    )


def _result_text(result: dict[str, Any]) -> str:
    text = json.dumps(result, ensure_ascii=False, default=str)
    if len(text) > MAX_STORED_RESULT_CHARS:
        text = text[: MAX_STORED_RESULT_CHARS - 20] + '..."(truncated)'
    return text
