"""Self-monitoring: token usage, the advisory level, loop and session state (spec 000 §4)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from mindspace.clock import Clock, format_time
from mindspace.config import Settings
from mindspace.state.models import Document
from mindspace.state.unit import Unit
from mindspace.tokens import estimate_tokens
from mindspace.workspace.records import (
    ContextUsage,
    Goal,
    Project,
    ProjectsState,
    SessionMemory,
    SessionMetrics,
    SystemPrompts,
)

__all__ = [
    "NEVER_CALLS_TOOLS_TICKS",
    "NEVER_CALLS_TOOLS_WARNING",
    "AdvisoryLevel",
    "LoopSnapshot",
    "TickToolUse",
    "ToolUseWindow",
    "advisory",
    "build_status",
    "estimate_state_tokens",
    "record_tick_tool_use",
    "tool_use_health",
]

NEVER_CALLS_TOOLS_TICKS = 5
"""Ticks in a row that offered tools without a valid call before the health line warns."""
NEVER_CALLS_TOOLS_WARNING = (
    "the model never calls tools: run `mindspace doctor`, see docs/llm-providers.md"
)

AdvisoryLevel = Literal["normal", "warning", "critical"]

_MESSAGES: dict[AdvisoryLevel, str] = {
    "normal": "Sufficient context available",
    "warning": "Context filling - consider wrapping up",
    "critical": "Near the context limit - respond immediately",
}


@dataclass(frozen=True)
class LoopSnapshot:
    """Where the ReAct loop is; outside a loop, the defaults describe an idle one."""

    iteration: int = 0
    max_iterations: int = 5
    tools_this_cycle: tuple[str, ...] = ()
    in_chain: bool = False
    chain_depth: int = 0
    pending_tools: tuple[str, ...] = ()


class TickToolUse(Document):
    """How one tick used its tools (one entry of :class:`ToolUseWindow`)."""

    name: ClassVar[str] = "tick_tool_use"

    offered_tools: bool = True
    valid: int = 0
    """Calls that reached a tool with arguments it accepted (even if the tool then failed)."""
    invalid: int = 0
    """Unknown tools, bad arguments, tools not offered here, unreadable text calls."""
    repeated: int = 0
    """Identical repeats of an earlier call in the tick, answered without running."""
    from_text: int = 0
    """Calls the model wrote as text (counted in ``valid`` or ``invalid`` too)."""
    text_only: int = 0
    """1 when the tick's model answered in plain text without any tool call."""
    cut: bool = False
    """The reply hit the length limit and had to be continued or cut."""
    unanswered: bool = False
    """An addressed event got the fallback reply because the model gave none."""


class ToolUseWindow(Document):
    """Tool use of the last ticks, newest last (the window size is a setting)."""

    name: ClassVar[str] = "tool_use_window"

    ticks: tuple[TickToolUse, ...] = ()


def record_tick_tool_use(unit: Unit, tick: TickToolUse, window: int) -> None:
    """Append ``tick`` to the rolling window, keeping the newest ``window`` ticks."""
    kept = (*unit.doc(ToolUseWindow).ticks, tick)[-window:]
    unit.put_doc(ToolUseWindow(ticks=kept))


def tool_use_health(unit: Unit, window: int) -> dict[str, Any]:
    """Counts over the last ``window`` ticks, and a warning when tools are never used.

    The warning appears once at least :data:`NEVER_CALLS_TOOLS_TICKS` of the most recent
    ticks that offered tools made no valid tool call.
    """
    ticks = unit.doc(ToolUseWindow).ticks[-window:]
    dry = 0
    for tick in reversed([t for t in ticks if t.offered_tools]):
        if tick.valid:
            break
        dry += 1
    return {
        "window": window,
        "ticks": len(ticks),
        "valid_calls": sum(t.valid for t in ticks),
        "invalid_calls": sum(t.invalid for t in ticks),
        "repeated_calls": sum(t.repeated for t in ticks),
        "parsed_from_text": sum(t.from_text for t in ticks),
        "text_only_answers": sum(t.text_only for t in ticks),
        "cut_replies": sum(1 for t in ticks if t.cut),
        "fallback_replies": sum(1 for t in ticks if t.unanswered),
        "ticks_without_valid_call": dry,
        "warning": NEVER_CALLS_TOOLS_WARNING if dry >= NEVER_CALLS_TOOLS_TICKS else None,
    }


def advisory(percent: float, settings: Settings) -> dict[str, Any]:
    """The token advisory: normal below 60%, warning from 60% to 80%, critical above 80%."""
    level: AdvisoryLevel
    if percent > settings.token_critical_percent:
        level, threshold = "critical", settings.token_critical_percent
    elif percent >= settings.token_warning_percent:
        level, threshold = "warning", settings.token_critical_percent
    else:
        level, threshold = "normal", settings.token_warning_percent
    return {"level": level, "message": _MESSAGES[level], "threshold": _number(threshold)}


def estimate_state_tokens(unit: Unit) -> int:
    """Estimated tokens of the state that every prompt carries (prompts, memory, goals, project)."""
    prompts = unit.doc(SystemPrompts)
    memory = unit.doc(SessionMemory)
    texts = [prompts.user_system_prompt, prompts.assistant_system_prompt]
    texts += [*memory.key_facts, *memory.learned_patterns]
    texts += [g.description for g in unit.all(Goal) if g.status == "active"]
    active = unit.doc(ProjectsState).active
    project = unit.get(Project, active) if active else None
    if project is not None:
        texts += [project.summary, project.context]
    return sum(estimate_tokens(t) for t in texts if t)


def build_status(
    unit: Unit, clock: Clock, settings: Settings, loop: LoopSnapshot
) -> dict[str, Any]:
    """The ``get_system_status`` result."""
    usage = unit.doc(ContextUsage)
    used = usage.estimated_used if usage.estimated_used is not None else estimate_state_tokens(unit)
    limit = settings.model_limit
    percent = used / limit * 100
    metrics = unit.doc(SessionMetrics)
    return {
        "success": True,
        "timestamp": format_time(clock.now()),
        "token_usage": {
            "estimated_used": used,
            "model_limit": limit,
            "available": max(0, limit - used),
            "usage_percentage": round(percent, 1),
            "source": usage.source if usage.estimated_used is not None else "estimate",
            # Prompt tokens of the last request read from the provider's prompt cache.
            "cached_tokens": usage.cached_tokens if usage.source == "provider" else None,
        },
        "token_advisory": advisory(percent, settings),
        "loop_state": {
            "iteration": loop.iteration,
            "max_iterations": loop.max_iterations,
            "tools_this_cycle": list(loop.tools_this_cycle),
            "tool_count_this_cycle": len(loop.tools_this_cycle),
        },
        "session_metrics": {
            "total_tool_calls": metrics.total_tool_calls,
            "successful_calls": metrics.successful_calls,
            "failed_calls": metrics.failed_calls,
            "session_start": metrics.session_start,
        },
        "chain_state": {
            "in_chain": loop.in_chain,
            "chain_depth": loop.chain_depth,
            "pending_tools": list(loop.pending_tools),
        },
        "tool_use_health": tool_use_health(unit, settings.tool_health_window),
    }


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value
