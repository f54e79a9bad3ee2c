"""``mindspace sleep``, ``wake`` and ``mode``; ``memories`` (and ``search QUERY``); ``entities``.

``sleep --run`` runs the night's sleep ticks right away, with a progress bar while journal
entries are consolidated and a table of what each operation did. ``mode``, ``memories``
and ``entities`` only read: nothing is written and no tool call is counted.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import typer
from rich import box
from rich.console import Console, Group, RenderableType
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

from mindspace.clock import parse_time
from mindspace.engine.assistant import Assistant
from mindspace.engine.modes import OperatingMode, SleepSchedule
from mindspace.engine.sleep import SleepTickResult
from mindspace.errors import MindspaceError
from mindspace.hosts.cli.common import (
    AssistantOption,
    CliError,
    DbOption,
    load_settings,
    open_cli_assistant,
)
from mindspace.journal.records import JournalEntry
from mindspace.memory.entities import EntityBook
from mindspace.memory.records import EntityProfile, Memory

__all__ = [
    "entities_app",
    "memories_app",
    "mode_command",
    "register_memory_commands",
    "sleep_command",
    "wake_command",
]

# User data (memories, observations, reasons) is printed as-is: no markup, no emoji codes.
console = Console(markup=False, emoji=False, highlight=False)

memories_app = typer.Typer(
    name="memories",
    help="Show semantic memories (id, time, trust, importance, source, tags, content), "
    "newest first. [bold]memories search QUERY[/] ranks them as recall_memories does.",
    add_completion=False,
    rich_markup_mode="rich",
)
entities_app = typer.Typer(
    name="entities",
    help="Show entity profiles: type, relationship, favorability, interactions and "
    "attributes. [bold]entities show ID[/] shows one profile with its observations.",
    add_completion=False,
    rich_markup_mode="rich",
)

JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]
TagOption = Annotated[
    list[str] | None,
    typer.Option(
        "--tag", "-t", metavar="TAG", help="Only memories with this tag (repeat: all of them)."
    ),
]
MinTrustOption = Annotated[
    float,
    typer.Option(
        "--min-trust", metavar="X", help="Only memories whose source trust is at least X (0-1)."
    ),
]

_STATE_STYLES = {"stranger": "dim", "acquaintance": "", "friend": "green", "ally": "bold green"}
# recall_memories' argument names as the options of `memories search`.
_SEARCH_OPTIONS = {
    "query": "QUERY",
    "limit": "--limit",
    "min_source_trust": "--min-trust",
    "tags": "--tag",
}


def register_memory_commands(app: typer.Typer) -> None:
    """Add ``sleep``, ``wake``, ``mode``, ``memories`` and ``entities`` to ``app``."""
    app.command("sleep")(sleep_command)
    app.command("wake")(wake_command)
    app.command("mode")(mode_command)
    app.add_typer(memories_app, name="memories")
    app.add_typer(entities_app, name="entities")


# -- checks and small helpers --------------------------------------------------------------
def _check_limit(limit: int, option: str = "--limit") -> None:
    if limit < 1:
        raise CliError(f"{option} must be at least 1, not {limit!r}; pass e.g. {option} 20.")


def _check_trust(trust: float) -> None:
    if not 0.0 <= trust <= 1.0:
        raise CliError(
            f"--min-trust must be between 0 and 1, not {trust!r}; pass e.g. --min-trust 0.6 "
            "(0.9 direct, 0.8 observation, 0.6 inference, 0.3 overheard)."
        )


def _check_text(value: str, option: str, example: str) -> str:
    if not value.strip():
        raise CliError(f"{option} {value!r} is blank; pass some text, e.g. {option} {example!r}.")
    return value.strip()


def _when(stamp: str | None) -> str:
    """``2025-12-06T10:00:00Z`` as ``2025-12-06 10:00:00 UTC``."""
    if not stamp:
        return "-"
    return stamp.replace("T", " ").removesuffix("Z") + " UTC"


def _short(stamp: str) -> str:
    return stamp.replace("T", " ").removesuffix("Z")[:16]


def _count(count: int, singular: str, plural: str) -> str:
    return f"{count} {singular if count == 1 else plural}"


def _unconsolidated(assistant: Assistant) -> int:
    return sum(
        1 for e in assistant.read().all(JournalEntry) if not e.consolidated and not e.is_synthesis
    )


def _mode_line(key: str, state: OperatingMode) -> Text:
    if state.mode == "sleep":
        return Text.assemble(
            f"Assistant {key!r} is ",
            ("asleep", "bold blue"),
            f" ({state.sleep_depth} sleep, {state.sleep_phase or 'no'} phase) since "
            f"{_when(state.since)}: {state.reason}",
        )
    return Text.assemble(
        f"Assistant {key!r} is ",
        ("awake", "bold green"),
        f" since {_when(state.since)}: {state.reason}",
    )


def _cooldown(assistant: Assistant, state: OperatingMode) -> str:
    if not state.cooldown_until:
        return "none"
    if assistant.clock.now() < parse_time(state.cooldown_until):
        return (
            f"until {_when(state.cooldown_until)} (its schedule cannot put it to sleep "
            "before then; mindspace sleep still can)"
        )
    return f"ended at {_when(state.cooldown_until)}"


def _say(line: str | Text) -> None:
    """Print a message without wrapping it (commands in it stay copyable)."""
    console.print(line, soft_wrap=True)


def _dump(value: object) -> None:
    typer.echo(json.dumps(value, indent=2, ensure_ascii=False, default=str))


# -- sleep, wake, mode ---------------------------------------------------------------------
def sleep_command(
    deep: Annotated[
        bool,
        typer.Option(
            "--deep",
            help="Sleep deeply: urgent events do not wake it, only its schedule or "
            "[bold]mindspace wake[/] do.",
        ),
    ] = False,
    reason: Annotated[
        str, typer.Option("--reason", metavar="TEXT", help="Why it sleeps (shown by mode).")
    ] = "put to sleep from the command line",
    run: Annotated[
        bool,
        typer.Option(
            "--run",
            help="Run the sleep ticks now, until the night is done (compacting finished "
            "and every memory linked), it wakes, or --ticks ticks have run.",
        ),
    ] = False,
    ticks: Annotated[
        int | None,
        typer.Option(
            "--ticks",
            metavar="N",
            help="Run at most N sleep ticks (implies --run). Default: until the night is done.",
            show_default=False,
        ),
    ] = None,
    db: DbOption = None,
    assistant: AssistantOption = None,
) -> None:
    """Put the assistant to sleep; with [bold]--run[/], run the night now and summarize it.

    Asleep, it first compacts (scores journal entries and consolidates them into semantic
    memory), then dreams (links memories, updates entity attributes, reflects, prunes and
    compacts conversations). Without --run, a host's ticks do that work.
    """
    reason = _check_text(reason, "--reason", "closing time")
    if ticks is not None:
        _check_limit(ticks, "--ticks")
    opened = open_cli_assistant(load_settings(), db, assistant)
    before = opened.mode()
    if before.mode == "sleep":
        _say(_mode_line(opened.key, before).append(" (already asleep)"))
        if deep and before.sleep_depth != "deep":
            _say(
                Text(
                    "--deep is ignored: it already sleeps lightly. Wake it with "
                    "'mindspace wake' first to change the depth.",
                    style="yellow",
                )
            )
    else:
        _say(_mode_line(opened.key, opened.sleep(reason, deep=deep)))
    if not run and ticks is None:
        rate = opened.read().doc(SleepSchedule).tick_rate_sleep
        _say(
            Text(
                f"{_count(_unconsolidated(opened), 'journal entry', 'journal entries')} to "
                f"consolidate. Run the night now with: mindspace sleep --run (a host ticks it "
                f"every {rate:g}s while asleep). Wake it with: mindspace wake",
                style="dim",
            )
        )
        return
    night = _run_night(opened, ticks)
    if night.results:
        console.print(_night_table(night.results))
    _say(Text(night.message))
    if night.error is not None:
        raise CliError(night.error)
    if night.stop == "interrupted":
        raise typer.Exit(130)


StopReason = Literal["done", "woke", "awake", "limit", "interrupted", "failed"]


@dataclass
class _Night:
    """The ticks run by ``sleep --run`` and why they stopped."""

    results: list[SleepTickResult] = field(default_factory=list)
    stop: StopReason = "limit"
    message: str = ""
    error: str | None = None


class _NightProgress:
    """The progress bars: journal entries consolidated, then memories linked."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.tasks: dict[str, TaskID] = {}
        self.done: dict[str, int] = {}

    def advance(self, name: str, label: str, processed: int, remaining: int) -> None:
        done = self.done.get(name, 0) + processed
        self.done[name] = done
        total = done + remaining
        if name not in self.tasks:
            self.tasks[name] = self.progress.add_task(label, total=total)
        self.progress.update(self.tasks[name], completed=done, total=total)


