"""Hosts' approval requests and decisions, each one serialised write.

A host asks for a DANGEROUS call to wait (:meth:`Decisions.request`), then approves or
rejects it. A person's edit awaiting approval (:mod:`mindspace.engine.operator_edits`)
runs through :class:`~mindspace.engine.edits.Edits` when approved; a tool call runs
through :class:`~mindspace.engine.approvals.Approvals`. The
:class:`~mindspace.engine.assistant.Assistant` facade offers these as its own methods.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mindspace.engine.approvals import Approvals, request_approval
from mindspace.engine.core import EngineCore
from mindspace.engine.edits import Edits
from mindspace.engine.history import Actor
from mindspace.engine.operator_edits import OPERATOR_EDITS, parse_operator_edit, run_operator_edit
from mindspace.engine.records import Approval
from mindspace.errors import InvalidInputError, RecordNotFoundError, ToolError
from mindspace.state.unit import Unit

__all__ = ["Decisions"]


class Decisions:
    """Requests and decisions on one assistant's approvals.

    Args:
        core: The assistant's state and ports.
        approvals: Decides tool calls.
        edits: Runs a person's approved edit.
    """

    def __init__(self, core: EngineCore, approvals: Approvals, edits: Edits) -> None:
        self._core = core
        self._approvals = approvals
        self._edits = edits

    async def request(
        self, name: str, args: Mapping[str, Any] | str | None, *, requested_by: str
    ) -> dict[str, Any]:
        """Record a call of ``name`` as pending (see :meth:`Assistant.request_approval`)."""
        core = self._core
        try:
            if name in OPERATOR_EDITS:  # a person's edit, not a tool (engine/operator_edits.py)
                arguments = parse_operator_edit(name, args)
            else:
                tool = core.tools.get(name)
                parsed = core.tools.parse_arguments(tool, args, core.settings)
                arguments = parsed.model_dump(mode="json")
        except ToolError as exc:
            return exc.to_result()
        except InvalidInputError as exc:
            return {"success": False, "error": exc.error, "suggestion": exc.suggestion}

        async def body(unit: Unit) -> dict[str, Any]:
            return request_approval(
                unit,
                core.clock,
                name,
                arguments,
                reason=f"is DANGEROUS; called by {requested_by}, it awaits approval by a host "
                "or an admin",
            )

        return await core.retrying(body)

    async def approve(self, approval_id: str, decided_by: str) -> Approval:
        """Approve a pending call: it runs now, its outcome is stored, the model is told.

        Raises:
            RecordNotFoundError: no pending approval with that id.
            InvalidInputError: ``decided_by`` is blank or too long.
        """
        core = self._core
        pending = core.read().get(Approval, approval_id)
        if pending is not None and pending.status == "pending" and pending.tool in OPERATOR_EDITS:
            return await self._approve_edit(pending, decided_by)
        # A redone approval runs the tool again: acceptable only because the lost attempt
        # committed nothing (a tool with effects outside the state would repeat them).
        decided = await core.retrying(
            lambda unit: self._approvals.approve(unit, approval_id, decided_by)
        )
        self._approvals.announce(decided)
        return decided

    async def reject(self, approval_id: str, decided_by: str, reason: str) -> Approval:
        """Reject a pending call; it never runs, and the model is told on its next tick.

        Raises:
            RecordNotFoundError: no pending approval with that id.
            InvalidInputError: ``decided_by`` is blank or too long.
        """

        async def body(unit: Unit) -> Approval:
            return self._approvals.reject(unit, approval_id, decided_by, reason)

        decided = await self._core.retrying(body)
        if decided.tool not in OPERATOR_EDITS:  # the model asked for nothing else
            self._approvals.announce(decided)
        return decided

    async def _approve_edit(self, pending: Approval, decided_by: str) -> Approval:
        """Run an approved person's edit through :class:`Edits`, then store the decision."""
        core = self._core
        who = decided_by.strip()
        if not who or len(who) > 128:
            raise InvalidInputError(
                f"Who decides must be 1-128 characters, got {decided_by!r}",
                "Pass the approver's name.",
            )
        result = await run_operator_edit(
            self._edits, pending.tool, pending.arguments, Actor("user", who)
        )

        async def body(unit: Unit) -> Approval:
            current = unit.get(Approval, pending.id)
            if current is None or current.status != "pending":  # decided meanwhile
                raise RecordNotFoundError(
                    f"No pending approval {pending.id!r}", "It was decided meanwhile."
                )
            decided = current.model_copy(
                update={
                    "status": "approved" if result.get("success") else "failed",
                    "decided_by": who,
                    "decided_at": core.now(),
                    "result": result,
                }
            )
            unit.put(decided)
            return decided

        return await core.retrying(body)
