"""The workspace's persisted shapes: goals, projects and the singleton documents."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from mindspace.state.models import Document, Record

__all__ = [
    "GOAL_PRIORITIES",
    "GOAL_STATUSES",
    "CompletedTask",
    "ContextUsage",
    "Counters",
    "Goal",
    "GoalPriority",
    "GoalStatus",
    "Project",
    "ProjectStatus",
    "ProjectsState",
    "PromptChange",
    "SessionMemory",
    "SessionMetrics",
    "SystemPrompts",
]

GoalPriority = Literal["high", "medium", "low"]
GoalStatus = Literal["active", "completed", "abandoned"]
ProjectStatus = Literal["active", "paused", "completed"]
GOAL_PRIORITIES: tuple[GoalPriority, ...] = ("high", "medium", "low")
GOAL_STATUSES: tuple[GoalStatus, ...] = ("active", "completed", "abandoned")


class Goal(Record):
    """A node of the goal tree (spec 000 §2)."""

    kind: ClassVar[str] = "goal"

    id: str
    description: str
    priority: GoalPriority = "medium"
    status: GoalStatus = "active"
    progress: float = Field(default=0.0, ge=0.0, le=100.0)
    created: str
    updated: str
    parent_id: str | None = None
    subtask_ids: tuple[str, ...] = ()
    auto_generated: bool = False

    def to_spec(self) -> dict[str, Any]:
        """The goal in the spec's dict shape."""
        data = self.model_dump(mode="json")
        data["progress"] = _number(self.progress)
        return data


class Project(Record):
    """A project slot (spec 000 §1)."""

    kind: ClassVar[str] = "project"
    key_field: ClassVar[str] = "key"

    key: str
    summary: str
    context: str = ""
    status: ProjectStatus = "paused"
    created_at: str
    last_active: str


class ProjectsState(Document):
    """Which project is loaded."""

    name: ClassVar[str] = "projects"

    active: str | None = None


class CompletedTask(Document):
    """A goal that was completed, kept in session memory."""

    name: ClassVar[str] = "completed_task"

    description: str
    timestamp: str
    goal_id: str | None = None


class SessionMemory(Document):
    """Persistent facts and patterns (spec 000 §3)."""

    name: ClassVar[str] = "session_memory"

    key_facts: tuple[str, ...] = ()
    learned_patterns: tuple[str, ...] = ()
    completed_tasks: tuple[CompletedTask, ...] = ()
    last_compacted: str | None = None


class PromptChange(Document):
    """One earlier version of the assistant's own prompt, with why it changed."""

    name: ClassVar[str] = "prompt_change"

    previous_prompt: str
    reasoning: str
    changed_at: str


class SystemPrompts(Document):
    """The two prompts: the user's (protected) and the assistant's own (self-managed)."""

    name: ClassVar[str] = "system_prompts"

    user_system_prompt: str = ""
    assistant_system_prompt: str = ""
    history: tuple[PromptChange, ...] = ()


class Counters(Document):
    """Monotonic counters of the assistant."""

    name: ClassVar[str] = "counters"

    tick_count: int = 0


class SessionMetrics(Document):
    """Tool call counts since the session started."""

    name: ClassVar[str] = "session_metrics"

    total_tool_calls: int = 0
    successful_calls: int = 0
    failed_calls: int = 0
    session_start: str | None = None


class ContextUsage(Document):
    """The last known size of the context window in tokens."""

    name: ClassVar[str] = "context_usage"

    estimated_used: int | None = None
    source: Literal["estimate", "provider"] = "estimate"
    recorded_at: str | None = None
    cached_tokens: int | None = None
    """Of the last request's prompt, the tokens the provider read from its cache (None:
    not reported)."""


def _number(value: float) -> int | float:
    """Whole numbers as ints, as the spec writes progress (``"progress": 40``)."""
    return int(value) if float(value).is_integer() else value
