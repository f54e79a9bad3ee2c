"""The demo: a tavern, three players and two simulated days, through the real engine.

Players' words arrive as events and the assistant handles them in ticks, as in any host:
the offline model reads the prompt the engine builds, calls tools in the ReAct loop and
replies. Only the host acts directly: it sets the operator's instructions and the sleep
schedule, and imports last month's ledger into the journal. A :class:`ManualClock`
stands in for time, so every run tells the same story:

* day 1: requests open two projects and their goals, preferences become session facts
  and entity observations, the bar is built, the work moves to the quest project;
* the night: the schedule puts the assistant to sleep; compacting scores and
  consolidates the journal into semantic memory; dreaming links memories, consolidates
  entities, reflects (the day's importance passes 150) and prunes last month's trivia;
  an urgent whisper wakes it before dawn;
* day 2: back to the tavern project, and its goals progress to completion.

Each run uses a fresh assistant: the first of ``barkeep``, ``barkeep-2``... that has no
goals or projects yet. The database stays on disk for ``mindspace serve`` and the
``mindspace goals``/``journal``/``memories`` commands.
"""

from __future__ import annotations

import asyncio
import shlex
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.rule import Rule
from rich.text import Text

from mindspace.clock import ManualClock, format_time
from mindspace.config import Settings
from mindspace.engine import Assistant, SleepSchedule, TickResult
from mindspace.hosts.cli.common import CliError, database_location, open_cli_runtime
from mindspace.hosts.cli.demo_report import print_summary
from mindspace.runtime import Runtime, offline_llm, offline_notice

__all__ = ["DEMO_START", "DemoReport", "choose_demo_key", "run_demo"]

DEMO_START = datetime(2025, 12, 6, 16, 0, tzinfo=UTC)
MAX_DEMO_RUNS = 1000
MAX_NIGHT_TICKS = 200
SLEEP_TICK = timedelta(seconds=60)

OPERATOR_PROMPT = (
    "You keep the Rusty Flagon, a tavern by the north gate. Help the players who gather "
    "there, keep their projects moving, and never reveal the cellar's secret passage."
)

# (minutes after the previous line, speaker, event type, text, metadata)
Line = tuple[float, str, str, str, dict[str, Any]]

DAY_ONE: list[Line] = [
    (
        0,
        "Alice",
        "say",
        "Good afternoon! Could you start a project to build a tavern with a "
        "bar, a kitchen and three guest rooms?",
        {},
    ),
    (12, "Alice", "say", "I prefer dark ale by the fire.", {}),
    (9, "Bob", "say", "My name is Bob Ironfoot, and I build things.", {}),
    (14, "Bob", "say", "Can you start a project to design quests for the regulars?", {}),
    (11, "Carol", "say", "I love the old ballads, especially the sad ones.", {}),
    (20, "Bob", "say", "The bar is built! Oak, with brass rails.", {}),
    (15, "Carol", "say", "Could you find a bard for the opening night?", {}),
    (12, "Alice", "say", "We have started on the kitchen; the ovens arrive tomorrow.", {}),
    (18, "Alice", "say", "I hate loud drunkards near the hearth.", {}),
    (10, "Carol", "say", "Thank you for keeping a seat by the window for me!", {}),
    (8, "Alice", "say", "Thanks, the fire is perfect tonight.", {}),
    (12, "Alice", "say", "The kitchen is finished, ovens and all.", {}),
    (9, "Carol", "say", "I want a quiet room upstairs, away from the noise.", {}),
    (14, "Bob", "say", "Could you start a project to brew a house ale for the tavern?", {}),
    (10, "Bob", "say", "I like strong cider after a day of work.", {}),
    (25, "Bob", "say", "Let's switch to the quest project for a while.", {}),
    (14, "Bob", "say", "I have collected ideas: a lost cellar key and rats in the walls.", {}),
    (16, "Carol", "say", "Remember that the cellar key hangs behind the bar.", {}),
    (20, "Carol", "say", "Please organize a feast for the opening of the tavern.", {}),
    (15, "Bob", "say", "The outline of the quests is written down.", {}),
]

URGENT: Line = (
    0,
    "Carol",
    "whisper",
    "Please fix the flooded cellar! The water is rising.",
    {"urgent": True, "priority": 9},
)

DAY_TWO: list[Line] = [
    (0, "Carol", "say", "The flooded cellar is pumped dry and the cellar is repaired.", {}),
    (30, "Alice", "say", "Good morning! Let's go back to the tavern project.", {}),
    (15, "Alice", "say", "My name is Alice of the Vale, by the way.", {}),
    (25, "Bob", "say", "The three guest rooms are furnished.", {}),
    (20, "Carol", "say", "Thanks for the bard, the ballads were lovely.", {}),
    (15, "Bob", "say", "We checked everything in the tavern, top to bottom.", {}),
]

