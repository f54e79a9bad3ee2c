"""Approvals of DANGEROUS tool calls: request, approve, reject, and telling the model.

A call waits for approval when the execution pattern asks for confirmation (the ReAct
loop) or when a tool always needs one (Evennia's ``execute_command``). Either way the
same :class:`~mindspace.engine.records.Approval` record is written by
:func:`request_approval`. A host (HTTP, Evennia, the CLI) decides through the
:class:`~mindspace.engine.assistant.Assistant` facade; the decision is stored and the
model is told of it by an ``approval`` event on its next tick, whichever host decided.
"""

from __future__ import annotations

from mindspace.engine.approval_request import request_approval
from mindspace.engine.core import EngineCore
from mindspace.engine.executor import ToolExecutor
from mindspace.engine.records import Approval, Event
from mindspace.errors import InvalidInputError, RecordNotFoundError
from mindspace.state.unit import Unit
from mindspace.workspace.status import LoopSnapshot

__all__ = ["APPROVAL_EVENT_TYPE", "Approvals", "request_approval"]

APPROVAL_EVENT_TYPE = "approval"
MAX_DECIDER_CHARS = 128
MAX_OUTPUT_CHARS = 2_000


class Approvals:
    """Decisions on one assistant's pending approvals (the facade holds the lock).

    Args:
        core: The assistant's state and ports.
        executor: Runs an approved call.
    """

    def __init__(self, core: EngineCore, executor: ToolExecutor) -> None:
        self.core = core
        self.executor = executor

    @staticmethod
    def pending(unit: Unit) -> list[Approval]:
        """Calls waiting for a decision, oldest first."""
        found = [a for a in unit.all(Approval) if a.status == "pending"]
        return sorted(found, key=lambda a: (a.requested_at, a.id))

    async def approve(self, unit: Unit, approval_id: str, decided_by: str) -> Approval:
        """Run the call as approved by ``decided_by``; store and announce the outcome.

        Raises:
            RecordNotFoundError: no pending approval with that id.
            InvalidInputError: ``decided_by`` is blank or too long.
            ToolExecutionError: the tool crashed; nothing is stored.
        """
        who = _decider(decided_by)
        approval = self._pending(unit, approval_id)
        outcome = await self.executor.run(
            unit, approval.tool, approval.arguments, LoopSnapshot(), approved_by=who
        )
        decided = approval.model_copy(
            update={
                "status": "approved" if outcome.ok else "failed",
                "decided_by": who,
                "decided_at": self.core.now(),
                "result": outcome.result,
            }
        )
        unit.put(decided)
        return decided

    def reject(self, unit: Unit, approval_id: str, decided_by: str, reason: str = "") -> Approval:
        """Refuse the call; it never runs.

        Raises:
            RecordNotFoundError: no pending approval with that id.
            InvalidInputError: ``decided_by`` is blank or too long.
        """
        who = _decider(decided_by)
        approval = self._pending(unit, approval_id)
        decided = approval.model_copy(
            update={
                "status": "rejected",
                "decided_by": who,
                "decided_at": self.core.now(),
                "result": {"success": False, "error": reason.strip() or "Rejected"},
            }
        )
        unit.put(decided)
        return decided

    def announce(self, decided: Approval) -> Event:
        """Tell the model of a decision: an ``approval`` event for its next tick."""
        who = decided.decided_by or "someone"
        result = decided.result or {}
        if decided.status == "rejected":
            reason = str(result.get("error") or "")
            text = f"{who} rejected your request {decided.id} ({decided.tool})" + (
                f": {reason}" if reason and reason != "Rejected" else ""
            )
            text += ". It did not run."
        else:
            ran = "it ran" if decided.status == "approved" else f"it failed: {result.get('error')}"
            text = f"{who} approved your request {decided.id} ({decided.tool}); {ran}."
            output = str(result.get("output") or "")
            if output:
                text += f" Output:\n{output[:MAX_OUTPUT_CHARS]}"
        event = self.core.queue.enqueue(
            text,
            type=APPROVAL_EVENT_TYPE,
            source_entity=who[:MAX_DECIDER_CHARS],
            metadata={"approval_id": decided.id, "decision": decided.status},
        )
        self.core.notify("event_queued", event_id=event.id, type=event.type, source=who)
        return event

    def _pending(self, unit: Unit, approval_id: str) -> Approval:
        approval = unit.get(Approval, approval_id)
        if approval is None or approval.status != "pending":
            pending = [a.id for a in self.pending(unit)]
            raise RecordNotFoundError(
                f"No pending approval {approval_id!r}",
                "List the pending ones first (views.pending_approvals(), "
                "GET .../approvals, or 'assistant <npc> status').",
                pending=pending,
            )
        return approval


def _decider(decided_by: str) -> str:
    who = decided_by.strip()
    if not who or len(who) > MAX_DECIDER_CHARS:
        raise InvalidInputError(
            f"Invalid decided_by {decided_by!r}",
            f"Say who decides in 1-{MAX_DECIDER_CHARS} characters.",
        )
    return who
