"""Rich views of tools, goals, projects, status and tool results for the CLI."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from mindspace.tools.base import Tool
from mindspace.tools.registry import describe_parameters
from mindspace.workspace.goals import GoalBook
from mindspace.workspace.records import Goal, Project

__all__ = [
    "goal_tree",
    "night_backlog_line",
    "plural",
    "progress_bar",
    "projects_table",
    "status_view",
    "summarize_result",
    "tool_use_line",
    "tools_table",
]

BAR_CELLS = 10
ADVISORY_STYLES = {"normal": "green", "warning": "yellow", "critical": "bold red"}
_STATUS_STYLES = {
    "active": "cyan",
    "completed": "green",
    "abandoned": "red",
    "paused": "yellow",
}
_PRIORITY_STYLES = {"high": "bold red", "medium": "yellow", "low": "dim"}


def plural(count: int, word: str) -> str:
    """``1 fact``, ``2 facts``."""
    return f"{count} {word}" + ("" if count == 1 else "s")


def progress_bar(progress: float, cells: int = BAR_CELLS) -> str:
    """A text bar such as ``████████░░ 80%``; only 100% fills every cell."""
    value = min(100.0, max(0.0, progress))
    filled = cells if value >= 100 else min(cells - 1, math.floor(value / 100 * cells))
    return f"{'█' * filled}{'░' * (cells - filled)} {math.floor(value):>3}%"


def tools_table(tools: Iterable[Tool[Any]]) -> Table:
    """Every tool: name, category, description and parameters."""
    table = Table(title="Tools", title_justify="left", show_lines=True, expand=True)
    table.add_column("Name", style="bold cyan", no_wrap=True)
    table.add_column("Category", style="magenta", no_wrap=True)
    table.add_column("Description", ratio=3)
    table.add_column("Parameters", ratio=2, overflow="fold")
    for tool in tools:
        table.add_row(tool.name, str(tool.category), tool.description, describe_parameters(tool))
    return table


def goal_tree(book: GoalBook, *, title: str, show_all: bool) -> tuple[Tree, int]:
    """The goal tree and how many closed goals it hides.

    Without ``show_all``, completed and abandoned goals are hidden unless an active goal
    sits below them (those are shown dimmed, to keep the tree connected).
    """
    goals = {goal.id: goal for goal in book.all()}
    open_below: dict[str, bool] = {}

    def has_open(goal: Goal) -> bool:
        if goal.id not in open_below:
            open_below[goal.id] = goal.status == "active" or any(
                has_open(goals[child]) for child in goal.subtask_ids if child in goals
            )
        return open_below[goal.id]

    tree = Tree(Text(title, style="bold"), guide_style="dim")
    parents: list[Tree] = [tree]
    hidden = 0
    for goal, depth in book.tree():
        if not show_all and not has_open(goal):
            hidden += 1
            continue
        del parents[depth + 1 :]
        node = parents[min(depth, len(parents) - 1)].add(_goal_label(goal, goals))
        parents.append(node)
    return tree, hidden


def _goal_label(goal: Goal, goals: Mapping[str, Goal]) -> Text:
    closed = goal.status != "active"
    label = Text(style="dim" if closed else "")
    label.append(goal.id, style="dim cyan")
    label.append("  ")
    label.append(progress_bar(goal.progress), style="green" if goal.progress >= 100 else "blue")
    label.append("  ")
    label.append(goal.description, style="strike" if goal.status == "abandoned" else "")
    label.append("  [")
    label.append(goal.status, style=_STATUS_STYLES.get(goal.status, ""))
    label.append(", ")
    label.append(goal.priority, style=_PRIORITY_STYLES.get(goal.priority, ""))
    if goal.subtask_ids:
        done = sum(
            1 for child in goal.subtask_ids if child in goals and goals[child].status == "completed"
        )
        label.append(f", {done}/{len(goal.subtask_ids)} subtasks done")
    label.append("]")
    return label


def projects_table(projects: Iterable[Project], active: str | None, *, title: str) -> Table:
    """Projects in creation order, the active one marked with ▶."""
    table = Table(title=title, title_justify="left", caption="▶ = active project")
    table.add_column("", no_wrap=True, width=1)
    table.add_column("Key", style="bold", no_wrap=True)
    table.add_column("Status", no_wrap=True)
    table.add_column("Summary")
    table.add_column("Last active", no_wrap=True, style="dim")
    for project in projects:
        is_active = project.key == active
        table.add_row(
            Text("▶", style="bold green") if is_active else "",
            Text(project.key, style="bold green" if is_active else "bold"),
            Text(project.status, style=_STATUS_STYLES.get(project.status, "")),
            project.summary,
            project.last_active,
        )
    return table


def night_backlog_line(backlog: Mapping[str, Any]) -> str:
    """The night's work still to do, e.g. ``120 entries unscored, 0 unconsolidated, ...``."""
    unscored, unconsolidated, unlinked = (
        int(backlog.get(name, 0)) for name in ("unscored", "unconsolidated", "unlinked")
    )
    if not (unscored or unconsolidated or unlinked):
        return "none (every journal entry scored and consolidated, every memory linked)"
    entries = "journal entry" if unscored == 1 else "journal entries"
    memories = "memory" if unlinked == 1 else "memories"
    return (
        f"{unscored:,} {entries} unscored, {unconsolidated:,} unconsolidated, "
        f"{unlinked:,} {memories} unlinked (the next sleep starts with them)"
    )