def _run_night(opened: Assistant, limit: int | None) -> _Night:
    night = _Night()
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    try:
        with asyncio.Runner() as runner, Progress(*columns, console=console) as progress:
            _tick_until_stop(opened, runner, _NightProgress(progress), night, limit)
    except KeyboardInterrupt:
        night.stop = "interrupted"
        night.message = (
            f"Interrupted after {_count(len(night.results), 'tick', 'ticks')}: every finished "
            "tick is kept (a tick cut short stores nothing). Continue with: "
            "mindspace sleep --run"
        )
    return night


def _tick_until_stop(
    opened: Assistant,
    runner: asyncio.Runner,
    bars: _NightProgress,
    night: _Night,
    limit: int | None,
) -> None:
    key = opened.key
    deferred_shown = False
    while limit is None or len(night.results) < limit:
        state = opened.mode()
        if state.mode != "sleep":
            # Woken by someone else (another process or a host): never run an awake tick.
            night.stop = "awake"
            night.message = (
                f"{_mode_line(key, state)}. No more sleep ticks run "
                f"({_count(len(night.results), 'tick', 'ticks')} ran here)."
            )
            return
        try:
            tick = runner.run(opened.tick())
        except MindspaceError as exc:
            night.stop = "failed"
            done = _count(len(night.results), "tick", "ticks")
            night.message = f"Sleep tick {len(night.results) + 1} failed after {done}."
            night.error = (
                f"Sleep tick {len(night.results) + 1} failed: {exc}. The {done} before it are "
                "kept; fix the cause and continue with: mindspace sleep --run"
            )
            return
        sleep = tick.sleep
        if sleep is None:  # woken between the check above and the tick
            night.stop = "awake"
            night.message = f"{_mode_line(key, opened.mode())}. No more sleep ticks run."
            return
        night.results.append(sleep)
        ops = sleep.operations
        consolidation = ops.get("run_sleep_consolidation")
        if consolidation is not None:
            bars.advance(
                "compacting",
                "Compacting: journal entries consolidated",
                consolidation["processed"],
                consolidation["remaining"],
            )
        dreaming = ops.get("run_dreaming_tick")
        if dreaming is not None:
            bars.advance(
                "dreaming",
                "Dreaming: memories linked",
                dreaming["processed"],
                dreaming["remaining"],
            )
        if sleep.deferred_wake and not deferred_shown and not sleep.woke:
            deferred_shown = True
            bars.progress.console.print(
                Text(f"Wake deferred: {sleep.deferred_wake}.", style="yellow")
            )
        ticks = _count(len(night.results), "tick", "ticks")
        if sleep.woke:
            night.stop = "woke"
            night.message = (
                f"Assistant {key!r} woke after {ticks}: {sleep.wake_reason}. Everything done "
                f"so far is kept. Cooldown: {_cooldown(opened, opened.mode())}."
            )
            waiting = len(opened.open_events())
            if waiting:
                night.message += (
                    f" {_count(waiting, 'event waits', 'events wait')} for its next awake tick."
                )
            return
        if dreaming is not None and dreaming["remaining"] == 0:
            night.stop = "done"
            night.message = (
                f"The night is done after {ticks}: compacting finished and every memory is "
                f"linked. {key!r} is still asleep (dreaming); wake it with: mindspace wake"
            )
            return
    state = opened.mode()
    left = (
        f"{_count(_unconsolidated(opened), 'journal entry', 'journal entries')} still to "
        "consolidate"
        if state.sleep_phase == "compacting"
        else "compacting finished, memories still to link"
    )
    night.stop = "limit"
    night.message = (
        f"Stopped after {_count(len(night.results), 'tick', 'ticks')} (--ticks {limit}) in the "
        f"{state.sleep_phase} phase, {left}. Continue with: mindspace sleep --run"
    )


