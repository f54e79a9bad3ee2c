"""``mindspace journal``: list an assistant's journal entries, and ``journal search QUERY``.

Both only read: nothing is written and no tool call is counted.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from mindspace.hosts.cli.common import (
    AssistantOption,
    DbOption,
    load_settings,
    open_cli_assistant,
    run_once,
)

if TYPE_CHECKING:  # the engine is imported in the commands' bodies (start-up time)
    from mindspace.engine import Assistant
    from mindspace.journal.records import JournalEntry
    from mindspace.journal.search import JournalFilter

__all__ = ["journal_app"]

journal_app = typer.Typer(
    name="journal",
    help="Show the journal: time, importance (and how it was scored), trust, tags and "
    "content, newest first. [bold]journal search QUERY[/] finds entries by text.",
    add_completion=False,
    rich_markup_mode="rich",
)
console = Console(markup=False, emoji=False, highlight=False)

TagOption = Annotated[
    list[str] | None,
    typer.Option(
        "--tag", "-t", metavar="TAG", help="Only entries with this tag (repeat: all of them)."
    ),
]
DaysOption = Annotated[
    int | None, typer.Option("--days", min=1, metavar="N", help="Only the last N days.")
]
ProjectOption = Annotated[
    str | None, typer.Option("--project", metavar="KEY", help="Only entries about this project.")
]
LimitOption = Annotated[
    int, typer.Option("--limit", "-n", min=1, metavar="N", help="Most entries shown.")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the entries as JSON.")]


def _filter(tag: list[str] | None, days: int | None, project: str | None) -> JournalFilter:
    from mindspace.journal.search import JournalFilter

    return JournalFilter(tags=tuple(tag or ()), days_back=days, project=project)


@journal_app.callback(invoke_without_command=True)
def journal_command(
    ctx: typer.Context,
    tag: TagOption = None,
    days: DaysOption = None,
    project: ProjectOption = None,
    limit: LimitOption = 20,
    as_json: JsonOption = False,
    db: DbOption = None,
    assistant: AssistantOption = None,
) -> None:
    """List journal entries, newest first, optionally filtered by tag, days and project."""
    if ctx.invoked_subcommand is not None:
        return
    opened = open_cli_assistant(load_settings(), db, assistant, create=False)
    entries = opened.views.journal_entries(_filter(tag, days, project))
    if as_json:
        typer.echo(json.dumps([e.to_spec() for e in entries[:limit]], indent=2, ensure_ascii=False))
        return
    if not entries and not opened.views.journal_entries():
        console.print(
            f"Assistant {opened.key!r} has no journal entries yet. Add one with: mindspace tool "
            'add_journal_entry --args \'{"content": "Alice opened a shop"}\'',
            soft_wrap=True,
        )
        return
    _show(opened, entries[:limit], len(entries), title=f"Journal of {opened.key!r}")


@journal_app.command("search")
def search_command(
    query: Annotated[str, typer.Argument(help="What to find (by meaning, or text with --text).")],
    tag: TagOption = None,
    days: DaysOption = None,
    project: ProjectOption = None,
    limit: LimitOption = 10,
    text_only: Annotated[
        bool, typer.Option("--text", help="Case-insensitive text match instead of meaning.")
    ] = False,
    as_json: JsonOption = False,
    db: DbOption = None,
    assistant: AssistantOption = None,
) -> None:
    """Find journal entries matching QUERY (what the search_journal tool does).

    By meaning when an embedder is configured (entries below MINDSPACE_JOURNAL_MIN_SIMILARITY
    are no match), else, or with --text, entries containing QUERY.
    """
    opened = open_cli_assistant(load_settings(), db, assistant, create=False)
    where = _filter(tag, days, project)
    found = run_once(
        opened,
        opened.views.search_journal(query, where, limit=limit, semantic=not text_only),
    )
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "query": query,
                    "mode": found.mode,
                    "total_matches": found.total_matches,
                    "results": [e.to_spec() for e in found.entries],
                },
                indent=2,
                ensure_ascii=False,
            )
        )
        return
    _show(opened, found.entries, found.total_matches, title=f"Journal entries matching {query!r}")
    if found.note:
        console.print(Text(found.note + ".", style="dim"))


def _show(opened: Assistant, entries: Sequence[JournalEntry], total: int, *, title: str) -> None:
    if not entries:
        console.print("No journal entries match.")
        return
    console.print(_table(entries, title))
    state = opened.views.reflection_state()
    noun = "entry" if total == 1 else "entries"
    shown = f"{len(entries)} of {total} {noun}" if total > len(entries) else f"{total} {noun}"
    gathered = f"{state.cumulative_importance:g} of {state.threshold:g}"
    console.print(
        Text(
            f"{shown} shown. Importance gathered towards the next reflection: {gathered} "
            f"({state.reflection_count} reflections so far).",
            style="dim",
        )
    )


def _table(entries: Sequence[JournalEntry], title: str) -> Table:
    table = Table(
        title=title, title_justify="left", expand=True, box=box.SIMPLE_HEAD, show_edge=False
    )
    table.add_column("Id", justify="right", style="dim", no_wrap=True)
    table.add_column("Time (UTC)", no_wrap=True)
    table.add_column("Imp.", justify="right", no_wrap=True)
    table.add_column("Method", no_wrap=True)
    table.add_column("Trust", justify="right", no_wrap=True)
    table.add_column("Content and tags", min_width=20, overflow="fold")
    for entry in entries:
        style = "bold" if entry.importance >= 8 else ("dim" if entry.importance <= 3 else "")
        content = Text(entry.content, style="cyan" if entry.is_synthesis else "")
        if entry.tags:
            content.append("\n" + " ".join(f"#{tag}" for tag in entry.tags), style="magenta")
        table.add_row(
            str(entry.id),
            entry.timestamp.replace("T", " ").removesuffix("Z")[:16],
            Text(str(entry.importance), style=style),
            entry.importance_method,
            f"{entry.source_trust:.2g}",
            content,
        )
    return table