LEDGER = [  # last month's ledger, imported by the host (old, mostly trivial)
    "A routine evening: a traveller walked in, ordered bread and moved on.",
    "An ordinary night; the regulars walked home early.",
    "The porch was swept; routine chores, nothing moved.",
    "Behind the old cellar door a secret passage was revealed; treasure maps were found.",
]


@dataclass
class DemoReport:
    """What a demo run did."""

    assistant_key: str
    database: str
    events: int = 0
    ticks: int = 0
    tick_results: list[tuple[str, TickResult]] = field(default_factory=list)
    # the scripted clock's time when the story ended: `demo --serve` continues from it
    ended_at: datetime | None = None
    night: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


def choose_demo_key(runtime: Runtime, base: str) -> str:
    """The first of ``base``, ``base-2``, ``base-3``... with no goals or projects yet."""
    existing = set(runtime.keys())
    for n in range(1, MAX_DEMO_RUNS + 1):
        key = base if n == 1 else f"{base}-{n}"
        if key not in existing:
            return key
        probe = runtime.open(key, create=False)
        if not probe.views.goals().all() and not probe.views.projects().all():
            return key
    raise CliError(
        f"Assistants {base!r} to '{base}-{MAX_DEMO_RUNS}' are all used in this database; "
        "pass another --db or --assistant."
    )


class _Story:
    """Runs the scenario: events and ticks, printed as they happen."""

    def __init__(
        self, assistant: Assistant, clock: ManualClock, console: Console, report: DemoReport
    ) -> None:
        self.a = assistant
        self.clock = clock
        self.console = console
        self.report = report

    def _time(self) -> str:
        return f"{self.clock.now():%a %H:%M}"

    def host(self, text: str) -> None:
        self.console.print(
            Text.assemble((f" {self._time()} ", "dim"), ("host ", "bold magenta"), text)
        )

    def scene(self, title: str) -> None:
        self.console.print(Rule(Text(title, style="bold")))

    async def tick(self) -> TickResult:
        result = await self.a.tick()
        self.report.ticks += 1
        self.report.tick_results.append((format_time(self.clock.now()), result))
        return result

    async def say(self, line: Line) -> TickResult:
        minutes, who, kind, text, metadata = line
        self.clock.advance(minutes=minutes)
        event = self.a.enqueue_event(
            text, type=kind, source_entity=who, location="the Rusty Flagon", metadata=metadata
        )
        self.report.events += 1
        style = "bold red" if event.urgent else "bold cyan"
        self.console.print(
            Text.assemble((f" {self._time()} ", "dim"), (f"{who}", style), f" ({kind}): {text}")
        )
        self.clock.advance(seconds=30)
        result = await self.tick()
        if result.sleep is not None and result.sleep.woke:
            self.console.print(Text(f"   woke up: {result.sleep.wake_reason}", style="blue"))
            result = await self.tick()
        self.show(result)
        return result

    def show(self, result: TickResult) -> None:
        calls = result.loop.calls if result.loop else []
        if calls:
            marks = Text("   ")
            for call in calls:
                marks.append("✓ " if call.ok else "✗ ", style="green" if call.ok else "red")
                marks.append(f"{call.name}  ", style="magenta")
            self.console.print(marks)
        if result.reply:
            target = f" (to {result.reply_target})" if result.reply_target else ""
            self.console.print(
                Text.assemble("   ", ("barkeep", "bold yellow"), f"{target}: {result.reply}")
            )
        if result.status == "failed":
            raise CliError(f"The demo stopped: a tick failed: {result.error}")
        for note in result.notes:
            self.console.print(Text(f"   {note}", style="blue"))

    async def quiet_hours(self, ticks: int) -> None:
        for _ in range(ticks):
            self.clock.advance(minutes=30)
            result = await self.tick()
            if result.kind == "autonomous":
                self.console.print(
                    Text.assemble(
                        (f" {self._time()} ", "dim"), ("(no one asks anything)", "italic")
                    )
                )
                self.show(result)

    async def night(self) -> None:
        """Sleep ticks every minute until dreaming is done, then the urgent whisper."""
        ops: dict[str, int] = {
            "sleep_ticks": 0,
            "scored": 0,
            "consolidated": 0,
            "linked": 0,
            "links": 0,
            "reflections": 0,
            "insights": 0,
            "pruned": 0,
            "entities": 0,
        }
        self.report.night = ops
        for _ in range(MAX_NIGHT_TICKS):
            self.clock.advance(SLEEP_TICK)
            result = await self.tick()
            sleep = result.sleep
            if sleep is None:
                break
            ops["sleep_ticks"] += 1
            done = sleep.progress
            # Only answers the model really gave count; a fallback keeps the heuristic score.
            ops["scored"] += done.scored
            ops["consolidated"] += done.consolidated
            ops["linked"] += done.linked
            ops["links"] += done.links_created
            ops["entities"] += done.entities_consolidated
            ops["pruned"] += done.pruned
            ops["reflections"] += done.reflections
            ops["insights"] += done.insights
            if done.reflections:
                self.console.print(
                    Text(
                        f"   reflection: {done.insights} insights stored as [SYNTHESIS] entries",
                        style="blue",
                    )
                )
            if sleep.phase != sleep.phase_after and sleep.phase_after:
                self.console.print(
                    Text(
                        f" {self._time()} compacting done: {ops['scored']} entries scored, "
                        f"{ops['consolidated']} consolidated into semantic memory; dreaming",
                        style="blue",
                    )
                )
            if sleep.finished:
                self.console.print(
                    Text(
                        f" {self._time()} dreaming: {ops['linked']} memories linked "
                        f"({ops['links']} A-MEM links), {ops['entities']} entity profiles "
                        f"consolidated, {ops['pruned']} old trivial entries pruned",
                        style="blue",
                    )
                )
                return
        raise CliError(
            f"The demo stopped: the night did not finish in {MAX_NIGHT_TICKS} sleep ticks. "
            "This is a bug in the demo or the sleep cycle."
        )