def _night_table(results: Sequence[SleepTickResult]) -> Table:
    """What each operation did over the ticks, in the order the sleep tick runs them."""
    ops: dict[str, list[Mapping[str, Any]]] = {}
    for result in results:
        for name, op in result.operations.items():
            ops.setdefault(name, []).append(op)
    dreamt = "run_dreaming_tick" in ops
    table = Table(
        title=f"The night: {_count(len(results), 'sleep tick', 'sleep ticks')}",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
    )
    table.add_column("Operation", no_wrap=True)
    table.add_column("Ticks", justify="right", no_wrap=True)
    table.add_column("What it did", overflow="fold")
    for name, label, describe in _OPERATIONS:
        runs = ops.get(name, [])
        if runs:
            what = describe(runs)
        elif name in _COMPACTING_OPS or dreamt:
            what = Text("did not run", style="dim")
        else:
            what = Text("not reached (dreaming comes after compacting)", style="dim")
        cell = Text(label)
        cell.append(f"\n{name}", style="dim")
        table.add_row(cell, str(len(runs)), what)
    return table


def _sum(runs: Sequence[Mapping[str, Any]], key: str) -> int:
    return sum(int(op.get(key) or 0) for op in runs)


def _lengths(runs: Sequence[Mapping[str, Any]], key: str) -> int:
    return sum(len(op.get(key) or ()) for op in runs)


