"""What the admin command shows: data gathered on the loop, tables drawn on the reactor.

Each ``gather_*`` function reads the engine's read models
(:attr:`~mindspace.engine.assistant.Assistant.views`; call it on the asyncio thread) and
returns plain data; each ``render_*`` function turns that data into text for a MUD client
with Evennia's ``EvTable`` (call it on the reactor thread, where the command runs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from evennia.utils.evtable import EvTable

from mindspace.engine import Approval, Assistant, Event
from mindspace.journal.records import JournalEntry
from mindspace.memory.records import EntityProfile, Memory
from mindspace.workspace.records import Goal

if TYPE_CHECKING:
    from mindspace.hosts.evennia.outcomes import SeenPrompt

__all__ = [
    "LIST_LIMIT",
    "StatusData",
    "TickerData",
    "TickerState",
    "gather_entities",
    "gather_goals",
    "gather_journal",
    "gather_memories",
    "gather_status",
    "progress_bar",
    "render_approval",
    "render_entities",
    "render_goals",
    "render_journal",
    "render_memories",
    "render_prompt",
    "render_status",
]

LIST_LIMIT = 15
BORDER = "header"


@dataclass(frozen=True)
class StatusData:
    """The assistant's state as the store knows it."""

    key: str
    mode: str
    mode_detail: str
    model: str
    embedder: str
    store: str
    usage_percent: float
    advisory: str
    tool_calls: tuple[int, int, int]
    open_events: tuple[Event, ...]
    approvals: tuple[Approval, ...]
    operator_prompt: str


TickerState = Literal["ticking", "paused", "stopped", "missing"]
"""The ticker Script: running, paused (``script/pause``), stopped, or not there at all."""


@dataclass(frozen=True)
class TickerData:
    """The ticker as the reactor thread knows it."""

    character: str
    location: str
    ticks: int
    failed_ticks: int
    busy: bool
    last_tick_ago: float | None
    next_in: float
    rate: float
    running: bool
    state: TickerState = "ticking"
    script: str | None = None
    """The ticker Script's ``#dbref``, for ``script/pause`` and ``script/start``."""
    last_failure: tuple[str, str] | None = None
    """(when, the technical error) of the last failed tick."""
    last_thought: tuple[str, str] | None = None
    """(when, the text) of the last autonomous tick's prose, which nobody heard."""
    notes: list[str] = field(default_factory=list)


# -- gathering (asyncio thread) ---------------------------------------------------------------
def gather_status(assistant: Assistant) -> StatusData:
    """The status of ``assistant``."""
    views = assistant.views
    state = views.mode()
    if state.mode == "sleep":
        detail = f"{state.sleep_depth} sleep, phase {state.sleep_phase or '-'}"
    else:
        detail = f"since {_short(state.since)}" if state.since else ""
    detail += f" ({state.reason})" if state.reason else ""
    status = views.status()
    usage = status["token_usage"]
    metrics = status["session_metrics"]
    return StatusData(
        key=assistant.key,
        mode=state.mode,
        mode_detail=detail,
        model=_model(assistant),
        embedder=views.embedder_name() or "none (lexical search only)",
        store=views.store_url(),
        usage_percent=float(usage["usage_percentage"]),
        advisory=str(status["token_advisory"].get("level", "?")),
        tool_calls=(
            int(metrics["total_tool_calls"]),
            int(metrics["successful_calls"]),
            int(metrics["failed_calls"]),
        ),
        open_events=tuple(views.open_events()[:LIST_LIMIT]),
        approvals=tuple(views.pending_approvals()),
        operator_prompt=views.user_system_prompt(),
    )


def gather_goals(assistant: Assistant) -> list[tuple[Goal, int]]:
    """Every goal, depth-first, with its depth."""
    return list(assistant.views.goals().tree())


def gather_journal(assistant: Assistant, limit: int = LIST_LIMIT) -> tuple[list[JournalEntry], int]:
    """The newest journal entries and how many there are."""
    entries = assistant.views.journal_entries()
    return entries[:limit], len(entries)


def gather_memories(assistant: Assistant, limit: int = LIST_LIMIT) -> tuple[list[Memory], int]:
    """The newest semantic memories and how many there are."""
    listed = assistant.views.memory_listing(limit=limit)
    return listed.memories, listed.total


def gather_entities(assistant: Assistant) -> list[EntityProfile]:
    """Every entity profile, by first contact."""
    return assistant.views.entities()


# -- rendering (reactor thread) ---------------------------------------------------------------
def progress_bar(progress: float, cells: int = 10) -> str:
    """``[####------] 40%``; only 100% fills every cell."""
    value = min(100.0, max(0.0, progress))
    filled = cells if value >= 100 else min(cells - 1, int(value / 100 * cells))
    return f"[{'#' * filled}{'-' * (cells - filled)}] {int(value)}%"


