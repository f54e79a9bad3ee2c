"""The demo's closing summary: goals, projects, memory, people, the night, the numbers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from mindspace.engine import Assistant
from mindspace.hosts.cli.render import goal_tree, plural, projects_table

if TYPE_CHECKING:
    from mindspace.hosts.cli.demo import DemoReport

__all__ = ["print_summary"]

_STATE_STYLES = {"stranger": "dim", "acquaintance": "", "friend": "green", "ally": "bold green"}


def _count(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def print_summary(assistant: Assistant, report: DemoReport, console: Console) -> None:
    """Print what the two days left behind in the assistant's workspace."""
    console.print(Rule(Text("Summary", style="bold")))
    key = report.assistant_key
    views = assistant.views
    tree, _ = goal_tree(views.goals(), title=f"Goals of {key!r}", show_all=True)
    console.print(tree)
    desk = views.projects()
    console.print(projects_table(desk.all(), desk.active_key(), title=f"Projects of {key!r}"))

    people = Table(title="People", title_justify="left", show_edge=False)
    people.add_column("Entity", style="bold", no_wrap=True)
    people.add_column("Relationship", no_wrap=True)
    people.add_column("Attributes (consolidated while dreaming)", overflow="fold")
    for profile in views.entities():
        rel = profile.relationship
        people.add_row(
            profile.entity_id,
            Text(
                f"{rel.state} ({rel.favorability:.2f}, {rel.interaction_count} talks)",
                style=_STATE_STYLES.get(rel.state, ""),
            ),
            "; ".join(f"{k}: {v}" for k, v in sorted(profile.attributes.items())) or "-",
        )
    console.print(people)

    memory = views.session_memory()
    entries = views.journal_entries()
    reflection = views.reflection_state()
    memories = views.memory.count()
    links = len(views.memory_graph()["edges"])
    metrics = views.status()["session_metrics"]
    night = report.night
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    grid.add_row("Session facts", "\n".join(memory.key_facts) or "-")
    grid.add_row(
        "Journal",
        f"{_count(len(entries), 'entry', 'entries')} ({sum(1 for e in entries if e.is_synthesis)} "
        f"[SYNTHESIS] insights), {plural(reflection.reflection_count, 'reflection')}",
    )
    grid.add_row(
        "Semantic memory", f"{_count(memories, 'memory', 'memories')}, {plural(links, 'link')}"
    )
    grid.add_row(
        "The night",
        f"{plural(night.get('sleep_ticks', 0), 'sleep tick')}: {night.get('scored', 0)} scored, "
        f"{night.get('consolidated', 0)} consolidated, {night.get('links', 0)} links, "
        f"{plural(night.get('reflections', 0), 'reflection')}, "
        f"{night.get('pruned', 0)} pruned",
    )
    grid.add_row(
        "Engine",
        f"{plural(report.events, 'event')}, {plural(report.ticks, 'tick')}, "
        f"{metrics['total_tool_calls']} tool calls ({metrics['successful_calls']} ok, "
        f"{metrics['failed_calls']} failed)",
    )
    grid.add_row("Time", f"{report.seconds:.1f} s")
    grid.add_row("Database", report.database)
    grid.add_row("Assistant", key)
    console.print(grid)
