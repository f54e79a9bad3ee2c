"""Events in, ticks on demand and the recent-tick log."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path

from mindspace.engine import event_view
from mindspace.hosts.http.auth import KeyDep
from mindspace.hosts.http.contract import Limit, Offset, page_of
from mindspace.hosts.http.errors import found
from mindspace.hosts.http.models import EventList, EventOut, EventQueued, TickList, TickOut, TickRun
from mindspace.hosts.http.schemas import EventIn, HubDep
from mindspace.hosts.http.ticks import tick_summary

__all__ = ["router"]

router = APIRouter(prefix="/v1/assistants/{key}")
event_routes = APIRouter(tags=["events"])
tick_routes = APIRouter(tags=["ticks"])

EventId = Annotated[str, Path(min_length=1, max_length=64, description="The event's id.")]


@event_routes.post("/events", status_code=202, summary="Queue an event", response_model=EventQueued)
async def queue_event(key: KeyDep, body: EventIn, hub: HubDep) -> dict[str, Any]:
    """Put an event in the assistant's queue; its next tick takes it (urgent ones first).

    Poll ``GET .../events/{event_id}`` (or watch the stream) for the reply. The background
    ticks hear of the event themselves (the ``event_queued`` notice) and tick soon.
    """
    event = hub.get(key).enqueue_event(
        body.content,
        type=body.type,
        source_entity=body.source_entity,
        location=body.location,
        metadata=body.metadata,
    )
    return {"success": True, "event_id": event.id, "status": event.status, "urgent": event.urgent}


@event_routes.get("/events", summary="Events not yet processed", response_model=EventList)
async def list_events(
    key: KeyDep, hub: HubDep, offset: Offset = 0, limit: Limit = 1000
) -> dict[str, Any]:
    """Pending and interrupted events, most urgent first."""
    events, paging = page_of(hub.get(key).views.open_events(), offset, limit)
    return {"success": True, **paging, "events": [event_view(e) for e in events]}


@event_routes.get(
    "/events/{event_id}", summary="An event's status and reply", response_model=EventOut
)
async def get_event(key: KeyDep, event_id: EventId, hub: HubDep) -> dict[str, Any]:
    """pending, processing, done (with the reply) or failed (with the error)."""
    event = found(
        hub.get(key).views.event(event_id),
        f"Event {event_id!r} does not exist for assistant {key!r}",
        "Use the event_id that POST .../events returned.",
    )
    return {"success": True, "event": event_view(event)}


@tick_routes.post(
    "/tick",
    summary="Run one tick now",
    response_model=TickRun,
    responses={502: {"description": "The language model failed."}},
)
async def run_tick(key: KeyDep, hub: HubDep) -> dict[str, Any]:
    """Run a tick at once (after a running one finishes): an event, goal work, a sleep tick
    or nothing (idle). Returns the tick's record as the context viewer shows it.
    """
    result, record = await hub.run_tick(key)
    return {
        "success": True,
        "kind": result.kind,
        "status": result.status,
        "event_id": result.event_id,
        "reply": result.reply,
        "outcome": result.outcome,
        "cut": result.cut,
        "error": result.error,
        "tick": record,
    }


@tick_routes.get("/ticks", summary="Recent ticks (summaries)", response_model=TickList)
async def list_ticks(
    key: KeyDep, hub: HubDep, offset: Offset = 0, limit: Limit = 1000
) -> dict[str, Any]:
    """The last ticks this server ran for the assistant, newest first (idle ones are not kept)."""
    hub.get(key)
    ticks, paging = page_of(hub.ticks.recent(key), offset, limit)
    return {"success": True, **paging, "ticks": [tick_summary(r) for r in ticks]}


@tick_routes.get("/ticks/{number}", summary="One recent tick in full", response_model=TickOut)
async def get_tick(
    key: KeyDep, number: Annotated[int, Path(ge=1, le=2**31)], hub: HubDep
) -> dict[str, Any]:
    """Each prompt component with its tokens and content, the execution pattern with
    ``source_layers``, the tool calls and their results, the reply.
    """
    hub.get(key)
    record = found(
        hub.ticks.get(key, number),
        f"Tick {number!r} of {key!r} is not kept",
        "List the kept ticks with GET .../ticks; only the most recent ones are kept.",
    )
    return {"success": True, "tick": record}


# Included after their routes are declared (include_router copies them); the tags are the
# sub-routers', so each route states only its own path, summary and answer.
router.include_router(event_routes)
router.include_router(tick_routes)
