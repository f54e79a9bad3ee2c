"""Recording a DANGEROUS call that waits for approval (the loop's and a tool's one way).

Deciding on it is :class:`mindspace.engine.approvals.Approvals`' work; this module is
apart so the ReAct loop can request an approval without depending on the executor.
"""

from __future__ import annotations

import json
from typing import Any

from mindspace.clock import Clock, format_time
from mindspace.engine.records import Approval, EngineState
from mindspace.state.unit import Unit

__all__ = ["request_approval"]


def request_approval(
    unit: Unit,
    clock: Clock,
    tool: str,
    arguments: str | dict[str, Any],
    *,
    event_id: str | None = None,
    reason: str = "is DANGEROUS and awaits approval by a host or an admin",
) -> dict[str, Any]:
    """Record a pending approval for a call; returns the tool result the model sees."""
    state = unit.doc(EngineState)
    approval_id = f"apr_{state.next_approval + 1}"
    unit.put_doc(state.model_copy(update={"next_approval": state.next_approval + 1}))
    unit.put(
        Approval(
            id=approval_id,
            tool=tool,
            arguments=arguments
            if isinstance(arguments, str)
            else json.dumps(arguments, ensure_ascii=False),
            event_id=event_id,
            requested_at=format_time(clock.now()),
        )
    )
    return {
        "success": True,
        "status": "awaiting_approval",
        "approval_id": approval_id,
        "message": f"{tool!r} {reason}; it has not run yet and will run once approved "
        f"({approval_id}). You will be told the outcome.",
    }