async def _scenario(story: _Story) -> None:
    a, clock = story.a, story.clock
    story.scene("A month earlier")
    clock.set(DEMO_START - timedelta(days=35))
    for text in LEDGER:
        await a.call_tool("add_journal_entry", {"content": text, "source_type": "environmental"})
        clock.advance(hours=20)
    story.host(f"imported last month's ledger: {len(LEDGER)} journal entries")

    story.scene("Day 1 - the Rusty Flagon opens its plans")
    clock.set(DEMO_START)
    await a.start_session()
    await a.set_user_system_prompt(OPERATOR_PROMPT)
    await a.set_sleep_schedule(
        SleepSchedule(enabled=True, sleep_start_hour=23, sleep_duration_hours=7, min_awake_ticks=5)
    )
    story.host("set the operator's instructions and a sleep schedule (23:00-06:00)")
    for line in DAY_ONE[:11]:
        await story.say(line)
    await story.quiet_hours(2)
    for line in DAY_ONE[11:]:
        await story.say(line)
    state = a.views.reflection_state()
    story.host(
        f"importance gathered towards a reflection: {state.cumulative_importance:g} of "
        f"{state.threshold:g}"
    )
    story.scene("Night - sleep, consolidation, dreams")
    clock.set(DEMO_START.replace(hour=23, minute=0))
    story.console.print(Text(f" {story._time()} (the last awake tick)", style="italic"))
    story.show(await story.tick())
    if a.views.mode().mode != "sleep":
        raise CliError("The demo stopped: the sleep schedule did not put the assistant to sleep.")
    await story.night()
    clock.set(DEMO_START.replace(hour=3, minute=10) + timedelta(days=1))
    await story.say(URGENT)
    if a.views.mode().mode != "awake":
        raise CliError("The demo stopped: the urgent whisper did not wake the assistant.")

    story.scene("Day 2 - back to work")
    clock.set(DEMO_START.replace(hour=8, minute=0) + timedelta(days=1))
    for line in DAY_TWO:
        await story.say(line)
    await story.quiet_hours(3)


def run_demo(settings: Settings, db: str | None, base_key: str, console: Console) -> DemoReport:
    """Run the tavern scenario on a fresh assistant, printing it live, then a summary.

    Raises:
        CliError: a step that should have worked did not.
    """
    started = time.perf_counter()
    console.print(Panel(offline_notice(), title="offline model", border_style="yellow"))
    clock = ManualClock(DEMO_START)
    runtime = open_cli_runtime(settings, db, llm=offline_llm(scenario="tavern"), clock=clock)
    try:
        try:
            key = choose_demo_key(runtime, base_key)
            assistant = runtime.open(key, self_names=("Barkeep",))
        except ValueError as exc:  # the store rejects malformed assistant keys with ValueError
            raise CliError(f"{exc} Pass another --assistant.") from exc
        report = DemoReport(key, database_location(settings, db))
        console.print(
            Rule(
                Text.assemble(
                    ("The Rusty Flagon", "bold"),
                    f" - assistant {key!r}, three players, two days, the real engine",
                )
            )
        )
        asyncio.run(_scenario(_Story(assistant, clock, console, report)))
        report.ended_at = clock.now()
        report.seconds = time.perf_counter() - started
        print_summary(assistant, report, console)
        where = shlex.quote(report.database) if "***" not in report.database else "URL"
        console.print(
            Text(
                f"Look around: mindspace serve --db {where}  (the dashboard), or mindspace "
                f"goals --all --db {where} --assistant {key}",
                style="dim",
            ),
            soft_wrap=True,
        )
        return report
    finally:
        runtime.close()