def _errors(runs: Sequence[Mapping[str, Any]], key: str = "error") -> list[str]:
    found: list[str] = []
    for op in runs:
        value = op.get(key)
        if isinstance(value, str) and value:
            found.append(value)
        elif isinstance(value, list):
            found.extend(str(v) for v in value)
        elif isinstance(value, dict):
            found.extend(f"{k}: {v}" for k, v in value.items())
    return found


def _with_errors(text: str, errors: Sequence[str]) -> Text:
    out = Text(text)
    if errors:
        out.append(f"\n{_count(len(errors), 'error', 'errors')}, last: {errors[-1]}", style="red")
    return out


def _describe_scoring(runs: Sequence[Mapping[str, Any]]) -> Text:
    return _with_errors(
        f"{_count(_lengths(runs, 'scored'), 'entry', 'entries')} scored by the LLM, "
        f"{runs[-1].get('remaining', 0)} left unscored",
        _errors(runs),
    )


def _describe_consolidation(runs: Sequence[Mapping[str, Any]]) -> Text:
    return Text(
        f"{_count(_sum(runs, 'processed'), 'entry', 'entries')} consolidated into "
        f"{_count(_lengths(runs, 'memory_ids'), 'memory', 'memories')}, "
        f"{runs[-1].get('remaining', 0)} left"
        + (" (phase complete)" if runs[-1].get("completed") else "")
    )


def _describe_links(runs: Sequence[Mapping[str, Any]]) -> Text:
    return Text(
        f"{_count(_sum(runs, 'processed'), 'memory', 'memories')} linked, "
        f"{_count(_sum(runs, 'links_created'), 'link', 'links')} created, "
        f"{runs[-1].get('remaining', 0)} left"
    )


def _describe_orphans(runs: Sequence[Mapping[str, Any]]) -> Text:
    return Text(
        f"{_count(_sum(runs, 'removed_links'), 'orphaned link', 'orphaned links')} removed "
        f"({_count(_sum(runs, 'removed_records'), 'record', 'records')} of deleted memories)"
    )


def _describe_entities(runs: Sequence[Mapping[str, Any]]) -> Text:
    updated: dict[str, set[str]] = {}
    for op in runs:
        for entity, attributes in (op.get("entities") or {}).items():
            updated.setdefault(str(entity), set()).update(attributes)
    count = sum(len(keys) for keys in updated.values())
    text = f"{_count(count, 'attribute', 'attributes')} updated on "
    text += f"{_count(len(updated), 'entity', 'entities')}"
    if updated:
        text += ": " + ", ".join(sorted(updated))
    rejected = _lengths(runs, "rejected_attributes")
    if rejected:
        text += f"; {rejected} rejected by the persona guard"
    return _with_errors(text, _errors(runs, "errors"))


def _describe_reflection(runs: Sequence[Mapping[str, Any]]) -> Text:
    done = [op for op in runs if op.get("success")]
    if not done and not any(op.get("triggered", True) for op in runs):
        return Text("not due (importance below the threshold)")
    insights = _lengths(done, "insights")
    return _with_errors(
        f"{_count(len(done), 'reflection', 'reflections')}, "
        f"{_count(insights, 'insight', 'insights')} stored",
        _errors(runs),
    )


def _describe_pruning(runs: Sequence[Mapping[str, Any]]) -> Text:
    return Text(f"{_count(_lengths(runs, 'pruned'), 'entry', 'entries')} pruned")


def _describe_conversations(runs: Sequence[Mapping[str, Any]]) -> Text:
    cleared = sorted({str(e) for op in runs for e in op.get("cleared") or ()})
    text = f"{_count(len(cleared), 'stale conversation', 'stale conversations')} cleared"
    return Text(text + (": " + ", ".join(cleared) if cleared else ""))


