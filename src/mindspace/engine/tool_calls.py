"""One tool call of the ReAct loop: run, refused, repeated, unreadable or awaiting approval.

:func:`one_call` runs a call the model made (refusing a tool this context does not
offer, turning a DANGEROUS one into a pending approval); :func:`repeated` and
:func:`unreadable` answer the calls that are not run; :func:`calls_from_text` turns tool
calls the model wrote as text into calls under synthesised ids. Each gives a
:class:`ToolCallRecord`; :func:`result_text` is what the conversation keeps of its result.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from mindspace.clock import Clock
from mindspace.context.patterns import ExecutionPattern
from mindspace.engine.approval_request import request_approval
from mindspace.errors import ToolError
from mindspace.llm.parsing.text_calls import TextScan
from mindspace.llm.port import ToolCall
from mindspace.state.unit import Unit
from mindspace.tools.base import Tool, ToolCategory
from mindspace.tools.registry import ToolRegistry
from mindspace.workspace.status import LoopSnapshot

__all__ = [
    "MAX_STORED_RESULT_CHARS",
    "UNREADABLE_NAME",
    "CallStatus",
    "ToolCallRecord",
    "ToolRunnerFn",
    "calls_from_text",
    "canonical",
    "one_call",
    "repeated",
    "result_text",
    "unreadable",
]

CallStatus = Literal["ran", "refused", "awaiting_approval", "repeated", "unreadable"]
MAX_STORED_RESULT_CHARS = 4_000
UNREADABLE_NAME = "unreadable_tool_call"
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_KEY_FIELDS = 8


@dataclass(frozen=True)
class ToolCallRecord:
    """One tool call made in the loop."""

    iteration: int
    call_id: str
    name: str
    arguments: str
    ok: bool
    result: dict[str, Any]
    status: CallStatus = "ran"
    valid: bool = True
    """The call reached a tool with arguments it accepted (its own failure aside)."""
    from_text: bool = False
    """The model wrote the call as text in its message content."""


ToolRunnerFn = Callable[[str, str, Unit, LoopSnapshot], Awaitable[tuple[bool, dict[str, Any]]]]
"""Runs one tool call inside the loop's unit; returns (ok, result)."""


def calls_from_text(scan: TextScan, iteration: int) -> tuple[tuple[ToolCall, ...], dict[str, str]]:
    """Synthesised tool calls for what the text held, and the problems of unreadable ones."""
    calls: list[ToolCall] = []
    problems: dict[str, str] = {}
    for number, found in enumerate(scan.calls, start=1):
        call_id = f"text_{iteration}_{number}"
        if found.name is not None and not _SAFE_NAME.match(found.name):
            # The history goes back to the provider, which refuses odd function names.
            calls.append(ToolCall(call_id, UNREADABLE_NAME, "{}"))
            problems[call_id] = f"{found.name[:64]!r} is not a tool name"
        elif found.arguments is None or found.problem is not None:
            calls.append(ToolCall(call_id, found.name or UNREADABLE_NAME, "{}"))
            problems[call_id] = found.problem or "the tool call could not be read"
        else:
            arguments = json.dumps(found.arguments, ensure_ascii=False)
            calls.append(ToolCall(call_id, found.name or UNREADABLE_NAME, arguments))
    return tuple(calls), problems


def canonical(arguments: str) -> str:
    """``arguments`` as canonical JSON (sorted keys), so equal calls compare equal."""
    try:
        return json.dumps(json.loads(arguments or "{}"), sort_keys=True, separators=(",", ":"))
    except (json.JSONDecodeError, RecursionError):
        return arguments


def unreadable(call: ToolCall, iteration: int, problem: str) -> ToolCallRecord:
    """The record of a call that could not be read: the model is told how to write it."""
    outcome = {
        "success": False,
        "error": f"Your tool call could not be run: {problem}",
        "suggestion": "Call the tool through the tool interface, or write exactly one JSON "
        'object {"name": "<tool>", "arguments": {...}} with a complete, valid JSON object; '
        "or answer in plain text.",
    }
    return ToolCallRecord(
        iteration, call.id, call.name, call.arguments, False, outcome, "unreadable", False
    )


def repeated(call: ToolCall, iteration: int, earlier: ToolCallRecord) -> ToolCallRecord:
    """The record of a repeat of ``earlier``: not run, its key fields quoted back."""
    key_fields = {
        k: (v if not isinstance(v, str) or len(v) <= 200 else v[:197] + "...")
        for k, v in earlier.result.items()
        if isinstance(v, str | int | float | bool) or v is None
    }
    outcome = {
        "success": False,
        "error": f"You already called {call.name!r} with these arguments in this turn "
        f"(iteration {earlier.iteration}); it was not run again",
        "suggestion": "Use the earlier result; call a tool again only with different "
        "arguments, or answer now.",
        "earlier_result": dict(list(key_fields.items())[:_KEY_FIELDS]),
    }
    return ToolCallRecord(
        iteration, call.id, call.name, call.arguments, False, outcome, "repeated", earlier.valid
    )


async def one_call(
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
    """Run one call: refused if not offered here, an approval if DANGEROUS, else the tool."""
    tool = offered.get(call.name)
    if tool is None and call.name in registry:
        refusal = {
            "success": False,
            "error": f"Tool {call.name!r} is not available in this context",
            "suggestion": "Use one of the offered tools: " + ", ".join(sorted(offered)),
        }
        return ToolCallRecord(
            iteration, call.id, call.name, call.arguments, False, refusal, "refused", False
        )
    if (
        tool is not None
        and tool.category is ToolCategory.DANGEROUS
        and pattern.dangerous_requires_confirm
    ):
        return _await_approval(call, iteration, unit, clock, event_id)
    ok, outcome = await run_tool(call.name, call.arguments, unit, snapshot)
    return ToolCallRecord(
        iteration,
        call.id,
        call.name,
        call.arguments,
        ok,
        outcome,
        valid=ok or _accepted(registry, call),
    )


def _accepted(registry: ToolRegistry, call: ToolCall) -> bool:
    """Whether a failed call named a real tool with arguments it accepts (a tool's own failure)."""
    if call.name not in registry:
        return False
    try:
        registry.parse_arguments(registry.get(call.name), call.arguments)
    except ToolError:
        return False
    return True


def _await_approval(
    call: ToolCall, iteration: int, unit: Unit, clock: Clock, event_id: str | None
) -> ToolCallRecord:
    outcome = request_approval(unit, clock, call.name, call.arguments, event_id=event_id)
    return ToolCallRecord(
        iteration, call.id, call.name, call.arguments, True, outcome, "awaiting_approval"
    )


def result_text(result: dict[str, Any]) -> str:
    """A tool result as the conversation keeps it: JSON, at most MAX_STORED_RESULT_CHARS."""
    text = json.dumps(result, ensure_ascii=False, default=str)
    if len(text) > MAX_STORED_RESULT_CHARS:
        text = text[: MAX_STORED_RESULT_CHARS - 20] + '..."(truncated)'
    return text