def _threshold_label(level: str, advice: Mapping[str, Any]) -> str:
    """What the advisory's ``threshold`` is: the spec gives the *next* level's boundary
    (normal: 60, the warning's; warning: 80, the critical one's), so say which."""
    threshold = advice.get("threshold", "?")
    if level == "normal":
        return f"warning from {threshold}%"
    return f"critical above {threshold}%"


def status_view(
    status: Mapping[str, Any], *, assistant: str, model: str, database: str
) -> RenderableType:
    """The ``get_system_status`` dict as a labelled grid, the advisory level in colour."""
    usage = status.get("token_usage", {})
    advice = status.get("token_advisory", {})
    loop = status.get("loop_state", {})
    chain = status.get("chain_state", {})
    metrics = status.get("session_metrics", {})
    level = str(advice.get("level", "?"))

    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    cached = usage.get("cached_tokens")
    grid.add_row(
        "Token usage",
        f"{usage.get('estimated_used', 0):,} / {usage.get('model_limit', 0):,} tokens "
        f"({usage.get('usage_percentage', 0)}%) · {usage.get('available', 0):,} available "
        f"· source: {usage.get('source', '?')}"
        + (f" · {cached:,} read from the provider's cache" if cached is not None else ""),
    )
    grid.add_row(
        "Advisory",
        Text.assemble(
            (level.upper(), ADVISORY_STYLES.get(level, "")),
            f" - {advice.get('message', '')} ({_threshold_label(level, advice)})",
        ),
    )
    tools = loop.get("tools_this_cycle") or []
    grid.add_row(
        "Loop",
        f"iteration {loop.get('iteration', 0)}/{loop.get('max_iterations', 0)} · "
        + (f"tools this cycle: {', '.join(tools)}" if tools else "no tools this cycle"),
    )
    pending = chain.get("pending_tools") or []
    grid.add_row(
        "Chain",
        f"depth {chain.get('chain_depth', 0)}, pending: {', '.join(pending) or 'none'}"
        if chain.get("in_chain")
        else "not in a chain",
    )
    grid.add_row(
        "Session",
        Text.assemble(
            f"{metrics.get('total_tool_calls', 0)} tool calls: ",
            (f"{metrics.get('successful_calls', 0)} ok", "green"),
            ", ",
            (
                f"{metrics.get('failed_calls', 0)} failed",
                "red" if metrics.get("failed_calls") else "",
            ),
            f" · since {metrics.get('session_start') or 'never'}",
        ),
    )
    health = status.get("tool_use_health")
    if isinstance(health, Mapping):
        grid.add_row("Tool use", tool_use_line(health))
        if health.get("warning"):
            grid.add_row("", Text(f"warning: {health['warning']}", style="bold yellow"))
    backlog = status.get("night_backlog")
    if isinstance(backlog, Mapping):
        grid.add_row("Night work left", night_backlog_line(backlog))
    grid.add_row("Model", model)
    grid.add_row("Database", database)
    heading = Text.assemble(
        ("Status of assistant ", "bold"),
        (repr(assistant), "bold cyan"),
        (f" at {status.get('timestamp', '?')}", "dim"),
    )
    return Group(heading, grid)


