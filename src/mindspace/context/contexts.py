"""The seven context types and their configuration (spec 002 §1, §3, §4, §5)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from mindspace.context.components import (
    COMPONENT_CHARACTER_CONTEXT,
    COMPONENT_CONTEXT_BUFFER,
    COMPONENT_CONVERSATION_HISTORY,
    COMPONENT_ENTITY_CONTEXT,
    COMPONENT_GOALS,
    COMPONENT_PENDING_EVENT,
    COMPONENT_SEMANTIC_MEMORIES,
    COMPONENT_SYSTEM_PROMPT,
    COMPONENT_TOOL_RESULT,
)
from mindspace.memory.prompts import SLEEP_CONSOLIDATION_PROMPT

__all__ = [
    "DEFAULT_CONTEXT_CONFIGS",
    "PRE_COMPACTION_TOOLS",
    "REFLECTION_TOOLS",
    "SLEEP_TOOLS",
    "ContextConfig",
    "ContextType",
    "ExecutionMode",
    "get_context_config",
]

ContextType = Literal[
    "tick_event",
    "tick_autonomous",
    "reflection",
    "reflection_cont",
    "sleep_consolidate",
    "goal_decompose",
    "pre_compaction",
]
ExecutionMode = Literal["single_action", "plan_execute", "react_loop"]

REFLECTION_TOOLS = ["noop", "add_journal_entry", "review_journal"]
SLEEP_TOOLS = ["noop", "add_journal_entry", "review_journal", "recall_memories", "store_memory"]
PRE_COMPACTION_TOOLS = ["noop", "add_journal_entry", "update_entity_observation"]

_FULL_COMPONENTS = [
    COMPONENT_SYSTEM_PROMPT,
    COMPONENT_CHARACTER_CONTEXT,
    COMPONENT_ENTITY_CONTEXT,
    COMPONENT_SEMANTIC_MEMORIES,
    COMPONENT_CONTEXT_BUFFER,
    COMPONENT_GOALS,
    COMPONENT_CONVERSATION_HISTORY,
    COMPONENT_PENDING_EVENT,
    COMPONENT_TOOL_RESULT,
]

REFLECTION_PROMPT = """You are an AI assistant performing periodic self-reflection.

Review your recent performance and journal entries. Consider:
1. What patterns am I observing in my work?
2. What strategies are working well?
3. What mistakes am I repeating?
4. What should I do differently?

Use the journal tools to record your insights."""

GOAL_DECOMPOSE_PROMPT = """You are planning your own work: break one goal into subtasks.

The goal tree below shows what you already track; the task says which goal to break
down. Answer with one JSON array of 3-7 short, actionable subtask descriptions and
nothing else."""


@dataclass(frozen=True)
class ContextConfig:
    """How the LLM is called in one context: what it sees and how it may act."""

    context_type: str
    name: str
    description: str
    enabled_components: list[int]
    component_overrides: dict[str, Any] = field(default_factory=dict)
    tool_filter: list[str] | None = None
    token_budget: int | None = None
    execution_mode: ExecutionMode = "react_loop"
    max_iterations: int = 5
    allowed_tool_categories: list[str] | None = None
    terminal_ends_loop: bool = True
    dangerous_requires_confirm: bool = False
    allows_multi_tool: bool = True
    allows_sub_agents: bool = False

    def get_component_content_override(self, component_key: str) -> str | None:
        """Content override for a component, if any."""
        override = self.component_overrides.get(component_key, {})
        if isinstance(override, dict):
            content = override.get("content")
            return content if isinstance(content, str) else None
        return None


_REFLECTION = ContextConfig(
    context_type="reflection",
    name="Reflection",
    description="Self-analysis over recent journal entries.",
    enabled_components=[COMPONENT_SYSTEM_PROMPT, COMPONENT_PENDING_EVENT, COMPONENT_TOOL_RESULT],
    component_overrides={"system_prompt": {"content": REFLECTION_PROMPT}},
    tool_filter=list(REFLECTION_TOOLS),
    max_iterations=3,
)

_CONFIGS = (
    ContextConfig(
        context_type="tick_event",
        name="Event tick",
        description="Process a pending event from the queue.",
        enabled_components=list(_FULL_COMPONENTS),
        allows_sub_agents=True,
    ),
    ContextConfig(
        context_type="tick_autonomous",
        name="Autonomous tick",
        description="Goal-driven behaviour when no event is pending.",
        enabled_components=list(_FULL_COMPONENTS),
    ),
    _REFLECTION,
    # The same prompt and tools, reading a reflection tool's output instead of the task.
    replace(
        _REFLECTION,
        context_type="reflection_cont",
        name="Reflection (continued)",
        description="Process the output of a reflection tool.",
        enabled_components=[COMPONENT_SYSTEM_PROMPT, COMPONENT_TOOL_RESULT],
        max_iterations=2,
    ),
    ContextConfig(
        context_type="sleep_consolidate",
        name="Sleep consolidation",
        description="Memory consolidation while asleep.",
        enabled_components=[COMPONENT_SYSTEM_PROMPT, COMPONENT_SEMANTIC_MEMORIES],
        component_overrides={"system_prompt": {"content": SLEEP_CONSOLIDATION_PROMPT}},
        tool_filter=list(SLEEP_TOOLS),
        max_iterations=10,
    ),
    ContextConfig(
        context_type="goal_decompose",
        name="Goal decomposition",
        description="Break a goal into subtasks.",
        enabled_components=[COMPONENT_SYSTEM_PROMPT, COMPONENT_GOALS, COMPONENT_PENDING_EVENT],
        component_overrides={"system_prompt": {"content": GOAL_DECOMPOSE_PROMPT}},
        tool_filter=[],
        execution_mode="single_action",
        max_iterations=1,
        allows_multi_tool=False,
    ),
    ContextConfig(
        context_type="pre_compaction",
        name="Pre-compaction extraction",
        description="A last chance to journal facts before history is compacted.",
        enabled_components=[
            COMPONENT_SYSTEM_PROMPT,
            COMPONENT_CONVERSATION_HISTORY,
            COMPONENT_PENDING_EVENT,
            COMPONENT_TOOL_RESULT,
        ],
        tool_filter=list(PRE_COMPACTION_TOOLS),
    ),
)
# Keyed by context type; each entry states only what differs from ContextConfig's defaults.
DEFAULT_CONTEXT_CONFIGS: dict[str, ContextConfig] = {c.context_type: c for c in _CONFIGS}


def get_context_config(context_type: str) -> ContextConfig:
    """The default configuration of ``context_type``.

    Raises:
        KeyError: an unknown context type, naming the known ones.
    """
    try:
        return DEFAULT_CONTEXT_CONFIGS[context_type]
    except KeyError:
        raise KeyError(
            f"Unknown context type {context_type!r}; use one of {sorted(DEFAULT_CONTEXT_CONFIGS)!r}"
        ) from None
