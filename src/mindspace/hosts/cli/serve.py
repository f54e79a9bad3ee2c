"""``mindspace serve``: the HTTP API and the dashboard; and the demo's ``--serve``.

Needs the ``server`` extra (FastAPI and uvicorn). The server ticks every assistant in the
database at its tick rate; tokens come from ``MINDSPACE_API_TOKEN`` and
``MINDSPACE_API_TOKENS`` (see docs/http.md).
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Annotated, Literal

import typer
from rich.console import Console
from rich.text import Text

from mindspace.hosts.cli.common import (
    CliError,
    DbOption,
    UsageError,
    database_location,
    load_settings,
)

if TYPE_CHECKING:
    from mindspace.clock import Clock
    from mindspace.config import Settings
    from mindspace.hosts.cli.demo import DemoReport
    from mindspace.hosts.http.settings import ServerSettings

__all__ = ["HostOption", "PortOption", "TicksOption", "serve", "serve_command", "serve_demo"]

console = Console(markup=False, emoji=False, highlight=False)

HostOption = Annotated[
    str,
    typer.Option(
        "--host",
        metavar="ADDRESS",
        help="Address to listen on. Anything but loopback needs MINDSPACE_API_TOKEN(S).",
    ),
]
PortOption = Annotated[
    int, typer.Option("--port", min=1, max=65535, metavar="PORT", help="Port to listen on.")
]

TicksMode = Literal["local", "queue"]
TicksOption = Annotated[
    str,
    typer.Option(
        "--ticks",
        metavar="local|queue",
        help="local: tick assistants in this process (zero setup). queue: enqueue their "
        "ticks for `mindspace worker` processes (PostgreSQL only).",
    ),
]


def _server_settings() -> ServerSettings:
    if importlib.util.find_spec("fastapi") is None or importlib.util.find_spec("uvicorn") is None:
        raise CliError(
            "The HTTP server needs the 'server' extra: pip install -e '.[server]' in a "
            "mindspace clone "
            "(make installs it for the tests)."
        )
    from pydantic import ValidationError

    from mindspace.hosts.http.settings import ServerSettings

    try:
        return ServerSettings()
    except ValidationError as exc:
        problems = "; ".join(
            f"MINDSPACE_{'_'.join(str(p) for p in err['loc']).upper()}: {err['msg']}"
            for err in exc.errors()
        )
        raise CliError(f"Invalid setting: {problems}. Fix or unset that variable.") from exc


def serve(
    settings: Settings,
    db: str | None,
    host: str,
    port: int,
    *,
    report: DemoReport | None = None,
    ticks: TicksMode = "local",
    clock: Clock | None = None,
) -> None:
    """Serve the database ``db`` (seeding the tick log with a demo's ticks, if any).

    ``ticks="queue"`` enqueues the assistants' ticks for the worker fleet instead of
    running them here. ``clock`` is the hub's clock (the system clock by default).
    """
    server = _server_settings()
    from mindspace.hosts.http.app import build_hub, create_app
    from mindspace.hosts.http.server import check_listen_address, run_server
    from mindspace.workers import queue_ticks, require_queue_database

    check_listen_address(host, server)
    if ticks == "queue":
        require_queue_database(settings, db)
    hub = build_hub(settings, db=db, tick_history=server.api_tick_history, clock=clock)
    if report is not None:
        for at, result in report.tick_results[-server.api_tick_history :]:
            hub.ticks.add(report.assistant_key, at, result)
    dispatch = None
    if ticks == "queue":

        def asleep(key: str) -> bool:
            return hub.get(key).views.mode().mode == "sleep"

        dispatch = queue_ticks(hub, settings, db, asleep=asleep)
    app = create_app(hub, server=server, ticks=dispatch)
    key = report.assistant_key if report is not None else None

    def announce(url: str) -> None:
        where = database_location(settings, db)
        console.print(Text.assemble(("mindspace serve", "bold"), f" - database {where}"))
        dashboard = f"{url}/dashboard/" + (f"#/overview?assistant={key}" if key else "")
        console.print(Text.assemble("Dashboard: ", (dashboard, "bold cyan")))
        console.print(Text(f"API: {url}/v1 (schema at {url}/openapi.json)", style="dim"))
        if importlib.util.find_spec("mcp") is not None:
            console.print(Text(f"MCP: {url}/v1/assistants/<key>/mcp (docs/mcp.md)", style="dim"))
        if ticks == "queue":
            console.print(Text("Ticks: enqueued for `mindspace worker` processes", style="dim"))
        if report is not None and report.ended_at is not None:
            started = report.ended_at.strftime("%Y-%m-%d %H:%M")
            console.print(
                Text(f"Clock: the demo's, going on from {started} UTC at real speed", style="dim")
            )
        if getattr(hub.llm, "model", "") == "mindspace-offline":
            console.print(Text("Model: the offline stand-in (set MINDSPACE_LLM_*)", style="dim"))
        console.print(Text("Press Ctrl+C to stop.", style="dim"))

    run_server(app, host, port, server, on_start=announce)


def serve_command(
    host: HostOption = "127.0.0.1",
    port: PortOption = 8765,
    db: DbOption = None,
    ticks: TicksOption = "local",
) -> None:
    """Serve the HTTP API and the dashboard for every assistant in the database.

    Assistants tick in the background (every 5 s awake, 60 s asleep): in this process
    (--ticks local), or by `mindspace worker` processes (--ticks queue, PostgreSQL). A
    token from MINDSPACE_API_TOKEN (or MINDSPACE_API_TOKENS) is required off loopback.
    """
    if ticks not in ("local", "queue"):
        raise UsageError(f"--ticks must be 'local' or 'queue', got {ticks!r}.")
    serve(load_settings(), db, host, port, ticks="queue" if ticks == "queue" else "local")


def serve_demo(
    settings: Settings, db: str | None, report: DemoReport, host: str, port: int
) -> None:
    """After the demo: serve its database, with its ticks in the context viewer.

    The server's clock goes on from the demo's scripted time at real speed, so the
    ticker's new ticks, events and entries follow the demo's 2025 story instead of
    jumping to today (docs/http.md).
    """
    from mindspace.clock import ResumedClock

    clock = ResumedClock(report.ended_at) if report.ended_at is not None else None
    serve(settings, db, host, port, report=report, clock=clock)
