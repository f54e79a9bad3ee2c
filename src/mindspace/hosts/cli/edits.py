"""Edit, delete and forget from the command line, and the history of such changes.

``memories edit/delete ID``, ``journal edit/delete ID``, ``goals edit/delete ID``,
``entities edit NAME``, ``entities forget NAME [--dry-run]`` and ``history``. Each change is
recorded in the history as made by the user ``cli`` (``--actor`` names someone else).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

import typer
from rich import box
from rich.table import Table

from mindspace.hosts.cli.common import (
    CliError,
    UsageError,
    check_limit,
    console,
    dump,
    run_once,
    say,
)
from mindspace.hosts.cli.target import Target, as_user_on_assistant, on_assistant

_T = TypeVar("_T")

__all__ = ["register_edit_commands"]

ContentOption = Annotated[
    str | None, typer.Option("--content", metavar="TEXT", help="The new text.")
]
TagsOption = Annotated[
    list[str] | None,
    typer.Option("--tag", "-t", metavar="TAG", help="Replace the tags (repeat for several)."),
]
ImportanceOption = Annotated[
    int | None,
    typer.Option("--importance", min=1, max=10, metavar="N", help="The new importance (1-10)."),
]
MemoryIdArgument = Annotated[str, typer.Argument(metavar="ID", help="The memory's id (mem_...).")]
EntryIdArgument = Annotated[int, typer.Argument(metavar="ID", min=1, help="The entry's number.")]
GoalIdArgument = Annotated[str, typer.Argument(metavar="ID", help="The goal's id (see: goals).")]


def _nothing_to_change(command: str) -> CliError:
    return CliError(
        f"Nothing to change: pass --content, --tag or --importance, e.g. "
        f"mindspace {command} --content 'Alice prefers dark ale'."
    )


@as_user_on_assistant
def memory_edit_command(
    target: Target,
    memory_id: MemoryIdArgument,
    content: ContentOption = None,
    tag: TagsOption = None,
    importance: ImportanceOption = None,
    trust: Annotated[
        float | None,
        typer.Option("--trust", min=0.0, max=1.0, metavar="X", help="The new source trust."),
    ] = None,
) -> None:
    """Change a memory's text (embedded again), tags, importance or trust."""
    if content is None and tag is None and importance is None and trust is None:
        raise _nothing_to_change(f"memories edit {memory_id}")
    from mindspace.engine import memory_view

    memory = target.change(
        lambda a: a.edits.update_memory(
            memory_id,
            target.user,
            content=content,
            tags=tag,
            importance=importance,
            source_trust=trust,
        ),
    )
    target.report(memory_view(memory), f"Memory {memory.id} updated: {memory.content}")


@as_user_on_assistant
def memory_delete_command(target: Target, memory_id: MemoryIdArgument) -> None:
    """Delete a memory (links to it go at the next night)."""
    memory = target.change(lambda a: a.edits.delete_memory(memory_id, target.user))
    shown = {"deleted": "memory", "ids": [memory.id]}
    target.report(shown, f"Memory {memory.id} deleted: {memory.content}")


@as_user_on_assistant
def journal_edit_command(
    target: Target,
    entry_id: EntryIdArgument,
    content: ContentOption = None,
    tag: TagsOption = None,
    importance: ImportanceOption = None,
) -> None:
    """Change a journal entry's text, tags or importance."""
    if content is None and tag is None and importance is None:
        raise _nothing_to_change(f"journal edit {entry_id}")
    entry = target.change(
        lambda a: a.edits.update_journal_entry(
            entry_id, target.user, content=content, tags=tag, importance=importance
        ),
    )
    target.report(entry.to_spec(), f"Journal entry {entry.id} updated: {entry.content}")


@as_user_on_assistant
def journal_delete_command(target: Target, entry_id: EntryIdArgument) -> None:
    """Delete a journal entry and its stored vector."""
    entry = target.change(lambda a: a.edits.delete_journal_entry(entry_id, target.user))
    shown = {"deleted": "journal_entry", "ids": [entry.id]}
    target.report(shown, f"Journal entry {entry.id} deleted: {entry.content}")


