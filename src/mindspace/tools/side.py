"""The port through which a tool runs a side session (a context of its own, or a sub-agent).

The engine implements :class:`SideSessions` and hands it to tools in
:attr:`ToolContext.side <mindspace.tools.base.ToolContext.side>`. ``decompose_goal`` runs
its question in the ``goal_decompose`` context through it, and ``delegate_subtask`` runs
a sub-agent. Tools only see :class:`SideOutcome`; the engine keeps the full session
(pattern, prompt, loop) for the context-window viewer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from mindspace.llm.port import Message
from mindspace.state.unit import Unit

__all__ = ["SideCall", "SideOutcome", "SideSessions"]


@dataclass(frozen=True)
class SideCall:
    """One tool call a side session made."""

    name: str
    ok: bool
    status: str
    result: dict[str, object]


@dataclass(frozen=True)
class SideOutcome:
    """What a side session did, as the tool that started it sees it.

    Attributes:
        context_type: The context it ran in (``goal_decompose``, ``sub_agent``...).
        reply: Its plain-text answer, or None when it ended without one.
        stopped_by: Why its loop ended (``final_answer``, ``terminal_tool``,
            ``single_action`` or ``max_iterations``).
        iterations: Model requests of its loop.
        calls: Its tool calls, in order.
        messages: The prompt it sent (for a structured answer's one repair request).
        offered: The names of the tools it was offered.
        max_iterations: Its composed iteration limit.
    """

    context_type: str
    reply: str | None
    stopped_by: str
    iterations: int
    calls: tuple[SideCall, ...] = ()
    messages: tuple[Message, ...] = ()
    offered: tuple[str, ...] = ()
    max_iterations: int = 1


class SideSessions(Protocol):
    """Runs side sessions inside the calling tool's unit of work (the caller commits)."""

    @property
    def parent_tools(self) -> tuple[str, ...]:
        """The tools offered to the session that called the tool."""
        ...

    @property
    def sub_agents_allowed(self) -> bool:
        """Whether the calling session's execution pattern allows sub-agents."""
        ...

    @property
    def sub_agent_budget(self) -> int:
        """Most sub-agents that may run at once (``sub_agent_budget``)."""
        ...

    @property
    def sub_agents_running(self) -> int:
        """Sub-agents running right now (a sub-agent may delegate in turn)."""
        ...

    async def run_context(self, unit: Unit, context_type: str, task: str) -> SideOutcome:
        """Run ``task`` in ``context_type`` with that context's components and limits.

        Raises:
            LLMError: the model failed after the adapter's retries.
        """
        ...

    async def run_sub_agent(
        self, unit: Unit, task: str, tools: Sequence[str], max_iterations: int
    ) -> SideOutcome:
        """Run a sub-agent on ``task`` with ``tools`` (a subset of :attr:`parent_tools`).

        Raises:
            LLMError: the model failed after the adapter's retries.
        """
        ...
