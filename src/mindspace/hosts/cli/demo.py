"""The scripted demo: a tavern keeper assistant works through every tool family offline.

It runs on a :class:`~mindspace.clock.ManualClock` with the offline model, so every run
prints the same story. Each run uses a fresh assistant: the first of ``barkeep``,
``barkeep-2``, ``barkeep-3``... that has no goals or projects yet in the database.
"""

from __future__ import annotations

import asyncio
import shlex
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from rich.console import Console
from rich.padding import Padding
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from mindspace.clock import ManualClock
from mindspace.config import Settings
from mindspace.engine.assistant import Assistant
from mindspace.hosts.cli.common import CliError, database_location, open_cli_store
from mindspace.hosts.cli.render import goal_tree, plural, projects_table, summarize_result
from mindspace.llm.offline import OFFLINE_NOTICE, OfflineLLM
from mindspace.state.port import Store

__all__ = ["DEMO_START", "DemoReport", "choose_demo_key", "run_demo"]

DEMO_START = datetime(2025, 12, 6, 18, 0, tzinfo=UTC)
STEP_MINUTES = 3
MAX_DEMO_RUNS = 1000


@dataclass
class DemoReport:
    """What a demo run did."""

    assistant_key: str
    database: str
    ok: int = 0
    failed: int = 0
    expected_failures: int = 0


class _Steps:
    """Runs numbered tool calls, printing each one and advancing the clock between them."""

    def __init__(
        self, assistant: Assistant, clock: ManualClock, console: Console, report: DemoReport
    ) -> None:
        self.assistant = assistant
        self.clock = clock
        self.console = console
        self.report = report
        self.number = 0

    async def call(
        self, title: str, tool: str, args: dict[str, Any], *, expect_ok: bool = True, note: str = ""
    ) -> dict[str, Any]:
        self.number += 1
        result = await self.assistant.call_tool(tool, args)
        ok = result.get("success") is True
        if ok:
            self.report.ok += 1
        else:
            self.report.failed += 1
            self.report.expected_failures += 0 if expect_ok else 1
        mark = Text("✓", style="bold green") if ok else Text("✗", style="bold red")
        line = Text.assemble(
            " ", mark, f" {self.number:>2}. ", (title, "bold"), "  ", (tool, "magenta")
        )
        self.console.print(line, no_wrap=True, overflow="ellipsis")
        summary = summarize_result(tool, result)
        if note:
            summary += f"  ({note})"
        style = "dim" if ok or not expect_ok else "red"
        self.console.print(Padding(Text(summary, style=style), (0, 0, 0, 7), expand=False))
        if ok != expect_ok:
            outcome = f"failed: {result.get('error')}" if not ok else "was not rejected"
            raise _StepFailedError(f"step {self.number} ({tool}) {outcome}")
        self.clock.advance(minutes=STEP_MINUTES)
        return result


class _StepFailedError(Exception):
    pass


def choose_demo_key(store: Store, settings: Settings, base: str) -> str:
    """The first of ``base``, ``base-2``, ``base-3``... with no goals or projects yet."""
    existing = {info.key for info in store.list_assistants()}
    for n in range(1, MAX_DEMO_RUNS + 1):
        key = base if n == 1 else f"{base}-{n}"
        if key not in existing:
            return key
        probe = Assistant.open(
            store, key, create=False, llm=OfflineLLM(announce=False), settings=settings
        )
        if not probe.goals().all() and not probe.projects().all():
            return key
    raise CliError(
        f"Assistants {base!r} to '{base}-{MAX_DEMO_RUNS}' are all used in this database; "
        "pass another --db or --assistant."
    )


def run_demo(settings: Settings, db: str | None, base_key: str, console: Console) -> DemoReport:
    """Run the tavern scenario on a fresh assistant and print every step and a summary.

    Raises:
        CliError: a step that should have succeeded failed.
    """
    console.print(Panel(OFFLINE_NOTICE, title="offline model", border_style="yellow"))
    store = open_cli_store(settings, db)
    try:
        clock = ManualClock(DEMO_START)
        try:
            key = choose_demo_key(store, settings, base_key)
            assistant = Assistant.open(
                store,
                key,
                llm=OfflineLLM(announce=False),
                clock=clock,
                settings=settings,
                self_names=("Barkeep",),
            )
        except ValueError as exc:  # the store rejects malformed assistant keys with ValueError
            raise CliError(f"{exc} Pass another --assistant.") from exc
        assistant.start_session()
        report = DemoReport(key, database_location(settings, db))
        console.print(
            Rule(
                Text.assemble(
                    ("The tavern keeper demo", "bold"),
                    f" - assistant {key!r}, clock {DEMO_START:%Y-%m-%d %H:%M} UTC",
                )
            )
        )
        steps = _Steps(assistant, clock, console, report)
        try:
            asyncio.run(_scenario(steps))
        except _StepFailedError as exc:
            raise CliError(
                f"The demo stopped: {exc}. This is a bug in the demo or the tools; "
                f"the database {report.database!r} keeps the steps before it."
            ) from exc
        _summary(assistant, report, console)
        return report
    finally:
        store.close()