@as_user_on_assistant
def goal_edit_command(
    target: Target,
    goal_id: GoalIdArgument,
    description: Annotated[
        str | None, typer.Option("--description", metavar="TEXT", help="The new text.")
    ] = None,
    priority: Annotated[
        Literal["high", "medium", "low"] | None,
        typer.Option("--priority", help="The new priority."),
    ] = None,
    status: Annotated[
        Literal["active", "completed", "abandoned"] | None,
        typer.Option("--status", help="The new status."),
    ] = None,
    progress: Annotated[
        float | None,
        typer.Option("--progress", min=0.0, max=100.0, metavar="PCT", help="Progress, 0-100."),
    ] = None,
) -> None:
    """Change a goal's description, priority, status or progress."""
    if description is None and priority is None and status is None and progress is None:
        raise CliError(
            "Nothing to change: pass --description, --priority, --status or --progress, e.g. "
            f"mindspace goals edit {goal_id} --priority high."
        )
    opened = target.open()
    work = opened.edits.update_goal(
        goal_id,
        target.user,
        description=description,
        priority=priority,
        status=status,
        progress=progress,
    )
    goal = run_once(opened, work)
    if target.as_json:
        dump(goal.to_spec())
        return
    say(
        f"Goal {goal.id} updated: {goal.description} "
        f"({goal.status}, {goal.priority}, {goal.progress:g}%)"
    )


@as_user_on_assistant
def goal_delete_command(target: Target, goal_id: GoalIdArgument) -> None:
    """Delete a goal with all its subtasks."""
    goals = target.change(lambda a: a.edits.delete_goal(goal_id, target.user))
    if target.as_json:
        dump({"deleted": "goal", "ids": [g.id for g in goals]})
        return
    say(f"Goal {goals[0].id} deleted: {goals[0].description}")
    if len(goals) > 1:
        say(f"Its subtasks went too: {', '.join(g.id for g in goals[1:])}")


def _assignments(pairs: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"--set takes KEY=VALUE, not {pair!r}; e.g. --set drink='dark ale'.")
        found[name.strip()] = value
    return found


@as_user_on_assistant
def entity_edit_command(
    target: Target,
    name: Annotated[str, typer.Argument(metavar="NAME", help="The entity's id, as stored.")],
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", metavar="KEY=VALUE", help="Set an attribute (repeat for several)."),
    ] = None,
    unset: Annotated[
        list[str] | None,
        typer.Option("--unset", metavar="KEY", help="Remove an attribute (repeat for several)."),
    ] = None,
    remove_observation: Annotated[
        list[int] | None,
        typer.Option(
            "--remove-observation",
            min=0,
            metavar="N",
            help="Remove the observation at N, counting from 0 oldest first as entities show "
            "lists them (repeat for several).",
        ),
    ] = None,
) -> None:
    """Set or remove an entity's attributes and remove observations, in one change."""
    attributes: dict[str, str | None] = dict(_assignments(set_ or []))
    for key in unset or []:
        attributes[key] = None
    if not attributes and not remove_observation:
        raise CliError(
            "Nothing to change: pass --set, --unset or --remove-observation, e.g. "
            f"mindspace entities edit {name} --set drink='dark ale'."
        )
    opened = target.open()
    work = opened.edits.update_entity(
        name, target.user, attributes=attributes, remove_observations=remove_observation or []
    )
    profile = run_once(opened, work)
    if target.as_json:
        dump(profile.model_dump(mode="json"))
        return
    shown = ", ".join(f"{k}={v}" for k, v in sorted(profile.attributes.items())) or "none"
    say(
        f"Entity {profile.entity_id!r} updated: attributes {shown}; "
        f"{len(profile.observations)} observations."
    )


