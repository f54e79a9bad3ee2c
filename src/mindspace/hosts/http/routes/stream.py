"""The live stream: Server-Sent Events of what happens inside an assistant.

Each SSE message has the notice's kind as its ``event`` and JSON
``{"kind", "assistant", "at", "data"}`` as its ``data``. Kinds: ``tick_started``,
``tick_finished``, ``tool_called``, ``reply``, ``mode_changed``, ``event_queued`` (from
the engine) and ``tick_recorded`` (a tick entered the server's tick log). The stream is
bounded: at most ``MINDSPACE_API_MAX_STREAMS`` open at once, each with a queue of
:data:`QUEUE_SIZE` items (a client that falls further behind gets a ``dropped`` count);
a keep-alive comment goes out every ``MINDSPACE_API_STREAM_HEARTBEAT`` seconds.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse

from mindspace.hosts.http.auth import KeyDep
from mindspace.hosts.http.errors import ApiError
from mindspace.hosts.http.hub import StreamItem
from mindspace.hosts.http.responses import safe_json_dumps
from mindspace.hosts.http.schemas import HubDep
from mindspace.hosts.http.settings import ServerSettings

__all__ = ["QUEUE_SIZE", "router", "sse_message"]

router = APIRouter(prefix="/v1/assistants/{key}")

QUEUE_SIZE = 256
POLL_SECONDS = 1.0
"""How often an idle stream checks whether its client went away."""


def sse_message(kind: str, data: object) -> str:
    """One SSE message."""
    return f"event: {kind}\ndata: {safe_json_dumps(data)}\n\n"


@router.get(
    "/stream",
    tags=["stream"],
    summary="Live events (Server-Sent Events)",
    response_class=StreamingResponse,
    responses={
        200: {
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
            "description": "An SSE stream: 'event: <kind>' and 'data: {kind, assistant, at, "
            "data}' per message",
        },
        503: {"description": "Too many streams are open (MINDSPACE_API_MAX_STREAMS)."},
    },
)
async def stream_events(
    key: KeyDep,
    request: Request,
    hub: HubDep,
    limit: Annotated[
        int | None,
        Query(ge=1, le=10_000, description="Close the stream after this many events."),
    ] = None,
) -> StreamingResponse:
    """Tick started and finished, tool called, reply, mode changed, event queued, tick kept."""
    hub.get(key)
    settings: ServerSettings = request.app.state.server_settings
    streams: dict[str, int] = request.app.state.streams
    if streams["open"] >= settings.api_max_streams:
        raise ApiError(
            503,
            f"{streams['open']} streams are open; the limit is {settings.api_max_streams}",
            "Close another stream, or raise MINDSPACE_API_MAX_STREAMS.",
        )
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[StreamItem] = asyncio.Queue(maxsize=QUEUE_SIZE)
    dropped = 0

    def put(item: StreamItem) -> None:
        nonlocal dropped
        try:
            queue.put_nowait(item)
        except asyncio.QueueFull:
            dropped += 1

    def listener(item: StreamItem) -> None:
        loop.call_soon_threadsafe(put, item)

    async def messages() -> AsyncIterator[str]:
        nonlocal dropped
        sent = 0
        unsubscribe = hub.subscribe(key, listener)
        streams["open"] += 1
        try:
            yield "retry: 3000\n\n" + sse_message("hello", {"assistant": key})
            quiet = 0.0
            while limit is None or sent < limit:
                try:
                    item = await asyncio.wait_for(queue.get(), timeout=POLL_SECONDS)
                except TimeoutError:
                    if await request.is_disconnected():
                        return
                    quiet += POLL_SECONDS
                    if quiet >= settings.api_stream_heartbeat:
                        quiet = 0.0
                        yield ": keep-alive\n\n"
                    continue
                if dropped:
                    yield sse_message("dropped", {"count": dropped})
                    dropped = 0
                yield sse_message(str(item["kind"]), item)
                sent += 1
        finally:
            unsubscribe()
            streams["open"] -= 1

    return StreamingResponse(
        messages(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
