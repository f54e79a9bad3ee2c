"""Side sessions a tool runs from inside a loop: a context of its own, or a sub-agent.

:class:`SideRunner` implements the tools' :class:`~mindspace.tools.side.SideSessions`
port for one session. ``decompose_goal`` asks its question in the ``goal_decompose``
context; ``delegate_subtask`` runs a sub-agent in the ``sub_agent`` context built by
:func:`sub_agent_config`, which can never widen the parent's permissions:

* its tools are a subset of the tools offered to the parent (and of its categories);
* its mode is no broader than the parent's, its iterations its own limit (at most
  ``sub_agent_max_iterations``, and layer 1's ``max_iterations_per_tick``);
* a DANGEROUS call always waits for approval, whatever the parent's pattern says;
* it may delegate in turn only where the parent may, and at most ``sub_agent_budget``
  sub-agents run at once.

Each side session runs in the caller's unit of work (its writes commit with the tick)
and is kept on the parent's :attr:`LoopResult.side_sessions
<mindspace.engine.loop.LoopResult.side_sessions>` for the context-window viewer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from mindspace.context.assembly import AssembledPrompt
from mindspace.context.components import (
    COMPONENT_CHARACTER_CONTEXT,
    COMPONENT_GOALS,
    COMPONENT_PENDING_EVENT,
    COMPONENT_SYSTEM_PROMPT,
)
from mindspace.context.contexts import ContextConfig, get_context_config
from mindspace.context.patterns import ExecutionPattern
from mindspace.engine.loop import LoopResult, SideSession
from mindspace.errors import InvalidArgumentsError, InvalidStateError
from mindspace.state.unit import Unit
from mindspace.tools.side import SideCall, SideOutcome

__all__ = [
    "SUB_AGENT_CONTEXT",
    "SUB_AGENT_PROMPT",
    "SideRunner",
    "SubAgentCount",
    "sub_agent_config",
]

SUB_AGENT_CONTEXT = "sub_agent"

SUB_AGENT_PROMPT = """You are a sub-agent of the assistant, given one bounded subtask.

Do only the subtask in the pending task below, with the tools you are offered, then
answer with a short plain-text report of what you did and found: the assistant that
delegated the subtask reads it as a tool result. Do not address anyone else."""

SideRun = Callable[
    [Unit, ContextConfig, str, str, "SideRunner"],
    Awaitable[tuple[ExecutionPattern, AssembledPrompt, LoopResult]],
]
"""Runs a session (unit, config, entity, task, the runner that asked) without recording
the context window's usage."""


@dataclass
class SubAgentCount:
    """Sub-agents running right now, for one assistant."""

    running: int = 0


def sub_agent_config(
    tools: Sequence[str], max_iterations: int, parent: ExecutionPattern
) -> ContextConfig:
    """The ``sub_agent`` context: the parent's pattern narrowed to ``tools``."""
    return ContextConfig(
        context_type=SUB_AGENT_CONTEXT,
        name="Sub-agent",
        description="A bounded subtask the assistant delegated to a side session.",
        enabled_components=[
            COMPONENT_SYSTEM_PROMPT,
            COMPONENT_CHARACTER_CONTEXT,
            COMPONENT_GOALS,
            COMPONENT_PENDING_EVENT,
        ],
        component_overrides={"system_prompt": {"content": SUB_AGENT_PROMPT}},
        tool_filter=list(tools),
        execution_mode=parent.mode,
        max_iterations=max_iterations,
        allowed_tool_categories=(
            list(parent.allowed_categories) if parent.allowed_categories is not None else None
        ),
        terminal_ends_loop=True,
        dangerous_requires_confirm=True,
        allows_multi_tool=parent.multi_tool_enabled,
        allows_sub_agents=parent.sub_agents_enabled,
    )


class SideRunner:
    """The side sessions of one session (implements :class:`~mindspace.tools.side.SideSessions`).

    Args:
        run: Runs a session.
        pattern: The calling session's execution pattern.
        tools: The names of the tools offered to the calling session.
        entity: Whom the calling session is about (its prompt inputs).
        budget: Most sub-agents at once.
        max_iterations: The most iterations one sub-agent may have.
        count: The assistant's running sub-agents, shared by every runner.
    """

    def __init__(
        self,
        run: SideRun,
        *,
        pattern: ExecutionPattern,
        tools: Sequence[str],
        entity: str,
        budget: int,
        max_iterations: int,
        count: SubAgentCount,
    ) -> None:
        self._run = run
        self.pattern = pattern
        self._tools = tuple(tools)
        self.entity = entity
        self._budget = budget
        self._max_iterations = max_iterations
        self._count = count
        self.sessions: list[SideSession] = []
        """The side sessions run so far, in order."""

    @property
    def parent_tools(self) -> tuple[str, ...]:
        """The tools offered to the calling session."""
        return self._tools

    @property
    def sub_agents_allowed(self) -> bool:
        """Whether the calling session's pattern allows sub-agents."""
        return self.pattern.sub_agents_enabled

    @property
    def sub_agent_budget(self) -> int:
        """Most sub-agents at once."""
        return self._budget

    @property
    def sub_agents_running(self) -> int:
        """Sub-agents running right now."""
        return self._count.running

    async def run_context(self, unit: Unit, context_type: str, task: str) -> SideOutcome:
        """Run ``task`` in ``context_type`` (its components, tool filter and limits)."""
        return await self._session(unit, get_context_config(context_type), task)

    async def run_sub_agent(
        self, unit: Unit, task: str, tools: Sequence[str], max_iterations: int
    ) -> SideOutcome:
        """Run a sub-agent on ``task`` with ``tools``, within the parent's permissions.

        Raises:
            InvalidStateError: the pattern allows no sub-agents, or the budget is spent.
            InvalidArgumentsError: a tool the calling session was not offered.
        """
        if not self.pattern.sub_agents_enabled:
            raise InvalidStateError(
                "Sub-agents are not allowed in this context",
                "Do the work yourself with your tools.",
            )
        if self._count.running >= self._budget:
            raise InvalidStateError(
                f"{self._count.running} sub-agents are already running; the budget is "
                f"{self._budget} at once",
                "Do this part yourself, or delegate it after a running sub-agent returns.",
                sub_agent_budget=self._budget,
            )
        extra = [t for t in tools if t not in self._tools]
        if extra:
            raise InvalidArgumentsError(
                f"A sub-agent can only get tools you have; not offered to you: {extra!r}",
                "Choose tools from: " + ", ".join(self._tools),
            )
        limit = max(1, min(max_iterations, self._max_iterations))
        config = sub_agent_config(tools, limit, self.pattern)
        self._count.running += 1
        try:
            return await self._session(unit, config, task)
        finally:
            self._count.running -= 1

    async def _session(self, unit: Unit, config: ContextConfig, task: str) -> SideOutcome:
        pattern, prompt, loop = await self._run(unit, config, self.entity, task, self)
        self.sessions.append(SideSession(config.context_type, task, pattern, prompt, loop))
        return SideOutcome(
            context_type=config.context_type,
            reply=loop.reply,
            stopped_by=loop.stopped_by,
            iterations=loop.iterations,
            calls=tuple(SideCall(c.name, c.ok, c.status, dict(c.result)) for c in loop.calls),
            messages=tuple(prompt.messages),
            offered=loop.offered_names,
            max_iterations=pattern.max_iterations,
        )
