"""Tools: the base class, the registry, the runner and the built-in tool families."""

from mindspace.tools.base import NoArgs, Tool, ToolArgs, ToolCategory, ToolContext
from mindspace.tools.goals import AddGoal, DecomposeGoal, UpdateGoal
from mindspace.tools.journal import (
    AddJournalEntry,
    ReviewJournal,
    SearchEpisodicMemory,
    SearchJournal,
)
from mindspace.tools.memory import RecallMemories, StoreMemory, UpdateEntityObservation
from mindspace.tools.projects import CreateProject, ListProjects, SwapProject, UpdateProject
from mindspace.tools.registry import ToolRegistry
from mindspace.tools.runner import ToolOutcome, ToolResultCache, ToolRunner
from mindspace.tools.session import AddSessionMemory, CompactSessionMemory
from mindspace.tools.system import GetSystemStatus, Noop, UpdateSystemPrompt

__all__ = [
    "NoArgs",
    "Tool",
    "ToolArgs",
    "ToolCategory",
    "ToolContext",
    "ToolOutcome",
    "ToolRegistry",
    "ToolResultCache",
    "ToolRunner",
    "default_registry",
]


def default_registry() -> ToolRegistry:
    """A registry with every built-in tool."""
    return ToolRegistry(
        [
            CreateProject(),
            ListProjects(),
            SwapProject(),
            UpdateProject(),
            AddGoal(),
            UpdateGoal(),
            DecomposeGoal(),
            AddSessionMemory(),
            CompactSessionMemory(),
            AddJournalEntry(),
            SearchJournal(),
            ReviewJournal(),
            SearchEpisodicMemory(),
            StoreMemory(),
            RecallMemories(),
            UpdateEntityObservation(),
            GetSystemStatus(),
            UpdateSystemPrompt(),
            Noop(),
        ]
    )