def render_status(data: StatusData, ticker: TickerData, width: int) -> str:
    """The ``status`` view."""
    table = EvTable(border="cells", width=width)
    last = "never" if ticker.last_tick_ago is None else f"{ticker.last_tick_ago:.0f}s ago"
    rows = [
        ("Character", f"{ticker.character} in {ticker.location}"),
        ("Mode", f"{data.mode}: {data.mode_detail}".rstrip(": ")),
        (
            "Ticker",
            f"{_ticking(ticker)}; {ticker.ticks} ticks since the server started "
            f"({ticker.failed_ticks} crashed), last {last}, {_next(ticker)}",
        ),
        ("Last failure", _noted(ticker.last_failure, "none since the server started")),
        ("Last thought", _noted(ticker.last_thought, "none (nothing unsaid)")),
        ("Model", data.model),
        ("Embedder", data.embedder),
        ("Store", data.store),
        ("Context", f"{data.usage_percent:g}% of the window ({data.advisory})"),
        ("Tool calls", "{} ({} ok, {} failed)".format(*data.tool_calls)),
        ("Operator prompt", _clip(data.operator_prompt, 160) or "-"),
    ]
    for name, value in rows:
        rendered = value if name in ("Ticker", "Last failure", "Last thought") else _escape(value)
        table.add_row(f"|w{name}|n", rendered)
    table.reformat_column(0, width=18)
    parts = [f"|wAssistant {_escape(data.key)}|n", str(table)]
    parts.extend(ticker.notes)
    if data.approvals:
        approvals = EvTable(
            "|wN|n", "|wTool|n", "|wArguments|n", "|wRequested|n", border=BORDER, width=width
        )
        for approval in data.approvals:
            approvals.add_row(
                approval.id.removeprefix("apr_"),
                approval.tool,
                _escape(_clip(approval.arguments, 200)),
                _short(approval.requested_at),
            )
        _fit(approvals, {0: 5, 1: 17, 3: 18})
        parts.append(f"|wPending approvals|n (assistant {data.key} approve N / reject N):")
        parts.append(str(approvals))
    else:
        parts.append("No approvals pending.")
    if data.open_events:
        events = EvTable(
            "|wEvent|n",
            "|wType|n",
            "|wFrom|n",
            "|wStatus|n",
            "|wContent|n",
            border=BORDER,
            width=width,
        )
        for event in data.open_events:
            status = event.status + (f" x{event.attempts}" if event.attempts else "")
            events.add_row(
                event.id,
                event.type,
                _escape(event.source_entity or "-"),
                status,
                _escape(_clip(event.content, 60)),
            )
        _fit(events, {0: 22, 1: 10, 2: 12, 3: 14})
        parts.append("|wOpen events|n:")
        parts.append(str(events))
    else:
        parts.append("No open events.")
    return "\n".join(parts)


def _ticking(ticker: TickerData) -> str:
    ref = ticker.script or "#?"
    if ticker.state == "paused":
        return f"|ypaused|n (the ticker Script {ref} is paused; resume: script/start {ref})"
    if ticker.state == "stopped":
        return f"|rnot ticking|n (the ticker Script {ref} is stopped; start: script/start {ref})"
    if ticker.state == "missing":
        return "|rnot ticking|n (no ticker Script)"
    return f"ticking (Script {ref})"


def _next(ticker: TickerData) -> str:
    if ticker.busy:
        return "running a tick now"
    if ticker.state != "ticking":
        return "no tick until the Script runs"
    return f"next tick in {max(0.0, ticker.next_in):.0f}s, every {ticker.rate:g}s in this mode"


def _noted(item: tuple[str, str] | None, none: str) -> str:
    if item is None:
        return none
    when, text = item
    return f"{when}: {_escape(_clip(text, 300))}"


def render_prompt(key: str, operator: str, seen: tuple[str, SeenPrompt] | None) -> str:
    """The ``prompt`` view: what the model saw on its last turn, then the operator prompt."""
    parts = []
    if seen is None:
        parts.append(f"|w{key} has not called the model since the server started.|n")
    else:
        when, prompt = seen
        parts.append(
            f"|wWhat the model saw on its last turn|n ({prompt.kind} tick, {when}, "
            f"{prompt.stamp}):\n{_escape(prompt.text.rstrip())}"
        )
    parts.append(f"|wThe operator prompt of {key}|n:\n{_escape(operator) or '(empty)'}")
    parts.append(f"Change it with: assistant {key} prompt <text>")
    return "\n".join(parts)


