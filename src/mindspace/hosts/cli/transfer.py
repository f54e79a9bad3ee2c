"""``mindspace export`` and ``mindspace import``: a whole assistant to and from a file.

The format and the work live in :mod:`mindspace.transfer` (docs/export.md); these
commands only open the store, pick the streams and report. Progress goes to stderr,
so ``mindspace export > mind.jsonl`` leaves the file clean.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from mindspace.hosts.cli.common import (
    AssistantOption,
    CliError,
    DbOption,
    JsonOption,
    database_location,
    load_settings,
    open_cli_runtime,
    output_file_option,
)

__all__ = ["export_command", "import_command"]

_PROGRESS_EVERY = 10_000


def _progress(line: str) -> None:
    typer.echo(line, err=True)


def export_command(
    output: Annotated[
        Path | None, output_file_option("Write the export to FILE instead of stdout.")
    ] = None,
    db: DbOption = None,
    assistant: AssistantOption = None,
) -> None:
    """Export an assistant (every record, the event queue, settings) as JSON lines.

    The format is documented in docs/export.md; `mindspace import` reads it back, into
    the same or another database (SQLite or PostgreSQL).
    """
    settings = load_settings()
    key = assistant if assistant is not None else settings.assistant_key
    runtime = open_cli_runtime(settings, db, create=False)
    try:
        if output is None:
            try:
                summary = runtime.export_assistant(
                    key, sys.stdout, progress=_progress, progress_every=_PROGRESS_EVERY
                )
            except BrokenPipeError:  # `mindspace export | head`: the reader left early
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                raise CliError(
                    "The export's reader closed the pipe before the end; nothing is wrong "
                    "with the assistant - write to a file with -o FILE instead."
                ) from None
        else:
            # Never replaces what the path is: a file is renamed over once complete, a
            # symlink is followed, a device or FIFO written through (docs/export.md).
            summary = runtime.export_assistant(
                key, output, progress=_progress, progress_every=_PROGRESS_EVERY
            )
    finally:
        runtime.close()
    where = "stdout" if output is None else repr(str(output))
    typer.echo(f"Exported {summary.records} records of {key!r} to {where}.", err=True)


def import_command(
    file: Annotated[
        str,
        typer.Argument(
            metavar="FILE", help="An export written by `mindspace export` ('-': stdin)."
        ),
    ],
    db: DbOption = None,
    as_key: Annotated[
        str | None,
        typer.Option(
            "--as",
            metavar="KEY",
            help="Import under this key. Default: the key the export was taken from.",
            show_default=False,
        ),
    ] = None,
    replace: Annotated[
        bool,
        typer.Option("--replace", help="Replace an existing assistant with that key."),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Import an assistant from an export, all or nothing.

    The whole file is checked before anything is written, and the assistant appears
    under its key only once every record is in. An existing assistant with that key is
    left alone unless --replace is given (stop its server or worker first).
    """
    from mindspace.errors import AlreadyExistsError

    if as_key is not None and not as_key.strip():
        raise CliError(f"--as {as_key!r} is blank; pass a key such as 'barkeep', or omit it.")
    settings = load_settings()
    with tempfile.TemporaryDirectory(prefix="mindspace-import-") as scratch:
        path = Path(file)
        if file == "-":  # read twice (check, then write): stdin is spooled to a file first
            path = Path(scratch) / "stdin.jsonl"
            with path.open("w", encoding="utf-8") as spool:
                shutil.copyfileobj(sys.stdin, spool)
        elif not path.is_file():
            raise CliError(f"No file {file!r}; give the path of a `mindspace export` file.")
        runtime = open_cli_runtime(settings, db, create=True)
        try:
            summary = runtime.import_assistant(
                path,
                key=as_key,
                replace=replace,
                progress=_progress,
                progress_every=_PROGRESS_EVERY,
            )
        except AlreadyExistsError as exc:
            raise CliError(
                f"{exc.error} in {database_location(settings, db)!r}. {exc.suggestion}"
            ) from exc
        finally:
            runtime.close()
    if as_json:
        shown = {
            "assistant": summary.assistant,
            "source": summary.source,
            "replaced": summary.replaced,
            "records": summary.records,
            "counts": summary.counts,
        }
        typer.echo(json.dumps(shown, ensure_ascii=False))
        return
    verb = "Replaced" if summary.replaced else "Imported"
    typer.echo(
        f"{verb} assistant {summary.assistant!r} ({summary.records} records, exported from "
        f"{summary.source!r}) in {database_location(settings, db)!r}."
    )
