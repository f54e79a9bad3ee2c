"""``mindspace sleep``, ``wake`` and ``mode``: put the assistant to sleep, wake it, show its mode.

``sleep --run`` runs the night's sleep ticks right away, with a progress bar while journal
entries are consolidated and a table of what each operation did. ``mode`` only reads:
nothing is written and no tool call is counted.
"""

from __future__ import annotations

from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich.console import Group
from rich.table import Table
from rich.text import Text

from mindspace.errors import MindspaceError
from mindspace.hosts.cli.common import (
    AssistantOption,
    CliError,
    DbOption,
    UsageError,
    check_limit,
    console,
    counted,
    dump,
    load_settings,
    notes_on_stderr,
    open_cli_assistant,
    run_once,
    say,
    when,
)
from mindspace.hosts.cli.target import Target, on_assistant

if TYPE_CHECKING:  # the engine is imported in the commands' bodies (start-up time)
    from rich.progress import Progress, TaskID

    from mindspace.engine import Assistant, OperatingMode, SleepSchedule, SleepTickResult

__all__ = ["mode_command", "sleep_command", "wake_command"]


def _check_text(value: str, option: str, example: str) -> str:
    if not value.strip():
        raise UsageError(f"{option} {value!r} is blank; pass some text, e.g. {option} {example!r}.")
    return value.strip()


def _unconsolidated(assistant: Assistant) -> int:
    entries = assistant.views.journal_entries()
    return sum(1 for e in entries if not e.consolidated and not e.is_synthesis)


def _mode_line(key: str, state: OperatingMode) -> Text:
    if state.mode == "sleep":
        return Text.assemble(
            f"Assistant {key!r} is ",
            ("asleep", "bold blue"),
            f" ({state.sleep_depth} sleep, {state.sleep_phase or 'no'} phase) since "
            f"{when(state.since)}: {state.reason}",
            f"; wakes at {when(state.wake_at)}" if state.wake_at else "",
        )
    return Text.assemble(
        f"Assistant {key!r} is ",
        ("awake", "bold green"),
        f" since {when(state.since)}: {state.reason}",
    )


def _cooldown(assistant: Assistant, state: OperatingMode) -> str:
    from mindspace.clock import parse_time

    if not state.cooldown_until:
        return "none"
    if assistant.clock.now() < parse_time(state.cooldown_until):
        return (
            f"until {when(state.cooldown_until)} (its schedule cannot put it to sleep "
            "before then; mindspace sleep still can)"
        )
    return f"ended at {when(state.cooldown_until)}"


def _reason_option(does: str) -> Any:
    # ``--reason`` of sleep and wake: the same option; only what the assistant does differs.
    return typer.Option("--reason", metavar="TEXT", help=f"Why it {does} (shown by mode).")


def _mode_json_option(also: str = "") -> Any:
    # ``--json`` of sleep and wake: the mode afterwards, ``also`` what sleep adds to it.
    return typer.Option(
        "--json",
        help=f"Print the mode afterwards (as mode --json does{also}) as JSON on stdout; the "
        "narration goes to stderr.",
    )


