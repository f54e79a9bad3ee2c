"""The tool executor: runs one tool call in a unit of work and counts it.

The ReAct loop, a host's direct tool call and an approved call all run tools through
:class:`ToolExecutor`, so metrics, caching and crash handling are the same everywhere.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from mindspace.engine.core import EngineCore
from mindspace.engine.history import Actor, record_tool_writes
from mindspace.errors import ToolExecutionError
from mindspace.state.unit import Unit
from mindspace.tools.runner import ToolOutcome, ToolResultCache, ToolRunner
from mindspace.tools.side import SideSessions
from mindspace.tracing import AttributeValue
from mindspace.workspace.records import SessionMetrics
from mindspace.workspace.status import LoopSnapshot

__all__ = ["ToolExecutor"]

logger = logging.getLogger("mindspace.engine")


class ToolExecutor:
    """Runs tools for one assistant.

    Args:
        core: The assistant's state and ports.
    """

    def __init__(self, core: EngineCore) -> None:
        self.core = core
        self.runner = ToolRunner(
            core.tools, ToolResultCache(core.clock, core.settings.tool_cache_ttl)
        )
        self.side_factory: Callable[[Unit], SideSessions] | None = None
        """Side sessions for a call made outside a loop (set by the engine's sessions)."""

    async def run(
        self,
        unit: Unit,
        name: str,
        args: Mapping[str, Any] | str | None,
        loop: LoopSnapshot | None = None,
        *,
        approved_by: str | None = None,
        side: SideSessions | None = None,
    ) -> ToolOutcome:
        """Run ``name`` inside ``unit`` (the caller commits) and count the call.

        ``side`` runs the tool's side sessions (the loop's own runner); without it a
        runner for a call outside any loop is made.

        Raises:
            ToolExecutionError: the tool crashed (a bug); nothing it wrote is kept.
        """
        with self.core.tracer.span(
            "tool_call", f"execute_tool {name}", _tool_attributes(self.core, name)
        ) as span:
            outcome = await self._run(unit, name, args, loop, approved_by=approved_by, side=side)
            span.set("mindspace.tool.success", outcome.ok)
            return outcome

    async def _run(
        self,
        unit: Unit,
        name: str,
        args: Mapping[str, Any] | str | None,
        loop: LoopSnapshot | None,
        *,
        approved_by: str | None,
        side: SideSessions | None,
    ) -> ToolOutcome:
        snapshot = loop or LoopSnapshot()
        if side is None and self.side_factory is not None:
            side = self.side_factory(unit)
        actor = self._actor(loop, approved_by)

        def record(savepoint: Unit) -> None:
            record_tool_writes(savepoint, self.core.clock, actor, name)

        try:
            outcome = await self.runner.run(
                unit,
                name,
                args,
                lambda u: self.core.tool_context(u, snapshot, approved_by=approved_by, side=side),
                record,
            )
        except Exception:
            _count(unit, ok=False, now=self.core.now())
            raise
        _count(unit, ok=outcome.ok, now=self.core.now())
        return outcome

    def _actor(self, loop: LoopSnapshot | None, approved_by: str | None) -> Actor:
        # The ReAct loop passes its snapshot: the model chose the call. Otherwise a host
        # called the tool directly (an API or CLI call), or approved the model's call.
        if approved_by:
            return Actor("host", approved_by[:128])
        if loop is not None:
            return Actor("model", self.core.key)
        return Actor("host", "tool call")

    async def for_loop(
        self,
        name: str,
        arguments: str,
        unit: Unit,
        loop: LoopSnapshot,
        *,
        side: SideSessions | None = None,
    ) -> tuple[bool, dict[str, Any]]:
        """Run a call of the ReAct loop; a crash becomes an error result for the model."""
        try:
            outcome = await self.run(unit, name, arguments, loop, side=side)
        except ToolExecutionError as exc:
            logger.exception("Tool %r crashed during a tick", name)
            return False, {
                "success": False,
                "error": f"Tool {name!r} failed with an internal error: {exc.__cause__!r}",
                "suggestion": "Try a different approach; the error was logged for the developer.",
            }
        self.core.notify("tool_called", tool=name, ok=outcome.ok, iteration=loop.iteration)
        return outcome.ok, outcome.result


def _tool_attributes(core: EngineCore, name: str) -> dict[str, AttributeValue]:
    """A tool call's span attributes (GenAI conventions' ``execute_tool``, and its category)."""
    attributes: dict[str, AttributeValue] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "mindspace.assistant": core.key,
    }
    if name in core.tools:
        attributes["mindspace.tool.category"] = str(core.tools.get(name).category)
    return attributes


def _count(unit: Unit, *, ok: bool, now: str) -> None:
    metrics = unit.doc(SessionMetrics)
    unit.put_doc(
        metrics.model_copy(
            update={
                # The first counted call starts the session (opening writes nothing).
                "session_start": metrics.session_start or now,
                "total_tool_calls": metrics.total_tool_calls + 1,
                "successful_calls": metrics.successful_calls + (1 if ok else 0),
                "failed_calls": metrics.failed_calls + (0 if ok else 1),
            }
        )
    )