def tool_use_line(health: Mapping[str, Any]) -> str:
    """One line of tool-use health, e.g. ``last 20 ticks: 14 valid, 2 invalid, 4 text-only``."""
    ticks = int(health.get("ticks", 0))
    if not ticks:
        return "no ticks yet"
    line = (
        f"last {plural(ticks, 'tick')}: {health.get('valid_calls', 0)} valid, "
        f"{health.get('invalid_calls', 0)} invalid, {health.get('text_only_answers', 0)} text-only"
    )
    extras = [
        f"{health[key]} {label}"
        for key, label in (
            ("parsed_from_text", "written as text"),
            ("repeated_calls", "repeated"),
            ("cut_replies", "cut by the length limit"),
            ("fallback_replies", "fallback replies"),
        )
        if health.get(key)
    ]
    return line + (f" ({', '.join(extras)})" if extras else "")


def summarize_result(tool: str, result: Mapping[str, Any]) -> str:
    """A compact one-line summary of a tool result."""
    if result.get("success") is not True:
        text = str(result.get("error", "failed"))
        if "matched" in result:
            text += f" (matched {result['matched']!r})"
        return text
    if tool == "add_goal":
        goal = result.get("goal", {})
        return f"{result.get('goal_id')} {goal.get('description')!r} ({goal.get('priority')})"
    if tool == "decompose_goal":
        ids = [s.get("id") for s in result.get("subtasks", [])]
        return f"{result.get('subtasks_created')} subtasks under {result.get('goal_id')}: " + (
            ", ".join(str(i) for i in ids)
        )
    if tool == "update_goal":
        goal = result.get("goal", {})
        text = f"{result.get('goal_id')} {goal.get('status')}"
        if goal.get("status") != "completed":
            text += f" at {goal.get('progress')}%"
        for parent in result.get("rolled_up", []):
            text += (
                f"; {parent.get('goal_id')} now {parent.get('progress')}% ({parent.get('status')})"
            )
        auto = [g for g in result.get("completed", []) if g != result.get("goal_id")]
        if auto:
            text += f"; auto-completed {', '.join(auto)}"
        return text
    if tool == "add_session_memory":
        verb = "already known" if result.get("duplicate") else "added"
        return (
            f"{result.get('memory_type')} {verb}: {result.get('added')!r} "
            f"({plural(result.get('total_facts', 0), 'fact')}, "
            f"{plural(result.get('total_patterns', 0), 'pattern')})"
        )
    if tool == "compact_session_memory":
        before, after = result.get("before", {}), result.get("after", {})
        return (
            f"facts {before.get('facts')} -> {after.get('facts')}, patterns "
            f"{before.get('patterns')} -> {after.get('patterns')}, "
            f"{result.get('completed_tasks_kept')} completed tasks kept"
        )
    if tool == "swap_project":
        return f"{result.get('old_project')} -> {result.get('new_project')}"
    if tool == "update_project":
        return f"{result.get('project_key')} ({result.get('status')}): {result.get('message')}"
    if tool == "list_projects":
        return f"{result.get('count')} projects, active: {result.get('active')}"
    if tool == "get_system_status":
        usage, advice = result.get("token_usage", {}), result.get("token_advisory", {})
        metrics = result.get("session_metrics", {})
        return (
            f"{usage.get('estimated_used')} tokens ({usage.get('usage_percentage')}%, "
            f"{advice.get('level')}); {metrics.get('successful_calls')} ok / "
            f"{metrics.get('failed_calls')} failed calls so far"
        )
    if "message" in result:
        return str(result["message"])
    return ", ".join(f"{k}={v!r}" for k, v in result.items() if k != "success")