def _describe_extraction(runs: Sequence[Mapping[str, Any]]) -> Text:
    ran = [op for op in runs if op.get("ran")]
    if not ran:
        return Text(f"not needed ({runs[-1].get('reason', 'below threshold')})")
    threads = {str(t) for op in ran for t in op.get("threads") or {}}
    errors = [
        f"{t}: {v['error']}"
        for op in ran
        for t, v in (op.get("threads") or {}).items()
        if isinstance(v, dict) and v.get("error")
    ]
    return _with_errors(
        f"ran {_count(len(ran), 'time', 'times')} over "
        f"{_count(len(threads), 'conversation', 'conversations')}",
        errors,
    )


def _describe_compaction(runs: Sequence[Mapping[str, Any]]) -> Text:
    done = [op for op in runs if op.get("compacted")]
    if not done:
        last = runs[-1]
        return _with_errors(
            f"not needed (context at {last.get('usage_percentage', 0)}%, threshold "
            f"{last.get('threshold', '?')}%)",
            _errors(runs, "errors"),
        )
    removed = sum(
        int(thread.get("removed", 0))
        for op in done
        for thread in (op.get("threads") or {}).values()
    )
    return _with_errors(
        f"compacted {_count(len(done), 'time', 'times')}: "
        f"{_count(removed, 'message', 'messages')} summarized behind the marker",
        _errors(runs, "errors"),
    )


_Describe = Callable[[Sequence[Mapping[str, Any]]], Text]
_OPERATIONS: tuple[tuple[str, str, _Describe], ...] = (
    ("score_pending_entries", "Entries scored", _describe_scoring),
    ("run_sleep_consolidation", "Entries consolidated", _describe_consolidation),
    ("run_dreaming_tick", "Memory links", _describe_links),
    ("prune_orphaned_memory_links", "Orphaned links", _describe_orphans),
    ("run_entity_consolidation_batch", "Entity attributes", _describe_entities),
    ("run_reflection", "Reflections", _describe_reflection),
    ("prune_low_importance_entries", "Entries pruned", _describe_pruning),
    ("clear_stale_conversations", "Conversations cleared", _describe_conversations),
    ("run_pre_compaction_extraction", "Pre-compaction extraction", _describe_extraction),
    ("compact_conversation_history", "Compaction", _describe_compaction),
)
_COMPACTING_OPS = frozenset({"score_pending_entries", "run_sleep_consolidation"})


def wake_command(
    reason: Annotated[
        str, typer.Option("--reason", metavar="TEXT", help="Why it wakes (shown by mode).")
    ] = "woken from the command line",
    db: DbOption = None,
    assistant: AssistantOption = None,
) -> None:
    """Wake the assistant now, even mid-phase; print its mode and the cooldown's end.

    What the night did so far is kept; the next sleep goes on from there.
    """
    reason = _check_text(reason, "--reason", "the tavern opens")
    opened = open_cli_assistant(load_settings(), db, assistant)
    before = opened.mode()
    if before.mode == "awake":
        _say(_mode_line(opened.key, before).append(" (already awake)"))
        _say(f"Cooldown: {_cooldown(opened, before)}.")
        return
    state = opened.wake(reason)
    _say(_mode_line(opened.key, state))
    _say(f"Cooldown: {_cooldown(opened, state)}.")
    if before.sleep_phase == "compacting":
        pending = _unconsolidated(opened)
        if pending:
            _say(
                Text(
                    f"Woken while compacting: {_count(pending, 'journal entry', 'journal entries')}"
                    " not consolidated yet; the next sleep goes on with them.",
                    style="dim",
                )
            )


def mode_command(
    as_json: JsonOption = False, db: DbOption = None, assistant: AssistantOption = None
) -> None:
    """Show the operating mode: awake or asleep, sleep phase, since, reason and cooldown."""
    opened = open_cli_assistant(load_settings(), db, assistant)
    unit = opened.read()
    state = unit.doc(OperatingMode)
    schedule = unit.doc(SleepSchedule)
    pending = _unconsolidated(opened)
    if as_json:
        _dump(
            {
                **state.model_dump(mode="json"),
                "sleep_schedule": schedule.model_dump(mode="json"),
                "unconsolidated_entries": pending,
            }
        )
        return
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    asleep = state.mode == "sleep"
    grid.add_row(
        "Mode",
        Text("asleep", "bold blue") if asleep else Text("awake", "bold green"),
    )
    if asleep:
        grid.add_row("Sleep phase", f"{state.sleep_phase or '-'} ({state.sleep_depth} sleep)")
        grid.add_row("Sleep ticks", str(state.sleep_ticks))
    grid.add_row("Since", _when(state.since))
    grid.add_row("Reason", state.reason)
    grid.add_row("Cooldown", _cooldown(opened, state))
    if state.wake_deferred:
        grid.add_row("Wake deferred", state.wake_deferred)
    grid.add_row("Schedule", _schedule_text(schedule, state))
    grid.add_row(
        "Journal",
        f"{_count(pending, 'entry', 'entries')} waiting to be consolidated into memory",
    )
    heading = Text.assemble(("Mode of assistant ", "bold"), (repr(opened.key), "bold cyan"))
    console.print(Group(heading, grid))


