"""``mindspace mcp``: one assistant as a Model Context Protocol server over stdio.

An MCP client (Claude Desktop, an IDE, an agent framework) launches this command and
talks to it on stdin/stdout; see docs/mcp.md for the client configuration. Needs the
``mcp`` extra. Problems found before serving (no such database or assistant, a bad
setting) print one ``error:`` line on stderr and exit 1, as every command does.
"""

from __future__ import annotations

import importlib.util
import logging
import sys
from typing import Annotated

import typer

from mindspace.hosts.cli.common import (
    AssistantOption,
    CliError,
    DbOption,
    load_settings,
    open_cli_assistant,
    run_once,
)

__all__ = ["mcp_command"]


def _configure_logging() -> None:
    # stdout is the protocol's channel: every log line goes to stderr
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s", "%H:%M:%S"))
    for name in ("mindspace", "mcp"):
        log = logging.getLogger(name)
        log.addHandler(handler)
        log.setLevel(logging.WARNING)
        log.propagate = False


def mcp_command(
    db: DbOption = None,
    assistant: AssistantOption = None,
    create: Annotated[
        bool,
        typer.Option(
            "--create",
            help="Create the assistant when the database has none by that key (by default "
            "an unknown key is an error, so a typo never starts a new, empty assistant).",
        ),
    ] = False,
) -> None:
    """Serve an assistant's tools and state to an MCP client over stdin/stdout.

    Tools keep their JSON schemas and categories; DANGEROUS ones only record a request
    for approval. Resources: mindspace://KEY/goals, session-memory, journal, memories.

    Example client command: mindspace mcp --db ~/tavern.db --assistant barkeep
    """
    if importlib.util.find_spec("mcp") is None:
        raise CliError(
            "The MCP server needs the 'mcp' extra: pip install -e '.[mcp]' in a mindspace clone "
            "(make installs it for the tests)."
        )
    from mindspace.hosts.mcp import serve_stdio

    settings = load_settings()
    opened = open_cli_assistant(settings, db, assistant, create=create)
    _configure_logging()
    try:
        run_once(opened, serve_stdio(opened))
    except KeyboardInterrupt:  # Ctrl+C in a terminal: the client is gone, nothing to say
        raise typer.Exit(130) from None
