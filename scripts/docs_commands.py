"""Run every shell command in README.md and docs/*.md as written; say which cannot be run.

Which text is a command (the rule ``make test`` enforces, in tests/test_doc_commands.py):

* Every fenced block names its language (```` ```sh ````, ```` ```text ````, ...): an
  untagged block is an error, so that no command hides in one.
* In ``sh``, ``bash`` and ``shell`` blocks every line is a command, except blank lines and
  lines that are only a comment; a line ending in ``\\`` goes on on the next; a trailing
  `` # comment`` is not part of the command.
* In ``console`` blocks, and in any other block, a line starting ``$ `` is a command (the
  rest of a ``console`` block is output).
* A line of a non-shell block that starts like a command (``mindspace ``, ``pip ``,
  ``curl ``, ``make ``, ``export ``) is an error: tag the block ``sh``.

A command's *text* is its lines joined with single spaces, without the trailing comment;
the tables below match that text exactly.

How they run: page by page in document order, in a fresh scratch directory per page
(``MINDSPACE_DATA_DIR`` is that directory, so ``mindspace.db`` there is the default
database, new for each page), with ``HOME`` inside it, a ``mindspace`` on ``PATH`` that
runs this checkout, and the interpreter's ``bin`` (``python``, ``pip``) after it. Each
command runs in its own ``bash`` (with ``pipefail``); the working directory and the shell
variables it leaves carry on to the next command of the page, as in one terminal
(:data:`FRESH_SHELL_PAGES` start a new shell at each heading: their sections are
alternatives). A command *runs* when it exits 0 (or as :data:`EXIT_STATUS` documents) and
prints no traceback; a ``curl`` command also when the API did not answer
``"success": false`` (curl exits 0 on any HTTP answer).

What the harness changes, and says so:

* ``MINDSPACE_EMBEDDER=hashing``: MiniLM takes seconds to load in each of ~60 processes;
  what the embedder does is tested elsewhere.
* :data:`PLACEHOLDERS`: the docs' example endpoints (Ollama, llama.cpp, OpenAI, ...)
  become a scripted chat-completions server in this process, Anthropic's API a scripted
  Messages-API server, and ``postgresql+psycopg://...`` a fresh database on a local
  PostgreSQL server (one per page).
* :data:`SERVERS`: long-running commands are started, probed once (``GET /v1/health``,
  or their ready line) and stopped with Ctrl+C (SIGINT); their ``--port`` becomes a free
  one. Those marked ``keep`` stay up until the page ends (the reader's other terminal),
  and the page's ``127.0.0.1:8765`` points at them.
* :data:`STDIN`: what is typed into ``mindspace chat`` (nothing else reads a terminal).
* :data:`CAPTURES`: ids the docs abbreviate (``evt_3f2a...``) are the ones the page's
  earlier commands printed.
* :data:`SETUP`: what a page assumes exists (run first, shown in the output).

Commands that cannot run here are in :data:`SKIP` with the reason; every other command
runs, and the check fails when one does not, so a new command in the docs is either run or
explicitly skipped. A table entry that no longer matches a command fails too.
``docs/doc-commands.md`` lists the skipped ones (``--table`` prints that page). Pages run
two at a time (``--jobs``), each with its own directory, databases and shell.

Usage (from the repository root)::

    PYTHONPATH=src python scripts/docs_commands.py [--page docs/export.md ...] [--keep]
    PYTHONPATH=src python scripts/docs_commands.py --table > docs/doc-commands.md

Prints one line per command (``ok``, ``skip`` or ``FAIL`` with the reason), then one JSON
line of counts. Exit status 0: every command ran or is skipped with a reason.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from docs_commands_run import (
    CommandResult,
    PageRunner,
    Problem,
    chat_respond,
    extract,
    pages,
)
from docs_commands_table import (
    CAPTURES,
    EXIT_STATUS,
    FRESH_SHELL_PAGES,
    PLACEHOLDERS,
    SERVERS,
    SETUP,
    SKIP,
    STDIN,
    markdown_table,
)

REPO = Path(__file__).resolve().parent.parent

__all__ = [
    "CAPTURES",
    "EXIT_STATUS",
    "FRESH_SHELL_PAGES",
    "PLACEHOLDERS",
    "SERVERS",
    "SETUP",
    "SKIP",
    "STDIN",
    "CommandResult",
    "Problem",
    "extract",
    "markdown_table",
    "run_docs",
    "stale_entries",
]


def stale_entries() -> list[str]:
    """Table entries that match no command in the docs any more."""
    texts = {c.text for page in pages(REPO) for c in extract(page, REPO)[0]}
    stale = []
    for name, table in (
        ("SKIP", SKIP),
        ("SERVERS", SERVERS),
        ("STDIN", STDIN),
        ("EXIT_STATUS", EXIT_STATUS),
    ):
        stale += [f"{name}: {text!r}" for text in table if text not in texts]
    return stale


def run_docs(
    work: Path,
    new_database: Callable[[str], str],
    *,
    only: list[str] | None = None,
    echo: Callable[[str], None] = print,
    jobs: int = 2,
) -> tuple[list[CommandResult], list[Problem]]:
    """Run every page's commands; return each command's result and the extraction problems.

    Pages run ``jobs`` at a time (each in its own directory, database and shell); a
    page's lines are printed together when it ends.

    Args:
        work: Where the pages' scratch directories go.
        new_database: Makes a fresh PostgreSQL database by name and returns its URL.
        only: Pages (relative paths) to run; all by default.
        echo: Where the progress lines go.
        jobs: Pages run at once.
    """
    from mindspace.testing import ChatCompletionsServer, MessagesServer

    lock = threading.Lock()

    def database(name: str) -> str:
        with lock:
            return new_database(name)

    results: list[CommandResult] = []
    problems: list[Problem] = []
    with ExitStack() as stack:
        chat = stack.enter_context(ChatCompletionsServer(model="qwen2.5:7b", respond=chat_respond))
        messages = stack.enter_context(
            MessagesServer(model="claude-sonnet-4-5", respond=chat_respond)
        )
        names = {"chat_url": chat.url, "messages_url": messages.url}

        def page_run(page: Path) -> tuple[list[CommandResult], list[Problem], list[str]]:
            relative = page.relative_to(REPO).as_posix()
            commands, found = extract(page, REPO)
            lines: list[str] = []
            if not commands:
                return [], found, lines
            with PageRunner(relative, work, names, database, lines.append) as runner:
                return runner.run(commands), found, lines

        chosen = [p for p in pages(REPO) if not only or p.relative_to(REPO).as_posix() in only]
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for done, found, lines in pool.map(page_run, chosen):
                results += done
                problems += found
                for line in lines:
                    echo(line)
    return results, problems


@contextmanager
def _local_postgres(work: Path) -> Iterator[Callable[[str], str]]:
    from mindspace.testing.postgres import LocalPostgres

    with LocalPostgres(work / "postgres") as server:
        yield server.new_database


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--page", action="append", help="a page to run (repeatable)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    parser.add_argument("--table", action="store_true", help="print docs/doc-commands.md")
    parser.add_argument("--jobs", type=int, default=2, help="pages run at once (default 2)")
    args = parser.parse_args(argv)
    if args.table:
        sys.stdout.write(markdown_table())
        return 0
    started = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="docs-commands-"))
    with _local_postgres(work) as new_database:
        results, problems = run_docs(work, new_database, only=args.page, jobs=args.jobs)
    for problem in problems:
        print(f"FAIL  {problem.where}: {problem.message}")
    stale = stale_entries()
    for entry in stale:
        print(f"FAIL  stale table entry {entry}")
    failed = [r for r in results if r.status == "fail"]
    counts = {
        "ran": sum(r.status == "ok" for r in results),
        "skipped": sum(r.status == "skip" for r in results),
        "failed": len(failed) + len(problems) + len(stale),
        "seconds": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(counts))
    if args.keep:
        print(f"scratch kept in {work}", file=sys.stderr)
    else:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
