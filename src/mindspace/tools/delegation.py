"""``delegate_subtask``: hand a bounded subtask to a sub-agent (our extension of spec 002).

Spec 002 names the switches (``sub_agents_enabled``, ``sub_agent_budget``,
``allows_sub_agents``) but no tool, so this one is ours. It is offered only where the
execution pattern allows sub-agents (``MINDSPACE_SUB_AGENTS_ENABLED`` and a context that
allows them: ``tick_event``). The sub-agent is a side session in the ``sub_agent``
context with the tools named here - a subset of the caller's - and its own iteration
limit; DANGEROUS calls in it always wait for approval. Its plain-text report comes back
as this tool's result. See docs/delegation.md.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from mindspace.errors import InvalidStateError, LLMError, ToolFailedError
from mindspace.tools.base import Tool, ToolArgs, ToolCategory, ToolContext
from mindspace.tools.limits import Limit

__all__ = ["DelegateSubtask"]


class DelegateSubtaskArgs(ToolArgs):
    task: Annotated[str, Limit(2_000)] = Field(
        description="The subtask, self-contained: the sub-agent sees nothing else of this turn."
    )
    tools: Annotated[list[str], Limit(64, items=20)] = Field(
        default_factory=list,
        description="Names of your tools the sub-agent may use (none: it only answers).",
    )
    max_iterations: int | None = Field(
        default=None,
        ge=1,
        le=10,
        description="Its tool rounds (default and cap: the sub_agent_max_iterations setting).",
    )


class DelegateSubtask(Tool[DelegateSubtaskArgs]):
    name = "delegate_subtask"
    description = (
        "Delegate a bounded subtask to a sub-agent with a subset of your tools and its own "
        "iteration limit; returns its report. Its DANGEROUS calls wait for approval."
    )
    category = ToolCategory.ASYNC_REQUIRED
    needs_sub_agents = True

    async def execute(self, ctx: ToolContext, args: DelegateSubtaskArgs) -> dict[str, Any]:
        side = ctx.side
        if side is None or not side.sub_agents_allowed:
            raise InvalidStateError(
                "Sub-agents are not allowed here",
                "Do the work yourself with your tools; sub-agents need "
                "MINDSPACE_SUB_AGENTS_ENABLED and a context that allows them (tick_event).",
            )
        tools = list(dict.fromkeys(t.strip() for t in args.tools if t.strip()))
        limit = args.max_iterations or ctx.settings.sub_agent_max_iterations
        try:
            outcome = await side.run_sub_agent(ctx.unit, args.task.strip(), tools, limit)
        except LLMError as exc:
            raise ToolFailedError(
                f"The sub-agent's model failed: {exc}",
                "Do the subtask yourself, or delegate it again later.",
            ) from exc
        awaiting = [
            str(c.result.get("approval_id"))
            for c in outcome.calls
            if c.status == "awaiting_approval"
        ]
        return {
            "success": True,
            "task": args.task.strip(),
            "completed": outcome.stopped_by in ("final_answer", "terminal_tool"),
            "report": outcome.reply,
            "stopped_by": outcome.stopped_by,
            "iterations": outcome.iterations,
            "max_iterations": outcome.max_iterations,
            "tools": list(outcome.offered),
            "tool_calls": [{"name": c.name, "ok": c.ok, "status": c.status} for c in outcome.calls],
            "awaiting_approval": awaiting,
        }