def sleep_command(
    deep: Annotated[
        bool,
        typer.Option(
            "--deep",
            help="Sleep deeply: urgent events do not wake it, only its wake time or "
            "[bold]mindspace wake[/] do.",
        ),
    ] = False,
    hours: Annotated[
        float | None,
        typer.Option(
            "--hours",
            metavar="H",
            min=0.01,
            max=168,
            help="Wake after H hours. Default: the sleep schedule's wake hour, else "
            "MINDSPACE_SLEEP_DEFAULT_HOURS (4).",
            show_default=False,
        ),
    ] = None,
    reason: Annotated[str, _reason_option("sleeps")] = "put to sleep from the command line",
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
    as_json: Annotated[bool, _mode_json_option(", with the ticks run")] = False,
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
        check_limit(ticks, "--ticks")
    opened = open_cli_assistant(load_settings(), db, assistant)
    with notes_on_stderr(as_json):
        night = _sleep(opened, reason, deep=deep, hours=hours, run=run, ticks=ticks)
    if as_json:
        extra = {} if night is None else {"ticks_run": len(night.results), "stop": night.stop}
        dump({**_mode_json(opened), **extra})
    if night is not None and night.error is not None:
        raise CliError(night.error)
    if night is not None and night.stop == "interrupted":
        raise typer.Exit(130)


def _sleep(
    opened: Assistant, reason: str, *, deep: bool, hours: float | None, run: bool, ticks: int | None
) -> _Night | None:
    """Fall asleep, and with ``run`` or ``ticks`` run the night; the night run, if any."""
    if not run and ticks is None:
        run_once(opened, _fall_asleep(opened, reason, deep=deep, hours=hours))
        rate = opened.views.tick_rate()  # asleep now, so this is the sleep rate
        say(
            Text(
                f"{counted(_unconsolidated(opened), 'journal entry', 'journal entries')} to "
                f"consolidate. Run the night now with: mindspace sleep --run (a host ticks it "
                f"every {rate:g}s while asleep). Wake it with: mindspace wake",
                style="dim",
            )
        )
        return None
    night = _run_night(opened, ticks, _fall_asleep(opened, reason, deep=deep, hours=hours))
    if night.results:
        from mindspace.hosts.cli.night_report import night_table

        console.print(night_table(night.results))
    say(Text(night.message))
    return night


async def _fall_asleep(
    opened: Assistant, reason: str, *, deep: bool, hours: float | None = None
) -> None:
    before = opened.views.mode()
    if before.mode != "sleep":
        say(_mode_line(opened.key, await opened.sleep(reason, deep=deep, hours=hours)))
        return
    say(_mode_line(opened.key, before).append(" (already asleep)"))
    if deep and before.sleep_depth != "deep":
        say(
            Text(
                "--deep is ignored: it already sleeps lightly. Wake it with "
                "'mindspace wake' first to change the depth.",
                style="yellow",
            )
        )


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


def _run_night(
    opened: Assistant, limit: int | None, fall_asleep: Coroutine[Any, Any, None]
) -> _Night:
    import asyncio

    night = _Night()
    try:
        asyncio.run(_night_on_one_loop(opened, fall_asleep, night, limit))
    except KeyboardInterrupt:
        night.stop = "interrupted"
        night.message = (
            f"Interrupted after {counted(len(night.results), 'tick', 'ticks')}: every finished "
            "tick is kept (a tick cut short stores nothing). Continue with: "
            "mindspace sleep --run"
        )
    return night


async def _night_on_one_loop(
    opened: Assistant, fall_asleep: Coroutine[Any, Any, None], night: _Night, limit: int | None
) -> None:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from mindspace.llm.port import close_llm

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    # Falling asleep and every tick of the night share this loop: the model's client keeps
    # its connections between ticks, so it is closed here, before the loop ends (even on
    # Ctrl+C).
    try:
        await fall_asleep
        with Progress(*columns, console=console) as progress:
            await _tick_until_stop(opened, _NightProgress(progress), night, limit)
    finally:
        await close_llm(opened.llm)


async def _tick_until_stop(
    opened: Assistant,
    bars: _NightProgress,
    night: _Night,
    limit: int | None,
) -> None:
    key = opened.key
    deferred_shown = False
    while limit is None or len(night.results) < limit:
        state = opened.views.mode()
        if state.mode != "sleep":
            # Woken by someone else (another process or a host): never run an awake tick.
            night.stop = "awake"
            night.message = (
                f"{_mode_line(key, state)}. No more sleep ticks run "
                f"({counted(len(night.results), 'tick', 'ticks')} ran here)."
            )
            return
        try:
            tick = await opened.tick()
        except MindspaceError as exc:
            night.stop = "failed"
            done = counted(len(night.results), "tick", "ticks")
            night.message = f"Sleep tick {len(night.results) + 1} failed after {done}."
            night.error = (
                f"Sleep tick {len(night.results) + 1} failed: {exc}. The {done} before it are "
                "kept; fix the cause and continue with: mindspace sleep --run"
            )
            return
        sleep = tick.sleep
        if sleep is None:  # woken between the check above and the tick
            night.stop = "awake"
            night.message = f"{_mode_line(key, opened.views.mode())}. No more sleep ticks run."
            return
        night.results.append(sleep)
        counts = sleep.progress
        if sleep.phase == "compacting":
            bars.advance(
                "compacting",
                "Compacting: journal entries consolidated",
                counts.consolidated,
                counts.consolidation_remaining,
            )
        elif sleep.phase == "dreaming":
            bars.advance(
                "dreaming", "Dreaming: memories linked", counts.linked, counts.links_remaining
            )
        if sleep.deferred_wake and not deferred_shown and not sleep.woke:
            deferred_shown = True
            bars.progress.console.print(
                Text(
                    f"Wake deferred until compacting completes: {sleep.deferred_wake}.",
                    style="yellow",
                )
            )
        ticks = counted(len(night.results), "tick", "ticks")
        if sleep.woke:
            night.stop = "woke"
            night.message = (
                f"Assistant {key!r} woke after {ticks}: {sleep.wake_reason}. Everything done "
                f"so far is kept. Cooldown: {_cooldown(opened, opened.views.mode())}."
            )
            waiting = len(opened.views.open_events())
            if waiting:
                night.message += (
                    f" {counted(waiting, 'event waits', 'events wait')} for its next awake tick."
                )
            return
        if sleep.finished:
            night.stop = "done"
            wake_at = opened.views.mode().wake_at
            night.message = (
                f"The night is done after {ticks}: compacting finished and every memory is "
                f"linked. {key!r} is still asleep (dreaming)"
                + (f" until {when(wake_at)}" if wake_at else "")
                + "; wake it sooner with: mindspace wake"
            )
            return
    state = opened.views.mode()
    left = (
        f"{counted(_unconsolidated(opened), 'journal entry', 'journal entries')} still to "
        "consolidate"
        if state.sleep_phase == "compacting"
        else "compacting finished, memories still to link"
    )
    night.stop = "limit"
    night.message = (
        f"Stopped after {counted(len(night.results), 'tick', 'ticks')} (--ticks {limit}) in the "
        f"{state.sleep_phase} phase, {left}. Continue with: mindspace sleep --run"
    )


def wake_command(
    reason: Annotated[str, _reason_option("wakes")] = "woken from the command line",
    as_json: Annotated[bool, _mode_json_option()] = False,
    db: DbOption = None,
    assistant: AssistantOption = None,
) -> None:
    """Wake the assistant now, even mid-phase; print its mode and the cooldown's end.

    What the night did so far is kept; the next sleep goes on from there.
    """
    reason = _check_text(reason, "--reason", "the tavern opens")
    opened = open_cli_assistant(load_settings(), db, assistant)
    with notes_on_stderr(as_json):
        _wake(opened, reason)
    if as_json:
        dump(_mode_json(opened))


def _wake(opened: Assistant, reason: str) -> None:
    before = opened.views.mode()
    if before.mode == "awake":
        say(_mode_line(opened.key, before).append(" (already awake)"))
        say(f"Cooldown: {_cooldown(opened, before)}.")
        return
    state = run_once(opened, opened.wake(reason))
    say(_mode_line(opened.key, state))
    say(f"Cooldown: {_cooldown(opened, state)}.")
    if before.sleep_phase == "compacting":
        pending = _unconsolidated(opened)
        if pending:
            say(
                Text(
                    "Woken while compacting: "
                    f"{counted(pending, 'journal entry', 'journal entries')}"
                    " not consolidated yet; the next sleep goes on with them.",
                    style="dim",
                )
            )


@on_assistant
def mode_command(target: Target) -> None:
    """Show the operating mode: awake or asleep, sleep phase, since, reason and cooldown."""
    opened = target.open()
    if target.as_json:
        dump(_mode_json(opened))
        return
    state = opened.views.mode()
    schedule = opened.views.schedule()
    pending = _unconsolidated(opened)
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
    grid.add_row("Since", when(state.since))
    grid.add_row("Reason", state.reason)
    grid.add_row("Cooldown", _cooldown(opened, state))
    if asleep and state.wake_at:
        grid.add_row("Wakes at", when(state.wake_at))
    if state.wake_deferred:
        grid.add_row("Wake deferred", f"until compacting completes: {state.wake_deferred}")
    sleep_rate = schedule.tick_rate_sleep or opened.settings.tick_rate_sleep
    grid.add_row("Schedule", _schedule_text(schedule, state, sleep_rate))
    grid.add_row(
        "Journal",
        f"{counted(pending, 'entry', 'entries')} waiting to be consolidated into memory",
    )
    heading = Text.assemble(("Mode of assistant ", "bold"), (repr(opened.key), "bold cyan"))
    console.print(Group(heading, grid))


def _schedule_text(schedule: SleepSchedule, state: OperatingMode, sleep_rate: float) -> str:
    if state.schedule_suspended:
        return "paused while it sleeps by its own choice (go_to_sleep); on again when it wakes"
    if not schedule.enabled:
        return "off (it sleeps only when put to sleep)"
    start = round(schedule.sleep_start_hour * 60)
    return (
        f"daily from {start // 60:02d}:{start % 60:02d} for {schedule.sleep_duration_hours:g} h, "
        f"after at least {schedule.min_awake_ticks} awake ticks ({state.awake_ticks} so far); "
        f"a tick every {sleep_rate:g}s asleep"
    )


def _mode_json(opened: Assistant) -> dict[str, Any]:
    """The mode as ``mode --json`` prints it: state, sleep schedule, pending entries."""
    return {
        **opened.views.mode().model_dump(mode="json"),
        "sleep_schedule": opened.views.schedule().model_dump(mode="json"),
        "unconsolidated_entries": _unconsolidated(opened),
    }
