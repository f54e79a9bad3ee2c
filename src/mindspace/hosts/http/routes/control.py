"""Sleep and wake, and pending approvals of DANGEROUS tool calls."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Path

from mindspace.hosts.http.auth import KeyDep
from mindspace.hosts.http.contract import Limit, Offset, page_of
from mindspace.hosts.http.models import ApprovalList, Approved, Rejected, SleepOut, WakeOut
from mindspace.hosts.http.schemas import Decision, HubDep, SleepIn, WakeIn

__all__ = ["router"]

router = APIRouter(prefix="/v1/assistants/{key}")
mode_routes = APIRouter(tags=["modes"])
approval_routes = APIRouter(tags=["approvals"])

ApprovalId = Annotated[str, Path(min_length=1, max_length=64, description="The approval's id.")]
DecisionBody = Annotated[Decision | None, Body()]


@mode_routes.post("/sleep", summary="Put the assistant to sleep", response_model=SleepOut)
async def sleep_assistant(
    key: KeyDep, hub: HubDep, body: Annotated[SleepIn | None, Body()] = None
) -> dict[str, Any]:
    """Sleep starts in the compacting phase; sleep ticks then run every tick_rate_sleep.

    It wakes by itself at ``wake_at`` (also when it sleeps deeply).
    """
    request = body or SleepIn()
    state = await hub.get(key).sleep(request.reason, deep=request.deep, hours=request.hours)
    return {"success": True, "wake_at": state.wake_at, "mode": state.model_dump(mode="json")}


@mode_routes.post("/wake", summary="Wake the assistant", response_model=WakeOut)
async def wake_assistant(
    key: KeyDep, hub: HubDep, body: Annotated[WakeIn | None, Body()] = None
) -> dict[str, Any]:
    """Wake now, even mid-phase (what is done so far is kept), with the wake cooldown."""
    request = body or WakeIn()
    state = await hub.get(key).wake(request.reason)
    return {"success": True, "mode": state.model_dump(mode="json")}


@approval_routes.get(
    "/approvals", summary="Tool calls waiting for approval", response_model=ApprovalList
)
async def list_approvals(
    key: KeyDep, hub: HubDep, offset: Offset = 0, limit: Limit = 1000
) -> dict[str, Any]:
    """DANGEROUS tool calls the model made under dangerous_requires_confirm, oldest first."""
    pending, paging = page_of(hub.get(key).views.pending_approvals(), offset, limit)
    return {"success": True, **paging, "approvals": [a.model_dump(mode="json") for a in pending]}


@approval_routes.post(
    "/approvals/{approval_id}/approve", summary="Approve and run a call", response_model=Approved
)
async def approve_call(
    key: KeyDep, approval_id: ApprovalId, hub: HubDep, body: DecisionBody = None
) -> dict[str, Any]:
    """The call runs now; its result is returned and stored with the approval.

    The model hears of the decision (and the output) on its next tick.
    """
    decision = body or Decision()
    approval = await hub.get(key).approve(approval_id, decision.decided_by)
    return {"success": True, "approval_id": approval_id, "result": approval.result}


@approval_routes.post(
    "/approvals/{approval_id}/reject", summary="Reject a call", response_model=Rejected
)
async def reject_call(
    key: KeyDep, approval_id: ApprovalId, hub: HubDep, body: DecisionBody = None
) -> dict[str, Any]:
    """The call never runs; the model hears of the decision on its next tick."""
    decision = body or Decision()
    await hub.get(key).reject(approval_id, decision.decided_by, decision.reason)
    return {"success": True, "approval_id": approval_id, "status": "rejected"}


# Included after their routes are declared (include_router copies them); the tags are the
# sub-routers', so each route states only its own path, summary and answer.
router.include_router(mode_routes)
router.include_router(approval_routes)