def render_goals(key: str, goals: list[tuple[Goal, int]], width: int) -> str:
    """The ``goals`` view."""
    if not goals:
        return f"Assistant {key} has no goals yet."
    table = EvTable(
        "|wGoal|n",
        "|wStatus|n",
        "|wProgress|n",
        "|wPriority|n",
        "|wId|n",
        border=BORDER,
        width=width,
    )
    for goal, depth in goals:
        table.add_row(
            "  " * depth + ("- " if depth else "") + _escape(goal.description),
            goal.status,
            progress_bar(goal.progress),
            goal.priority,
            goal.id,
        )
    _fit(table, {1: 11, 2: 18, 3: 10, 4: 13})
    active = sum(1 for g, _ in goals if g.status == "active")
    return f"|wGoals of {key}|n ({len(goals)} goals, {active} active)\n{table}"


def _tagged(item: JournalEntry | Memory) -> str:
    # the text with its tags after it, as '#tag'
    tags = " ".join(f"#{t}" for t in item.tags)
    return _escape(item.content + (f" {tags}" if tags else ""))


def render_journal(key: str, entries: list[JournalEntry], total: int, width: int) -> str:
    """The ``journal`` view, newest first."""
    if not entries:
        return f"Assistant {key} has no journal entries yet."
    table = EvTable("|wId|n", "|wTime (UTC)|n", "|wImp.|n", "|wEntry|n", border=BORDER, width=width)
    for entry in entries:
        table.add_row(str(entry.id), _short(entry.timestamp), str(entry.importance), _tagged(entry))
    _fit(table, {0: 6, 1: 18, 2: 6})
    return f"|wJournal of {key}|n ({_shown(len(entries), total, 'entry', 'entries')})\n{table}"


def render_memories(key: str, memories: list[Memory], total: int, width: int) -> str:
    """The ``memories`` view, newest first."""
    if not memories:
        return f"Assistant {key} has no memories yet (sleep consolidates the journal into them)."
    table = EvTable("|wId|n", "|wImp.|n", "|wFrom|n", "|wMemory|n", border=BORDER, width=width)
    for memory in memories:
        source = _escape(memory.source_entity or "-")
        table.add_row(memory.id, str(memory.importance), source, _tagged(memory))
    _fit(table, {0: 12, 1: 6, 2: 12})
    return f"|wMemories of {key}|n ({_shown(len(memories), total, 'memory', 'memories')})\n{table}"


def render_entities(key: str, profiles: list[EntityProfile], width: int) -> str:
    """The ``entities`` view."""
    if not profiles:
        return f"Assistant {key} has met no one yet."
    table = EvTable(
        "|wName|n",
        "|wRelationship|n",
        "|wTalks|n",
        "|wKnown|n",
        "|wLast seen|n",
        border=BORDER,
        width=width,
    )
    for profile in profiles:
        known = "; ".join(f"{k}: {v}" for k, v in sorted(profile.attributes.items()))
        # What people said word for word is raw material, not knowledge: `entities` shows it.
        pending = [o.text for o in profile.observations if not o.consolidated and not o.verbatim]
        if pending:
            known = "; ".join(filter(None, [known, *pending[-2:]]))
        table.add_row(
            _escape(profile.entity_id),
            f"{profile.relationship.state} ({profile.relationship.favorability:.2f})",
            str(profile.relationship.interaction_count),
            _escape(known or "-"),
            _short(profile.last_seen),
        )
    _fit(table, {0: 12, 1: 17, 2: 7, 4: 18})
    return f"|wPeople {key} knows|n ({len(profiles)})\n{table}"


def render_approval(approval_id: str, result: dict[str, Any] | None) -> str:
    """The outcome of ``approve N`` (``result``: the decided approval's tool result)."""
    result = result or {}
    if result.get("success"):
        output = str(result.get("output") or "(no output)")
        return f"|gApproved {approval_id}|n; it ran. Output:\n{_escape(output)}"
    error = result.get("error") or "it failed"
    hint = result.get("suggestion")
    return f"|rApproved {approval_id}, but it failed:|n {_escape(str(error))}" + (
        f" ({_escape(str(hint))})" if hint else ""
    )


def _model(assistant: Assistant) -> str:
    base_url = assistant.settings.llm_base_url
    if base_url is None:
        return "the offline model (no LLM configured: set MINDSPACE_LLM_BASE_URL)"
    model = getattr(assistant.llm, "model", None) or assistant.settings.llm_model
    return f"{model} at {base_url}"


def _fit(table: Any, widths: dict[int, int]) -> None:
    # Narrow columns get fixed widths; the text column takes what is left of the width.
    for index, width in widths.items():
        table.reformat_column(index, width=width)


def _shown(count: int, total: int, one: str, many: str) -> str:
    noun = one if total == 1 else many
    return f"newest {count} of {total} {noun}" if total > count else f"{total} {noun}"


def _short(stamp: str | None) -> str:
    if not stamp:
        return "-"
    return stamp.replace("T", " ").removesuffix("Z")[:16]


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _escape(text: str) -> str:
    return text.replace("|", "||")