def _schedule_text(schedule: SleepSchedule, state: OperatingMode) -> str:
    if not schedule.enabled:
        return "off (it sleeps only when put to sleep)"
    start = round(schedule.sleep_start_hour * 60)
    return (
        f"daily from {start // 60:02d}:{start % 60:02d} for {schedule.sleep_duration_hours:g} h, "
        f"after at least {schedule.min_awake_ticks} awake ticks ({state.awake_ticks} so far); "
        f"a tick every {schedule.tick_rate_sleep:g}s asleep"
    )


# -- memories ------------------------------------------------------------------------------
@memories_app.callback(invoke_without_command=True)
def memories_command(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option("--limit", "-n", metavar="N", help="Most shown.")] = 20,
    tag: TagOption = None,
    min_trust: MinTrustOption = 0.0,
    as_json: JsonOption = False,
    db: DbOption = None,
    assistant: AssistantOption = None,
) -> None:
    """List semantic memories, newest first, optionally filtered by tag and source trust."""
    if ctx.invoked_subcommand is not None:
        return
    _check_limit(limit)
    _check_trust(min_trust)
    opened = open_cli_assistant(load_settings(), db, assistant)
    every = opened.read().all(Memory)
    wanted = {t.casefold() for t in tag or ()}
    found = [
        m for m in every if m.source_trust >= min_trust and wanted <= {t.casefold() for t in m.tags}
    ]
    found.sort(key=lambda m: (m.occurred_at, _memory_number(m.id)), reverse=True)
    if as_json:
        _dump([{"id": m.id, "content": m.content, **m.metadata()} for m in found[:limit]])
        return
    if not every:
        console.print(
            f"Assistant {opened.key!r} has no memories yet. Store one with: mindspace tool "
            'store_memory --args \'{"content": "Alice prefers dark ale"}\', or consolidate '
            "the journal with: mindspace sleep --run",
            soft_wrap=True,
        )
        return
    if not found:
        console.print("No memories match.")
        return
    console.print(_memories_table(found[:limit], f"Memories of {opened.key!r}"))
    total = len(found)
    noun = "memory" if total == 1 else "memories"
    shown = f"{limit} of {total} {noun}" if total > limit else f"{total} {noun}"
    _say(Text(f"{shown} shown. {_embedder_note(opened, every)}", style="dim"))


def _memory_number(memory_id: str) -> int:
    digits = memory_id.rpartition("_")[2]
    return int(digits) if digits.isdigit() else 0


def _embedder_note(opened: Assistant, memories: Sequence[Memory]) -> str:
    embedder = opened.embedder
    if embedder is None:
        return "No embedder is configured (MINDSPACE_EMBEDDER=none): search is lexical (BM25) only."
    without = sum(1 for m in memories if m.embedding is None or m.embedder != embedder.name)
    note = f"Embedder: {embedder.name}."
    if without:
        note += (
            f" {_count(without, 'memory has', 'memories have')} no {embedder.name} vector "
            "(stored without an embedder or by another one); search finds those by words only."
        )
    return note


def _source(memory: Memory) -> Text:
    text = Text(memory.source_entity or "-")
    origin = f"{memory.source_type}"
    if memory.entry_id is not None:
        origin += f", entry {memory.entry_id}"
    elif memory.source != "tool":
        origin += f", {memory.source}"
    text.append(f"\n{origin}", style="dim")
    return text


def _memories_table(memories: Sequence[Memory], title: str) -> Table:
    table = Table(
        title=title, title_justify="left", expand=True, box=box.SIMPLE_HEAD, show_edge=False
    )
    table.add_column("Id", style="dim", no_wrap=True)
    table.add_column("Occurred (UTC)", no_wrap=True)
    table.add_column("Trust", justify="right", no_wrap=True)
    table.add_column("Imp.", justify="right", no_wrap=True)
    table.add_column("Method", no_wrap=True)
    table.add_column("Source", no_wrap=True)
    table.add_column("Tags", style="magenta", max_width=24, overflow="fold")
    table.add_column("Content", min_width=20, overflow="fold")
    for m in memories:
        style = "bold" if m.importance >= 8 else ("dim" if m.importance <= 3 else "")
        table.add_row(
            m.id,
            _short(m.occurred_at),
            f"{m.source_trust:.2g}",
            Text(str(m.importance), style=style),
            m.importance_method,
            _source(m),
            " ".join(f"#{t}" for t in m.tags),
            m.content,
        )
    return table


