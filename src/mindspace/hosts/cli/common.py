"""What every CLI command shares: settings, opening runtimes and assistants, errors, options.

Also the console, checks and formatters that several command modules use. Settings,
the engine, the store and SQLAlchemy are imported inside the functions that use them:
every command module imports this one, and ``mindspace --help`` must not load them.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from mindspace.errors import AssistantNotFoundError, ConfigError, MindspaceError

if TYPE_CHECKING:
    from mindspace.clock import Clock
    from mindspace.config import Settings
    from mindspace.engine import Assistant
    from mindspace.llm.port import LLM
    from mindspace.runtime import Runtime

__all__ = [
    "AssistantOption",
    "CliError",
    "DbOption",
    "JsonOption",
    "UsageError",
    "check_limit",
    "console",
    "counted",
    "database_location",
    "dump",
    "load_settings",
    "missing_extra",
    "notes_on_stderr",
    "offline_llm",
    "open_cli_assistant",
    "open_cli_runtime",
    "output_file_option",
    "print_error",
    "reflow_help",
    "run_once",
    "say",
    "when",
]

_T = TypeVar("_T")

# User data (memories, observations, reasons) is printed as-is: no markup, no emoji codes.
console = Console(markup=False, emoji=False, highlight=False)

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        metavar="PATH_OR_URL",
        help="SQLite file or SQLAlchemy URL. Default: MINDSPACE_DATABASE_URL, else "
        "mindspace.db in MINDSPACE_DATA_DIR.",
        show_default=False,
    ),
]
AssistantOption = Annotated[
    str | None,
    typer.Option(
        "--assistant",
        "-a",
        metavar="KEY",
        help="Assistant to open (commands that only read never create one). Default: "
        "MINDSPACE_ASSISTANT_KEY, else 'default'.",
        show_default=False,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]


def output_file_option(help: str) -> Any:
    """The ``--output``/``-o FILE`` option with this ``help``, for a ``Path | None`` parameter.

    Commands write different things there, so only the help differs.
    """
    return typer.Option("--output", "-o", metavar="FILE", help=help, show_default=False)


class CliError(Exception):
    """A problem the user can fix; printed as one ``error:`` line, exit status 1.

    Exit statuses (docs/cli.md): 0 done, 1 the work failed (a database that cannot be
    opened, a tool that failed, a model that did not answer), 2 the command line is wrong
    (an unknown option, a value out of range, malformed ``--args``) - see UsageError.
    """

    exit_code: int = 1


class UsageError(CliError):
    """A bad option or argument value; printed as one ``error:`` line, exit status 2."""

    exit_code = 2


_URL_PASSWORD = re.compile(r"(://[^:/@\s]+:)[^@\s]+@")


def print_error(message: str) -> None:
    """Print ``error: <message>`` to stderr as one line, with URL passwords masked."""
    one_line = " ".join(part.strip() for part in message.splitlines() if part.strip())
    masked = _URL_PASSWORD.sub(r"\1***@", one_line)
    typer.echo(f"error: {masked}", err=True)


# The top-level module of each optional dependency, and the extra that installs it.
_EXTRA_OF_MODULE = {
    "fastapi": "server",
    "uvicorn": "server",
    "starlette": "server",
    "psycopg": "postgres",
    "pgvector": "postgres",
    "procrastinate": "fleet",
    "mem0": "mem0",
    "qdrant_client": "mem0",
    "evennia": "evennia",
    "mcp": "mcp",
    "mcp_types": "mcp",
    "anthropic": "anthropic",
    "opentelemetry": "otel",
    "prometheus_client": "otel",
    "bm25s": "bench",
}


def missing_extra(exc: ModuleNotFoundError) -> str | None:
    """The error line for a missing optional dependency, naming its extra; else None."""
    module = (exc.name or "").split(".")[0]
    extra = _EXTRA_OF_MODULE.get(module)
    if extra is None:
        return None
    return (
        f"This needs the {module!r} package of the {extra!r} extra, which is not installed: "
        f"pip install -e '.[{extra}]' in a mindspace clone (or add [{extra}] to the git URL "
        "you installed from)."
    )


def load_settings() -> Settings:
    """Settings from the ``MINDSPACE_*`` environment, with bad values as a CliError."""
    from pydantic import ValidationError

    from mindspace.config import Settings

    try:
        return Settings()
    except ValidationError as exc:
        problems = "; ".join(
            f"MINDSPACE_{'_'.join(str(p) for p in err['loc']).upper()}: {err['msg']}"
            + (f" (got {err['input']!r})" if "input" in err else "")
            for err in exc.errors()
        )
        raise CliError(f"Invalid setting: {problems}. Fix or unset that variable.") from exc


def offline_llm(settings: Settings) -> LLM | None:
    """A quiet offline model when no LLM is configured; None lets the runtime build one."""
    from mindspace.runtime import offline_llm as quiet_offline_llm

    return None if settings.llm_configured else quiet_offline_llm()


def open_cli_runtime(
    settings: Settings,
    db: str | None,
    *,
    create: bool = True,
    llm: LLM | None = None,
    clock: Clock | None = None,
) -> Runtime:
    """The composition root on ``--db`` or the settings' database, unusable paths as a
    CliError.

    With ``create=False`` a missing database file is a CliError and nothing is created.
    The model and the embedder are built from the settings when first needed, unless
    ``llm`` is given.
    """
    from mindspace.runtime import Runtime

    if not create:
        _require_database(settings, db, None)
    try:
        return Runtime.from_settings(settings, db, create=create, llm=llm, clock=clock)
    except OSError as exc:
        raise _cannot_open(settings, db, exc) from exc


def open_cli_assistant(
    settings: Settings,
    db: str | None,
    key: str | None,
    *,
    clock: Clock | None = None,
    create: bool = True,
) -> Assistant:
    """Open the assistant ``key`` (or the default one) on ``db`` (or the default database).

    Commands that only read pass ``create=False``: a missing database file or an unknown
    assistant is then a CliError that lists the assistants there and how to create one,
    and nothing is created (an older database is still migrated).
    """
    if key is not None and not key.strip():
        raise UsageError(f"--assistant {key!r} is blank; pass a key such as 'barkeep', or omit it.")
    from mindspace.runtime import Runtime, build_embedder, build_llm

    if not create:
        _require_database(settings, db, key)
    try:  # first, so that a provider's ConfigError is not mistaken for a bad key
        llm = offline_llm(settings) or build_llm(settings)
        embedder = build_embedder(settings)
    except ConfigError as exc:  # a setting names no provider, or is incomplete (or OTEL_*)
        raise CliError(str(exc)) from exc
    try:
        runtime = Runtime.from_settings(
            settings, db, create=create, llm=llm, embedder=embedder, clock=clock
        )
        return runtime.open(key, create=create)
    except AssistantNotFoundError as exc:
        raise _no_assistant(settings, db, key) from exc
    except OSError as exc:
        raise _cannot_open(settings, db, exc) from exc
    except ValueError as exc:  # the store rejects malformed assistant keys with ValueError
        raise CliError(f"{exc} Pass another --assistant.") from exc


def run_once(assistant: Assistant, work: Coroutine[Any, Any, _T]) -> _T:
    """Run ``work`` on a new event loop, then close the assistant's model on that loop.

    A command runs at most one loop: the model's HTTP client keeps connections that
    belong to the loop they were opened on, so it is closed before the loop ends.
    """

    import asyncio

    from mindspace.llm.port import close_llm

    async def main() -> _T:
        try:
            return await work
        finally:
            await close_llm(assistant.llm)

    return asyncio.run(main())


def _how_to_create(db: str | None, key: str) -> str:
    where = f" --db {shlex.quote(db)}" if db is not None else ""
    who = f"--assistant {shlex.quote(key)}"
    return (
        f"talking to it (mindspace chat{where} {who}) or calling a tool "
        f"(mindspace tool get_system_status{where} {who}) creates it"
    )


def _require_database(settings: Settings, db: str | None, key: str | None) -> None:
    from mindspace.runtime import database_file

    path = database_file(settings, db)
    if path is None or path.is_file():
        return
    source = "from --db" if db is not None else _default_source(settings)
    raise CliError(
        f"No database at {str(path.resolve())!r} ({source}); this command only reads "
        "and creates nothing. Check the path, or start an assistant there: "
        f"{_how_to_create(db, key if key is not None else settings.assistant_key)}."
    )


def _default_source(settings: Settings) -> str:
    # Say "the default" when no variable was set: naming an unset variable misleads.
    if settings.database_url:
        return "from MINDSPACE_DATABASE_URL"
    if "data_dir" in settings.model_fields_set:
        return "from MINDSPACE_DATA_DIR"
    return "the default data directory; set MINDSPACE_DATA_DIR or pass --db for another"


def _no_assistant(settings: Settings, db: str | None, key: str | None) -> CliError:
    from mindspace.runtime import Runtime

    wanted = key if key is not None else settings.assistant_key
    where = database_location(settings, db)
    try:
        runtime = Runtime.from_settings(settings, db, create=False)
        try:
            keys = runtime.keys()
        finally:
            runtime.close()
    except MindspaceError:
        keys = []
    if keys:
        shown = ", ".join(repr(k) for k in keys[:_LISTED])
        more = f" and {len(keys) - _LISTED} more" if len(keys) > _LISTED else ""
        there = f"Assistants there: {shown}{more}; pass one with --assistant"
    else:
        there = "It has no assistants yet"
    if key is not None:
        origin = ""
    elif "assistant_key" in settings.model_fields_set:
        origin = " (from MINDSPACE_ASSISTANT_KEY)"
    else:
        origin = " (the default; pass --assistant or set MINDSPACE_ASSISTANT_KEY)"
    return CliError(
        f"No assistant {wanted!r}{origin} in {where!r}. {there}. This command only reads and "
        f"creates nothing; {_how_to_create(db, wanted)}."
    )


_LISTED = 20


def database_location(settings: Settings, db: str | None) -> str:
    """Where the database is, for people: an absolute file path, or the URL without password."""
    from mindspace.runtime import database_file, shown_url

    url = db if db is not None else settings.resolved_database_url()
    try:
        path = database_file(settings, db)
    except ConfigError:  # not a URL: shown as given
        return url
    return str(path.resolve()) if path is not None else shown_url(url)


def _cannot_open(settings: Settings, db: str | None, exc: OSError) -> CliError:
    # The SQL store creates the SQLite file's directory and lets OSError through.
    return CliError(
        f"Cannot open database {database_location(settings, db)!r}: {exc.strerror or exc}. "
        "Pass a writable path with --db or set MINDSPACE_DATA_DIR."
    )


def check_limit(limit: int, option: str = "--limit") -> None:
    """Reject a ``--limit`` (or other count ``option``) below 1 as a CliError."""
    if limit < 1:
        raise UsageError(f"{option} must be at least 1, not {limit!r}; pass e.g. {option} 20.")


def when(stamp: str | None) -> str:
    """``2025-12-06T10:00:00Z`` as ``2025-12-06 10:00:00 UTC``."""
    if not stamp:
        return "-"
    return stamp.replace("T", " ").removesuffix("Z") + " UTC"


def counted(count: int, singular: str, plural: str) -> str:
    """``1 entry``, ``2 entries``: the count with the noun that fits it."""
    return f"{count} {singular if count == 1 else plural}"


@contextmanager
def notes_on_stderr(active: bool) -> Iterator[None]:
    """With ``active`` (a command's ``--json``), the console prints to stderr.

    A command that acts and narrates (``sleep``, ``wake``) keeps its human lines visible
    while stdout carries only the JSON it prints at the end.
    """
    if not active:
        yield
        return
    saved = console.file
    console.file = sys.stderr
    try:
        yield
    finally:
        console.file = saved


def say(line: str | Text) -> None:
    """Print a message without wrapping it (commands in it stay copyable)."""
    console.print(line, soft_wrap=True)


def dump(value: object) -> None:
    """Print ``value`` as indented JSON, non-ASCII kept, anything else as its ``str``."""
    typer.echo(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def _reflowed(doc: str | None) -> str | None:
    """A docstring with each paragraph on one line, so the terminal wraps it.

    Rich help keeps a docstring's line breaks, so a line wrapped at 88 columns in the
    source breaks again mid-sentence in an 80-column terminal.
    """
    if not doc:
        return None
    import inspect

    paragraphs = inspect.cleandoc(doc).split("\n\n")
    return "\n\n".join(" ".join(part.split()) for part in paragraphs)


def reflow_help(app: typer.Typer) -> None:
    """Give every command in ``app`` (and its sub-apps) its docstring as reflowed help."""
    for command in app.registered_commands:
        if command.help is None and command.callback is not None:
            command.help = _reflowed(command.callback.__doc__)
    for group in app.registered_groups:
        sub = group.typer_instance
        if sub is not None:
            callback = sub.registered_callback
            if callback is not None and callback.help is None and callback.callback is not None:
                callback.help = _reflowed(callback.callback.__doc__)
            reflow_help(sub)