async def _scenario(steps: _Steps) -> None:
    await steps.call(
        "Open the tavern project",
        "create_project",
        {
            "project_key": "build_tavern",
            "summary": "Build and furnish the Rusty Flagon tavern",
            "initial_context": "An empty plot by the north gate; the mason arrives tomorrow.",
        },
    )
    await steps.call(
        "Open a quest project for later",
        "create_project",
        {
            "project_key": "quest_design",
            "summary": "Design quests that start in the tavern",
            "initial_context": "Ideas: a lost cellar key, a rat problem, a smuggler's map.",
        },
    )
    added = await steps.call(
        "Set the main goal",
        "add_goal",
        {"description": "Build a complete tavern", "priority": "high"},
    )
    parent = str(added["goal_id"])
    plan = await steps.call(
        "Decompose it with the offline model", "decompose_goal", {"goal_id": parent}
    )
    subtasks = [str(s["id"]) for s in plan["subtasks"]]
    for done, goal_id in enumerate(subtasks[:2], start=1):
        await steps.call(
            f"Complete subtask {done}",
            "update_goal",
            {"goal_id": goal_id, "status": "completed"},
            note=f"{done}/{len(subtasks)} subtasks done",
        )
    await steps.call(
        "Remember a fact in the first person",
        "add_session_memory",
        {"memory_type": "fact", "content": "I helped Alice find the cellar"},
        expect_ok=False,
        note="rejected by persona protection, as intended",
    )
    await steps.call(
        "Retry in the third person",
        "add_session_memory",
        {"memory_type": "fact", "content": "Player Alice found the cellar key"},
    )
    await steps.call(
        "Learn a pattern",
        "add_session_memory",
        {
            "memory_type": "pattern",
            "content": "Regulars order ale before food on cold evenings",
        },
    )
    await steps.call(
        "Page the tavern out, the quests in",
        "swap_project",
        {
            "project_key": "quest_design",
            "current_project_update": (
                f"Requirements and layout done (2/{len(subtasks)} subtasks); materials come next."
            ),
            "reasoning": "Alice's cellar key is a quest hook worth writing down now.",
        },
    )
    await steps.call(
        "Save quest notes",
        "update_project",
        {
            "context_update": (
                "Quest 1: the lost cellar key - Player Alice found it; "
                "who hid it there? Quest 2: rats in the cellar."
            ),
            "summary": "Design quests that start in the tavern cellar",
        },
    )
    await steps.call(
        "Compact session memory",
        "compact_session_memory",
        {
            "new_facts": [
                "Player Alice found the cellar key",
                "The tavern stands by the north gate",
            ],
            "new_patterns": ["Regulars order ale before food on cold evenings"],
            "summary": "Merged what is known about the cellar and the regulars.",
        },
    )
    remaining = subtasks[2:]
    for offset, goal_id in enumerate(remaining, start=3):
        last = offset == len(subtasks)
        await steps.call(
            f"Complete subtask {offset}",
            "update_goal",
            {"goal_id": goal_id, "status": "completed"},
            note=f"{offset}/{len(subtasks)} subtasks done"
            + (" - the parent completes itself" if last else ""),
        )
    await steps.call(
        "Revise its own guidelines",
        "update_system_prompt",
        {
            "new_prompt": (
                "Greet guests by name, keep quest hooks in the quest_design project, and "
                "record facts about players in the third person."
            ),
            "reasoning": "The persona guard rejected a first-person fact earlier.",
        },
    )
    await steps.call("Check the system status", "get_system_status", {})


def _summary(assistant: Assistant, report: DemoReport, console: Console) -> None:
    console.print(Rule(Text("Summary", style="bold")))
    tree, _ = goal_tree(
        assistant.goals(), title=f"Goals of {report.assistant_key!r}", show_all=True
    )
    console.print(tree)
    desk = assistant.projects()
    console.print(
        projects_table(desk.all(), desk.active_key(), title=f"Projects of {report.assistant_key!r}")
    )
    memory = assistant.session_memory()
    metrics = assistant.status()["session_metrics"]
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    grid.add_row(
        "Session memory",
        f"{plural(len(memory.key_facts), 'fact')}, "
        f"{plural(len(memory.learned_patterns), 'pattern')}, "
        f"{plural(len(memory.completed_tasks), 'completed task')}",
    )
    grid.add_row(
        "Tool calls",
        Text.assemble(
            f"{metrics['total_tool_calls']} in all: ",
            (f"{metrics['successful_calls']} ok", "green"),
            ", ",
            (f"{metrics['failed_calls']} failed", "red"),
            f" ({report.expected_failures} on purpose)",
        ),
    )
    grid.add_row("Database", report.database)
    grid.add_row("Assistant", report.assistant_key)
    console.print(grid)
    where = " --db " + (shlex.quote(report.database) if "***" not in report.database else "URL")
    console.print(
        Text(f"Look around: mindspace goals --all{where} --assistant {report.assistant_key}"),
        style="dim",
        soft_wrap=True,
    )