@memories_app.command("search")
def search_command(
    query: Annotated[str, typer.Argument(help="What to remember, e.g. 'what Alice drinks'.")],
    limit: Annotated[int, typer.Option("--limit", "-n", metavar="N", help="Most shown.")] = 10,
    tag: TagOption = None,
    min_trust: MinTrustOption = 0.0,
    as_json: JsonOption = False,
    db: DbOption = None,
    assistant: AssistantOption = None,
) -> None:
    """Rank memories for QUERY exactly as the recall_memories tool does (dense + BM25)."""
    _check_limit(limit)
    _check_trust(min_trust)
    if not query.strip():
        raise CliError(f"QUERY {query!r} is blank; say what to remember, e.g. 'what Alice drinks'.")
    opened = open_cli_assistant(load_settings(), db, assistant)
    args = {"query": query, "limit": limit, "min_source_trust": min_trust, "tags": tag or []}
    # The tool runs in a read unit that is never committed: nothing is written, not even
    # the call count, yet the ranking is the product's own.
    outcome = asyncio.run(opened.run_tool("recall_memories", args, unit=opened.read()))
    result = outcome.result
    if result.get("success") is not True:
        raise CliError(_tool_error(result))
    found: list[dict[str, Any]] = list(result.get("memories", []))
    if as_json:
        _dump({"query": query, "memories": found})
        return
    if not found:
        console.print(f"No memories match {query!r}.")
    else:
        console.print(_ranking_table(found, f"Memories recalled for {query!r}"))
    _say(Text(_embedder_note(opened, opened.read().all(Memory)), style="dim"))


def _tool_error(result: Mapping[str, Any]) -> str:
    fields = result.get("invalid_fields") or []
    if fields:
        problems = "; ".join(
            f"{_SEARCH_OPTIONS.get(str(f.get('field')), str(f.get('field')))} "
            f"{f.get('got')!r} ({f.get('problem')})"
            for f in fields
        )
        return f"recall_memories rejected {problems}. Fix that option and run the search again."
    message = str(result.get("error", "recall_memories failed"))
    if result.get("suggestion"):
        message += f" - {result['suggestion']}"
    return message


def _ranking_table(found: Sequence[Mapping[str, Any]], title: str) -> Table:
    table = Table(
        title=title, title_justify="left", expand=True, box=box.SIMPLE_HEAD, show_edge=False
    )
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("Score", justify="right", no_wrap=True)
    table.add_column("Relevance", justify="right", no_wrap=True)
    table.add_column("Content", min_width=20, overflow="fold")
    table.add_column("Source", no_wrap=True)
    table.add_column("Id", style="dim", no_wrap=True)
    for rank, item in enumerate(found, 1):
        meta: Mapping[str, Any] = item.get("metadata") or {}
        relevance = item.get("relevance")
        source = Text(str(meta.get("source_entity") or "-"))
        source.append(
            f"\n{meta.get('source_type', '?')}, trust {float(meta.get('source_trust', 0)):.2g}",
            style="dim",
        )
        content = Text(str(item.get("content", "")))
        if meta.get("tags"):
            content.append("\n" + " ".join(f"#{t}" for t in meta["tags"]), style="magenta")
        table.add_row(
            str(rank),
            f"{float(item.get('score', 0)):.3f}",
            "-" if relevance is None else f"{float(relevance):.3f}",
            content,
            source,
            str(item.get("id", "")),
        )
    return table


# -- entities ------------------------------------------------------------------------------
@entities_app.callback(invoke_without_command=True)
def entities_command(
    ctx: typer.Context,
    as_json: JsonOption = False,
    db: DbOption = None,
    assistant: AssistantOption = None,
) -> None:
    """List entity profiles by first contact: relationship, attributes, pending observations."""
    if ctx.invoked_subcommand is not None:
        return
    opened = open_cli_assistant(load_settings(), db, assistant)
    profiles = _book(opened).all()
    if as_json:
        _dump([p.model_dump(mode="json") for p in profiles])
        return
    if not profiles:
        console.print(
            f"Assistant {opened.key!r} has met no one yet. Record an observation with: "
            'mindspace tool update_entity_observation --args \'{"entity_id": "Alice", '
            '"observation": "Alice prefers dark ale"}\'',
            soft_wrap=True,
        )
        return
    console.print(_entities_table(profiles, f"Entities known to {opened.key!r}"))
    _say(
        Text(
            f"{_count(len(profiles), 'entity', 'entities')}. Details of one: mindspace entities "
            "show ID",
            style="dim",
        )
    )