@as_user_on_assistant
def forget_command(
    target: Target,
    name: Annotated[str, typer.Argument(metavar="NAME", help="The entity's id, as stored.")],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Only list what would go; change nothing.")
    ] = False,
) -> None:
    """Forget everything about an entity: profile, conversation, memories and journal
    entries from it, their links and vectors, session facts naming it, in one
    transaction; copies of its words elsewhere (history, events, documents) are blanked.
    """
    opened = target.open()
    report = run_once(opened, opened.edits.forget(name, target.user, dry_run=dry_run))
    shown = report.to_dict()
    if target.as_json:
        dump(shown)
        return
    counts: dict[str, Any] = shown["counts"]
    listed = ", ".join(f"{n} {what.replace('_', ' ')}" for what, n in counts.items() if n)
    verb = "Would forget" if dry_run else "Forgot"
    say(f"{verb} {name!r}: {listed}.")
    if shown["memory_ids"]:
        say(f"Memories: {', '.join(shown['memory_ids'])}")
    if shown["journal_entry_ids"]:
        say(f"Journal entries: {', '.join(map(str, shown['journal_entry_ids']))}")
    if shown["redacted"]:
        places = ", ".join(f"{place} ({n})" for place, n in shown["redacted"].items())
        blanked = "would be blanked" if dry_run else "blanked"
        say(f"Copies of its words {blanked} in: {places}.")
    if dry_run:
        say(f"Nothing was changed. Run without --dry-run to forget {name!r}.")


@on_assistant
def history_command(
    target: Target,
    limit: Annotated[int, typer.Option("--limit", "-n", metavar="N", help="Most shown.")] = 20,
    offset: Annotated[int, typer.Option("--offset", min=0, metavar="N", help="Skip N.")] = 0,
) -> None:
    """Show who edited, deleted or forgot what, newest first."""
    check_limit(limit)
    opened = target.open()
    page = opened.views.history(offset=offset, limit=limit)
    if target.as_json:
        dump(
            {
                "total": page.total,
                "offset": offset,
                "limit": limit,
                "entries": [e.model_dump(mode="json") for e in page.entries],
            }
        )
        return
    if not page.total:
        say(f"Assistant {opened.key!r} has no recorded changes yet.")
        return
    table = Table(
        title=f"History of {opened.key!r}", title_justify="left", box=box.SIMPLE_HEAD, expand=True
    )
    for column in ("When (UTC)", "Who", "Action", "What"):
        table.add_column(column, no_wrap=True)
    table.add_column("Before -> after", overflow="fold")
    for e in page.entries:
        table.add_row(
            e.at.replace("T", " ").removesuffix("Z"),
            f"{e.actor_kind}:{e.actor}",
            e.action,
            f"{e.target_kind} {e.target_key}",
            _change(e.before, e.after),
        )
    console.print(table)
    say(f"{len(page.entries)} of {page.total} shown.")


def _change(before: dict[str, Any] | None, after: dict[str, Any] | None) -> str:
    if before is None or after is None:
        one = before or after or {}
        return str(one.get("content") or one.get("text") or (before or {}).get("counts", ""))
    changed = [k for k in after if before.get(k) != after.get(k) and k != "updated"]
    return "; ".join(f"{k}: {before.get(k)!r} -> {after.get(k)!r}" for k in changed)


def register_edit_commands(
    app: typer.Typer,
    memories: typer.Typer,
    journal: typer.Typer,
    entities: typer.Typer,
    goals: typer.Typer,
) -> None:
    """Add the edit commands to their groups and ``history`` to ``app``."""
    memories.command("edit")(memory_edit_command)
    memories.command("delete")(memory_delete_command)
    journal.command("edit")(journal_edit_command)
    journal.command("delete")(journal_delete_command)
    goals.command("edit")(goal_edit_command)
    goals.command("delete")(goal_delete_command)
    entities.command("edit")(entity_edit_command)
    entities.command("forget")(forget_command)
    app.command("history")(history_command)
