"""Three-layer execution patterns with restrictive composition (spec 002 §3).

Layer 1 (static config) ⊇ Layer 2 (context config) ⊇ Layer 3 (LLM assessment and
runtime signals): each layer can only restrict what the previous one allows.
``source_layers`` records which layer set each value: ``"static"``, ``"context"``,
``"assessment"``, ``"signal:<name>"``, or ``"allowed"`` for a permission that no layer
took away.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from mindspace.context.contexts import ContextConfig, ExecutionMode
from mindspace.state.models import Document

__all__ = [
    "ExecutionConfig",
    "ExecutionPattern",
    "select_execution_pattern",
    "token_pressure",
]

# Lower is more restrictive.
_MODE_RANK: dict[str, int] = {"single_action": 0, "plan_execute": 1, "react_loop": 2}


class ExecutionConfig(Document):
    """Layer 1: the assistant's hard limits (``execution_config`` in the spec)."""

    name: ClassVar[str] = "execution_config"

    multi_action_enabled: bool = True
    max_iterations_per_tick: int = 5
    task_assessment_enabled: bool = False
    sub_agents_enabled: bool = False
    sub_agent_budget: int = 3

    def as_static_config(self) -> dict[str, Any]:
        """The spec's ``static_config`` dict."""
        return self.model_dump()


@dataclass(frozen=True)
class ExecutionPattern:
    """The composed execution behaviour, with the layer that set each value."""

    mode: ExecutionMode
    max_iterations: int
    allowed_categories: list[str] | None
    terminal_ends_loop: bool
    dangerous_requires_confirm: bool
    multi_tool_enabled: bool
    sub_agents_enabled: bool
    source_layers: dict[str, str] = field(default_factory=dict)


def token_pressure(usage_percentage: float) -> str:
    """The ``token_pressure`` signal: critical at 80%+, high at 60%+, else normal."""
    if usage_percentage >= 80:
        return "critical"
    if usage_percentage >= 60:
        return "high"
    return "normal"


class _Composer:
    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.sources: dict[str, str] = {}

    def set(self, key: str, value: Any, source: str) -> None:
        self.values[key] = value
        self.sources[key] = source

    def restrict_mode(self, mode: str, source: str) -> None:
        # Ties go to the later layer: it re-states the limit, as in the spec's example.
        if _MODE_RANK[mode] <= _MODE_RANK[self.values["mode"]]:
            self.set("mode", mode, source)

    def restrict_iterations(self, limit: int, source: str) -> None:
        if limit <= self.values["max_iterations"]:
            self.set("max_iterations", max(1, limit), source)

    def require_confirm(self, source: str) -> None:
        self.set("dangerous_requires_confirm", True, source)


def select_execution_pattern(
    static_config: Mapping[str, Any],
    context_config: ContextConfig,
    llm_assessment: Mapping[str, Any] | None = None,
) -> ExecutionPattern:
    """Compose the three layers; a later layer can only restrict an earlier one."""
    c = _Composer()
    multi = bool(static_config.get("multi_action_enabled", True))
    static_limit = int(static_config.get("max_iterations_per_tick", 5))
    c.set("mode", "react_loop" if multi else "single_action", "static")
    c.set("max_iterations", min(10, max(1, static_limit)), "static")
    c.set("dangerous_requires_confirm", False, "allowed")

    # Layer 2: the context.
    c.restrict_mode(context_config.execution_mode, "context")
    c.restrict_iterations(context_config.max_iterations, "context")
    if not context_config.allows_multi_tool:
        c.restrict_mode("single_action", "context")
    if context_config.dangerous_requires_confirm:
        c.require_confirm("context")
    if not multi:
        c.set("multi_tool_enabled", False, "static")
    elif not context_config.allows_multi_tool:
        c.set("multi_tool_enabled", False, "context")
    else:
        c.set("multi_tool_enabled", True, "allowed")
    if not static_config.get("sub_agents_enabled", False):
        c.set("sub_agents_enabled", False, "static")
    elif not context_config.allows_sub_agents:
        c.set("sub_agents_enabled", False, "context")
    else:
        c.set("sub_agents_enabled", True, "allowed")
    categories = context_config.allowed_tool_categories
    c.set(
        "allowed_categories",
        list(categories) if categories is not None else None,
        "context" if categories is not None else "allowed",
    )
    c.set("terminal_ends_loop", context_config.terminal_ends_loop, "context")

    # Layer 3: the LLM's assessment and the runtime signals.
    assessment = llm_assessment or {}
    recommended = assessment.get("recommended_iterations")
    if isinstance(recommended, int) and not isinstance(recommended, bool):
        c.restrict_iterations(recommended, "assessment")
    mode = assessment.get("recommended_mode")
    if isinstance(mode, str) and mode in _MODE_RANK:
        c.restrict_mode(mode, "assessment")
    if assessment.get("recommend_confirm_dangerous") is True:
        c.require_confirm("assessment")
    _apply_signals(c, assessment.get("context_signals") or {})

    if c.values["mode"] == "single_action":
        source = c.sources["mode"]
        c.set("max_iterations", 1, source)
        if c.values["multi_tool_enabled"]:
            c.set("multi_tool_enabled", False, source)

    return ExecutionPattern(
        mode=c.values["mode"],
        max_iterations=c.values["max_iterations"],
        allowed_categories=c.values["allowed_categories"],
        terminal_ends_loop=c.values["terminal_ends_loop"],
        dangerous_requires_confirm=c.values["dangerous_requires_confirm"],
        multi_tool_enabled=c.values["multi_tool_enabled"],
        sub_agents_enabled=c.values["sub_agents_enabled"],
        source_layers=dict(c.sources),
    )


def _apply_signals(c: _Composer, signals: Mapping[str, Any]) -> None:
    pressure = signals.get("token_pressure")
    if pressure == "critical":
        c.restrict_mode("single_action", "signal:token_pressure")
    elif pressure == "high":
        c.restrict_iterations(2, "signal:token_pressure")
    errors = signals.get("recent_errors")
    if isinstance(errors, int) and errors >= 3:
        c.restrict_mode("single_action", "signal:recent_errors")
        c.require_confirm("signal:recent_errors")
    elif isinstance(errors, int) and errors >= 2:
        c.restrict_iterations(2, "signal:recent_errors")
    event_class = signals.get("event_class")
    if event_class == "communication":
        c.restrict_mode("single_action", "signal:event_class")
    elif event_class == "building":
        c.require_confirm("signal:event_class")
