"""The FastAPI application: the ``/v1`` API, its OpenAPI schema, and the dashboard.

Example:
    >>> app = create_app(settings=Settings(), db="tavern.db")
    >>> uvicorn.run(app, host="127.0.0.1", port=8765)

Tests build an :class:`~mindspace.hosts.http.hub.AssistantHub` on their own store and
clock and pass ``background_ticks=False``, then tick on demand with ``POST .../tick``.
"""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import FastAPI
from fastapi.responses import RedirectResponse
from fastapi.staticfiles import StaticFiles
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mindspace import __version__
from mindspace.clock import Clock
from mindspace.config import Settings
from mindspace.engine import AsyncTickDriver, TickDispatch, TickPolicy
from mindspace.hosts.http.contract import install_contract, operation_id
from mindspace.hosts.http.errors import BodyLimitMiddleware, install_error_handlers
from mindspace.hosts.http.hub import AssistantHub
from mindspace.hosts.http.metrics import metrics_router
from mindspace.hosts.http.responses import SafeJSONResponse
from mindspace.hosts.http.routes import (
    assistants_router,
    control_router,
    edits_router,
    events_router,
    session_router,
    state_router,
    stream_router,
    tools_router,
)
from mindspace.hosts.http.settings import ServerSettings, TokenPolicy
from mindspace.llm.port import LLM
from mindspace.runtime import Runtime

if TYPE_CHECKING:
    from mindspace.hosts.http.mcp_mount import McpMount

__all__ = ["DASHBOARD_DIR", "build_hub", "create_app"]

DASHBOARD_DIR = Path(__file__).parent / "dashboard"

_DESCRIPTION = """\
The HTTP API of mindspace assistants. Every tool is callable by name at
`POST /v1/assistants/{key}/tools/{name}` with its arguments as the JSON body, and returns
the spec's result shape. Every error (4xx and 5xx, 422 included) has the shape
`{"success": false, "error": ..., "suggestion": ..., "problems": [...]}` (the model
`ErrorBody`; `problems` lists each invalid field on a 422). Lists take `offset` and
`limit` and answer `total`, `offset` and `limit`.

Authentication: `Authorization: Bearer <token>`, with tokens from `MINDSPACE_API_TOKEN`
(every assistant) and `MINDSPACE_API_TOKENS` (`token=key1,key2;token2=*`). With neither
set the API is open and the server listens on loopback only. The dashboard is at
`/dashboard/`.
"""

_SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        b"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    ),
]


class _SecurityHeaders:
    """Add headers that keep the dashboard's pages from being framed or sniffed."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *_SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers)


def build_hub(
    settings: Settings,
    *,
    db: str | Path | None = None,
    llm: LLM | None = None,
    clock: Clock | None = None,
    tick_history: int = 20,
) -> AssistantHub:
    """A hub on the database ``db`` (or the settings' one), with the configured model.

    Raises:
        ConfigError: the model or the embedder the settings name cannot be built (at
            once, not when the first assistant opens).
    """
    runtime = Runtime.from_settings(settings, db, llm=llm, clock=clock)
    return AssistantHub(runtime.prepare(), tick_history=tick_history)


def create_app(
    hub: AssistantHub | None = None,
    *,
    settings: Settings | None = None,
    server: ServerSettings | None = None,
    db: str | Path | None = None,
    llm: LLM | None = None,
    clock: Clock | None = None,
    background_ticks: bool = True,
    ticks: TickDispatch | None = None,
) -> FastAPI:
    """The API and the dashboard for the assistants of ``hub`` (or of ``db``).

    Args:
        hub: The assistants to serve; built from ``settings`` and ``db`` when absent.
        settings: Runtime settings (from the environment when absent).
        server: Server settings: tokens, limits (from the environment when absent).
        db: The database, when no hub is given.
        llm: The model, when no hub is given (the configured one by default).
        clock: The clock, when no hub is given (the system clock by default).
        background_ticks: Tick every open assistant at its tick rate while running
            (through ``ticks``).
        ticks: Who ticks the assistants in the background: the engine's in-process
            :class:`~mindspace.engine.scheduler.AsyncTickDriver` over the hub (the
            default), or a worker fleet's queue dispatch (``mindspace serve --ticks
            queue``, built by :func:`mindspace.workers.queue_ticks`).

    Raises:
        ConfigError: a malformed token setting.
    """
    server = server or ServerSettings()
    policy = TokenPolicy.from_settings(server)
    if hub is None:
        hub = build_hub(
            settings or Settings(),
            db=db,
            llm=llm,
            clock=clock,
            tick_history=server.api_tick_history,
        )
    # one scheduling policy for every host: the engine's, driven on this event loop
    # (or by the worker fleet, when a queue dispatch is given)
    ticker: TickDispatch = (
        ticks
        if ticks is not None
        else AsyncTickDriver(hub, TickPolicy(awake_rate=hub.settings.tick_rate_awake))
    )
    served = hub
    mcp_mount = _mcp_mount(hub, policy)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        served.open_all()
        if background_ticks:
            ticker.start()
        try:
            async with AsyncExitStack() as transports:
                if mcp_mount is not None:
                    await transports.enter_async_context(mcp_mount.run())
                yield
        finally:
            await ticker.stop()
            served.close()

    app = FastAPI(
        title="mindspace",
        version=__version__,
        description=_DESCRIPTION,
        lifespan=lifespan,
        # Swagger UI and ReDoc load their scripts from a CDN, which the page's CSP (and an
        # offline machine) would block; the schema itself is at /openapi.json.
        docs_url=None,
        redoc_url=None,
        # every response renders, whatever text it carries (see responses.py)
        default_response_class=SafeJSONResponse,
        # stable operation ids: a route's explicit one, else its function's name
        generate_unique_id_function=operation_id,
    )
    app.state.hub = hub
    app.state.policy = policy
    app.state.server_settings = server
    app.state.ticker = ticker
    app.state.streams = {"open": 0}
    install_error_handlers(app)
    install_contract(app)
    for router in (
        assistants_router,
        events_router,
        tools_router,
        state_router,
        control_router,
        edits_router,
        session_router,
        stream_router,
        metrics_router,
    ):
        app.include_router(router)

    if mcp_mount is not None:
        from mindspace.hosts.http.mcp_mount import MCP_PATH

        # an ASGI endpoint (every method): the MCP transport answers POST, GET and DELETE
        app.router.routes.append(Route(MCP_PATH, endpoint=mcp_mount, name="mcp"))

    @app.get("/", include_in_schema=False)
    async def root() -> RedirectResponse:
        return RedirectResponse("/dashboard/")

    app.mount("/dashboard", StaticFiles(directory=DASHBOARD_DIR, html=True), name="dashboard")
    app.add_middleware(BodyLimitMiddleware, limit=server.api_max_body_bytes)
    app.add_middleware(_SecurityHeaders)
    return app


def _mcp_mount(hub: AssistantHub, policy: TokenPolicy) -> McpMount | None:
    """Each assistant's MCP endpoint, when the ``mcp`` extra is installed."""
    if importlib.util.find_spec("mcp") is None:
        return None
    from mindspace.hosts.http.mcp_mount import McpMount

    return McpMount(hub, policy)
