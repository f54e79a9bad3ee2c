"""``mindspace session``: see and edit session memory, the facts that go into every prompt.

``session`` lists the facts and patterns with their numbers; ``session add TEXT``,
``session edit N TEXT`` and ``session delete N`` change them (``--pattern`` for the
patterns). Each change passes the checks the model's ``add_session_memory`` passes and is
recorded in the history as made by the user ``cli`` (``--actor`` names someone else).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich import box
from rich.table import Table

from mindspace.hosts.cli.common import CliError, console, dump, say
from mindspace.hosts.cli.target import Target, as_user_on_assistant, on_assistant

if TYPE_CHECKING:  # the engine is imported in the commands' bodies (start-up time)
    from mindspace.engine import Actor, SessionItemEdits, SessionItemKind

__all__ = ["session_app"]

_T = TypeVar("_T")

session_app = typer.Typer(name="session", add_completion=False, rich_markup_mode="rich")

PatternOption = Annotated[
    bool, typer.Option("--pattern", help="A learned pattern instead of a fact.")
]
IndexArgument = Annotated[
    int, typer.Argument(metavar="N", min=0, help="The item's number, as `mindspace session` shows.")
]
TextArgument = Annotated[str, typer.Argument(metavar="TEXT", help="The text, in the third person.")]


def _kind(pattern: bool) -> SessionItemKind:
    return "pattern" if pattern else "fact"


def _change(
    target: Target, change: Callable[[SessionItemEdits, Actor], Coroutine[Any, Any, _T]]
) -> _T:
    """Run one change of session memory, as ``target.user``; its refusal as an error line."""
    from mindspace.errors import InvalidInputError, RecordNotFoundError

    try:
        return target.change(lambda a: change(a.edits, target.user))
    except (InvalidInputError, RecordNotFoundError) as exc:
        raise CliError(f"{exc.error}. {exc.suggestion}".replace(".. ", ". ")) from None


@session_app.callback(invoke_without_command=True)
@on_assistant
def session_command(ctx: typer.Context, target: Target) -> None:
    """List session memory: numbered facts and patterns, and the tasks completed lately."""
    if ctx.invoked_subcommand is not None:
        return
    opened = target.open()
    memory = opened.views.session_memory()
    if target.as_json:
        dump(memory.model_dump(mode="json"))
        return
    if not memory.key_facts and not memory.learned_patterns:
        say(
            f"Assistant {opened.key!r} has no session facts yet. Add one with: "
            "mindspace session add 'Dave prefers red wine'"
        )
    for title, items in (("Facts", memory.key_facts), ("Patterns", memory.learned_patterns)):
        if not items:
            continue
        table = Table(title=f"{title} of {opened.key!r}", title_justify="left", box=box.SIMPLE_HEAD)
        table.add_column("N", justify="right", no_wrap=True)
        table.add_column("Text", overflow="fold")
        for n, item in enumerate(items):
            table.add_row(str(n), item)
        console.print(table)
    if memory.completed_tasks:
        done = ", ".join(t.description for t in memory.completed_tasks[-5:])
        say(f"Completed lately: {done}")
    if memory.key_facts or memory.learned_patterns:
        say("Change one: mindspace session edit N TEXT, or delete it: mindspace session delete N")


@session_app.command("add")
@as_user_on_assistant
def session_add_command(target: Target, text: TextArgument, pattern: PatternOption = False) -> None:
    """Add a fact (or with --pattern a pattern) to session memory."""
    kind = _kind(pattern)
    index = _change(target, lambda edits, user: edits.add_session_item(kind, text, user))
    shown = {"kind": kind, "index": index, "text": text.strip()}
    target.report(shown, f"Session {kind} {index} added: {text.strip()}")


@session_app.command("edit")
@as_user_on_assistant
def session_edit_command(
    target: Target,
    index: IndexArgument,
    text: TextArgument,
    pattern: PatternOption = False,
) -> None:
    """Replace the text of session fact N (or with --pattern pattern N)."""
    kind = _kind(pattern)
    old = _change(target, lambda edits, user: edits.update_session_item(kind, index, text, user))
    shown = {"kind": kind, "index": index, "before": old, "text": text.strip()}
    target.report(shown, f"Session {kind} {index} changed: {old!r} -> {text.strip()!r}")


@session_app.command("delete")
@as_user_on_assistant
def session_delete_command(
    target: Target,
    index: IndexArgument,
    pattern: PatternOption = False,
) -> None:
    """Delete session fact N (or with --pattern pattern N); the later ones move up."""
    kind = _kind(pattern)
    old = _change(target, lambda edits, user: edits.delete_session_item(kind, index, user))
    shown = {"kind": kind, "index": index, "deleted": old}
    target.report(shown, f"Session {kind} {index} deleted: {old}")
