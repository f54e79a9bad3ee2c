"""The self-management workspace: projects, goals, session memory, prompts, status."""

from mindspace.workspace.goals import GoalBook, GoalUpdate, parse_subtasks
from mindspace.workspace.persona import PERSONA_ERROR, PERSONA_SUGGESTION, PersonaGuard
from mindspace.workspace.projects import ProjectDesk, SwapOutcome
from mindspace.workspace.prompts import PromptDesk, assemble_system_prompt
from mindspace.workspace.records import (
    ContextUsage,
    Counters,
    Goal,
    Project,
    ProjectsState,
    SessionMemory,
    SessionMetrics,
    SystemPrompts,
)
from mindspace.workspace.session_memory import SessionMemoryBook
from mindspace.workspace.status import LoopSnapshot, advisory, build_status

__all__ = [
    "PERSONA_ERROR",
    "PERSONA_SUGGESTION",
    "ContextUsage",
    "Counters",
    "Goal",
    "GoalBook",
    "GoalUpdate",
    "LoopSnapshot",
    "PersonaGuard",
    "Project",
    "ProjectDesk",
    "ProjectsState",
    "PromptDesk",
    "SessionMemory",
    "SessionMemoryBook",
    "SessionMetrics",
    "SwapOutcome",
    "SystemPrompts",
    "advisory",
    "assemble_system_prompt",
    "build_status",
    "parse_subtasks",
]
