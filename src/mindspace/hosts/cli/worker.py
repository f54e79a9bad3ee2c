"""``mindspace worker``: run the ticks of every assistant in a PostgreSQL database.

Needs the ``fleet`` extra (procrastinate, psycopg). Start as many workers as you like, on
as many machines: they share the database's task queue (see docs/scale-out.md).
"""

from __future__ import annotations

import logging
import os
import socket
import sys
from typing import Annotated

import typer

from mindspace.hosts.cli.common import DbOption, load_settings

__all__ = ["worker_command"]


def _configure_logging(verbose: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", datefmt="%H:%M:%S"))
    for name in ("mindspace.fleet", "mindspace.engine"):
        log = logging.getLogger(name)
        log.addHandler(handler)
        log.setLevel(logging.DEBUG if verbose and name == "mindspace.fleet" else logging.INFO)
        log.propagate = False
    # procrastinate's own lines (every job's start and end) only when something is wrong
    queue = logging.getLogger("procrastinate")
    queue.addHandler(handler)
    queue.setLevel(logging.WARNING)
    queue.propagate = False


def worker_command(
    db: DbOption = None,
    concurrency: Annotated[
        int,
        typer.Option(
            "--concurrency",
            "-c",
            min=1,
            max=256,
            help="Ticks of different assistants this process runs at once.",
        ),
    ] = 4,
    name: Annotated[
        str | None,
        typer.Option(
            "--name", metavar="NAME", help="The worker's name in logs. Default: host-pid."
        ),
    ] = None,
    heartbeat: Annotated[
        float,
        typer.Option(
            "--heartbeat",
            min=0.2,
            metavar="SECONDS",
            help="Seconds between this worker's heartbeats (and looks for dead workers).",
        ),
    ] = 2.0,
    stall_after: Annotated[
        float,
        typer.Option(
            "--stall-after",
            min=1.0,
            metavar="SECONDS",
            help="A worker silent this long is taken for dead: its tick is retried here.",
        ),
    ] = 10.0,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Also log idle ticks and scheduling.")
    ] = False,
) -> None:
    """Run the ticks of every assistant in a PostgreSQL database (the worker fleet).

    Each assistant ticks at its rate (5 s awake, 60 s asleep), never on two workers at
    once; idle ones cost nothing until an event arrives. Stop with Ctrl+C or SIGTERM:
    running ticks finish first. Serve the API beside it with `mindspace serve --ticks queue`.
    """
    from mindspace.workers import run_worker

    if stall_after <= heartbeat:
        raise typer.BadParameter(
            f"--stall-after ({stall_after:g}) must be longer than --heartbeat ({heartbeat:g})."
        )
    settings = load_settings()
    _configure_logging(verbose)
    try:
        run_worker(
            settings,
            db,
            concurrency=concurrency,
            name=name or f"{socket.gethostname()}-{os.getpid()}",
            heartbeat=heartbeat,
            stall_after=stall_after,
        )
    except KeyboardInterrupt:  # Ctrl+C while starting, before the worker handles signals
        raise typer.Exit(130) from None