def _book(opened: Assistant) -> EntityBook:
    return EntityBook(opened.read(), opened.clock, opened.settings, opened.guard)


def _state(profile: EntityProfile) -> Text:
    state = profile.relationship.state
    return Text(state, style=_STATE_STYLES.get(state, ""))


def _attributes(attributes: Mapping[str, str]) -> str:
    return "\n".join(f"{k}: {v}" for k, v in sorted(attributes.items())) or "-"


def _entities_table(profiles: Sequence[EntityProfile], title: str) -> Table:
    table = Table(
        title=title, title_justify="left", expand=True, box=box.SIMPLE_HEAD, show_edge=False
    )
    table.add_column("Id", style="bold", no_wrap=True)
    table.add_column("Type", no_wrap=True)
    table.add_column("Relationship", no_wrap=True)
    table.add_column("Favor.", justify="right", no_wrap=True)
    table.add_column("Interact.", justify="right", no_wrap=True)
    table.add_column("Attributes", min_width=20, overflow="fold")
    table.add_column("Unconsol. obs.", justify="right", no_wrap=True)
    table.add_column("Last seen (UTC)", style="dim", no_wrap=True)
    for p in profiles:
        r = p.relationship
        pending = sum(1 for o in p.observations if not o.consolidated)
        table.add_row(
            p.entity_id,
            p.entity_type,
            _state(p),
            f"{r.favorability:.2f}",
            str(r.interaction_count),
            _attributes(p.attributes),
            Text(str(pending), style="yellow" if pending else "dim"),
            _short(p.last_seen),
        )
    return table


@entities_app.command("show")
def show_command(
    entity_id: Annotated[str, typer.Argument(metavar="ID", help="The entity, e.g. Alice.")],
    as_json: JsonOption = False,
    db: DbOption = None,
    assistant: AssistantOption = None,
) -> None:
    """Show one entity profile: relationship, attributes and every observation."""
    opened = open_cli_assistant(load_settings(), db, assistant)
    book = _book(opened)
    profile = book.get(entity_id) or book.get(entity_id.strip())
    if profile is None:
        known = [p.entity_id for p in book.all()]
        hint = (
            f"Known entities: {', '.join(repr(k) for k in known[:10])}"
            + (f" and {len(known) - 10} more" if len(known) > 10 else "")
            + "."
            if known
            else "It has met no one yet."
        )
        raise CliError(
            f"Assistant {opened.key!r} knows no entity {entity_id!r}. {hint} "
            "List them with: mindspace entities"
        )
    if as_json:
        _dump(profile.model_dump(mode="json"))
        return
    console.print(_profile_view(profile))


def _profile_view(profile: EntityProfile) -> RenderableType:
    r = profile.relationship
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    grid.add_row("Type", profile.entity_type)
    grid.add_row(
        "Relationship",
        Text.assemble(
            _state(profile),
            f", favorability {r.favorability:.2f}, "
            f"{_count(r.interaction_count, 'interaction', 'interactions')}",
        ),
    )
    grid.add_row("First seen", _when(profile.first_seen))
    grid.add_row("Last seen", _when(profile.last_seen))
    parts: list[RenderableType] = [
        Text.assemble(("Entity ", "bold"), (repr(profile.entity_id), "bold cyan")),
        grid,
    ]
    attributes = Table(
        title="Attributes (Pa)", title_justify="left", box=box.SIMPLE_HEAD, show_edge=False
    )
    attributes.add_column("Key", style="bold", no_wrap=True)
    attributes.add_column("Value", overflow="fold")
    for key, value in sorted(profile.attributes.items()):
        attributes.add_row(key, value)
    parts.append(attributes if profile.attributes else Text("No attributes yet.", style="dim"))
    observations = Table(
        title="Observations (Pf), oldest first",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
    )
    observations.add_column("Time (UTC)", no_wrap=True)
    observations.add_column("Source", no_wrap=True)
    observations.add_column("Consolidated", no_wrap=True)
    observations.add_column("Observation", overflow="fold")
    for o in profile.observations:
        observations.add_row(
            _short(o.at),
            o.source_type,
            Text("yes", style="green") if o.consolidated else Text("no", style="yellow"),
            o.text,
        )
    parts.append(
        observations if profile.observations else Text("No observations yet.", style="dim")
    )
    return Group(*parts)
