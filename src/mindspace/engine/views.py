"""Read models: what hosts show of an assistant, computed in one place.

The CLI, the HTTP API, the dashboard and Evennia all read an assistant through
:class:`AssistantViews` (``assistant.views``), so the same state gives the same answers
everywhere. Nothing here writes, counts a tool call or hands out a unit of work: every
method reads a fresh snapshot of the committed state and returns records or JSON-ready
dicts (the shapes the HTTP API documents).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mindspace.engine.approvals import Approvals
from mindspace.engine.core import EngineCore
from mindspace.engine.executor import ToolExecutor
from mindspace.engine.history import HistoryPage, history_page
from mindspace.engine.memory_views import MAX_GRAPH_NODES, MemoryListing, MemoryViews
from mindspace.engine.modes import OperatingMode, SleepSchedule
from mindspace.engine.night.budget import NightBacklog, night_backlog, unlinked_memories
from mindspace.engine.records import Approval, Event
from mindspace.engine.tick import tick_rate
from mindspace.journal.records import JournalEntry, JournalMeta, ReflectionState
from mindspace.journal.search import JournalFilter, JournalSearch, SemanticJournal, filter_entries
from mindspace.journal.search import search_journal as run_journal_search
from mindspace.memory.entities import EntityBook
from mindspace.memory.records import EntityProfile, WorkingMemory
from mindspace.memory.semantic import SemanticMemory
from mindspace.tools.runner import ToolOutcome
from mindspace.workspace.goals import GoalBook
from mindspace.workspace.projects import ProjectDesk
from mindspace.workspace.records import Goal, SessionMemory, SystemPrompts
from mindspace.workspace.status import LoopSnapshot, build_status

__all__ = ["MAX_GRAPH_NODES", "AssistantViews", "MemoryListing", "event_view"]

_GOAL_STATUSES = ("active", "completed", "abandoned")


def event_view(event: Event) -> dict[str, Any]:
    """An event with its status and, once done, the reply."""
    return {
        "event_id": event.id,
        "type": event.type,
        "source_entity": event.source_entity,
        "content": event.content,
        "location": event.location,
        "metadata": event.metadata,
        "status": event.status,
        "attempts": event.attempts,
        "error": event.error,
        "reply": event.reply,
        "urgent": event.urgent,
        "created_at": event.created_at,
        "updated_at": event.updated_at,
    }


class AssistantViews:
    """Read models of one assistant (``assistant.views``).

    Args:
        core: The assistant's state and ports.
        executor: Runs read-only searches (their writes are never committed).
    """

    def __init__(self, core: EngineCore, executor: ToolExecutor) -> None:
        self._core = core
        self._executor = executor
        self.memory = MemoryViews(core)
        """Memory pages, counts and the link graph."""

    # -- mode and status -----------------------------------------------------------------
    def mode(self) -> OperatingMode:
        """The operating mode and, while asleep, the sleep phase."""
        return self._core.read().doc(OperatingMode)

    def schedule(self) -> SleepSchedule:
        """The sleep schedule."""
        return self._core.read().doc(SleepSchedule)

    def is_idle(self, *, refresh: bool = True, open_events: int | None = None) -> bool:
        """Whether the assistant needs no tick until something happens to it.

        Idle means all of: awake; no open event (pending or interrupted); no active goal
        (autonomous work would be due); and no sleep schedule (awake ticks count toward
        falling asleep on schedule). Approvals waiting for a human need no tick: a decision
        enqueues an event.

        Args:
            refresh: Read the store's revision first (two round trips at most: the revision
                and the open events). ``False`` reads the cache as the last tick left it,
                right after a tick, when a host's write since then deferred a tick of its own.
            open_events: How many events are open, when the caller knows (a tick's
                ``events_left``, where every event enqueued since deferred a tick of its
                own); None reads the inbox (a round trip).
        """
        unit = self._core.read() if refresh else self._core.state.begin()
        if unit.doc(OperatingMode).mode != "awake" or unit.doc(SleepSchedule).enabled:
            return False
        if any(goal.status == "active" for goal in unit.all(Goal)):
            return False
        if open_events is not None:
            return open_events == 0
        return not self._core.queue.open(limit=1)

    def tick_rate(self) -> float:
        """Seconds until the next tick should run, by the current mode."""
        return tick_rate(self._core.read(), self._core.settings)

    def mode_view(self) -> dict[str, Any]:
        """The operating mode, sleep phase, tick rate and sleep schedule."""
        unit = self._core.read()
        return {
            **unit.doc(OperatingMode).model_dump(mode="json"),
            "tick_rate": tick_rate(unit, self._core.settings),
            "schedule": unit.doc(SleepSchedule).model_dump(mode="json"),
        }

    def status(self, loop: LoopSnapshot | None = None) -> dict[str, Any]:
        """What ``get_system_status`` reports, without counting as a tool call, and the
        night's work still to do (``night_backlog``, see :meth:`night_backlog`)."""
        core = self._core
        unit = core.read()
        status = build_status(unit, core.clock, core.settings, loop or LoopSnapshot())
        return {**status, "night_backlog": self.night_backlog().to_dict()}

    def night_backlog(self) -> NightBacklog:
        """Journal entries unscored and unconsolidated, memories unlinked: what the next
        sleep starts with (or this one has left), counted from the pending queues."""
        return night_backlog(self._core.read(), unlinked_memories(self._core.state))

    def model_name(self) -> str:
        """The model's name (the adapter's class for models without one)."""
        return str(getattr(self._core.llm, "model", type(self._core.llm).__name__))

    def embedder_name(self) -> str | None:
        """The embedder's name, or None for lexical search only."""
        return self._core.embedder.name if self._core.embedder else None

    def store_url(self) -> str:
        """Where the assistant lives (passwords masked by the store)."""
        return str(getattr(self._core.store, "url", "?"))

    def user_system_prompt(self) -> str:
        """The operator's system prompt."""
        return self._core.read().doc(SystemPrompts).user_system_prompt

    def summary(self) -> dict[str, Any]:
        """Key, mode, token usage and how much each part of the workspace holds."""
        unit = self._core.read()
        state = unit.doc(OperatingMode)
        status = self.status()
        goals = unit.all(Goal)
        return {
            "key": self._core.key,
            "mode": state.mode,
            "sleep_phase": state.sleep_phase,
            "model": self.model_name(),
            "embedder": self.embedder_name(),
            "token_usage": status["token_usage"],
            "token_advisory": status["token_advisory"],
            "session_metrics": status["session_metrics"],
            "night_backlog": status["night_backlog"],
            "tool_use_health": status["tool_use_health"],
            "counts": {
                "goals": len(goals),
                "active_goals": sum(1 for g in goals if g.status == "active"),
                "projects": len(ProjectDesk(unit, self._core.clock, self._core.settings).all()),
                "journal_entries": len(unit.all(JournalEntry)),
                "memories": self.memory.count(),
                "entities": len(unit.all(EntityProfile)),
                "open_events": len(self.open_events()),
                "pending_approvals": len(Approvals.pending(unit)),
            },
        }

    # -- events and approvals ------------------------------------------------------------
    def open_events(self) -> list[Event]:
        """Events not yet processed, most urgent first."""
        return self._core.queue.open()

    def event(self, event_id: str) -> Event | None:
        """An event by id, with its status and reply."""
        return self._core.queue.get(event_id)

    def pending_approvals(self) -> list[Approval]:
        """DANGEROUS tool calls waiting for a decision, oldest first."""
        return Approvals.pending(self._core.read())

    def approval(self, approval_id: str) -> Approval | None:
        """An approval by id, pending or decided."""
        return self._core.read().get(Approval, approval_id)

    # -- workspace -----------------------------------------------------------------------
    def goals(self) -> GoalBook:
        """The goal tree as a read-only book (``all()``, ``get()``, ``tree()``...)."""
        return GoalBook(self._core.read(), self._core.clock, self._core.settings)

    def goal_tree(self) -> dict[str, Any]:
        """The goal tree: roots with nested ``subtasks``, each with progress and status."""
        goals = {g.id: g for g in self.goals().all()}

        def node(goal: Goal) -> dict[str, Any]:
            spec = goal.to_spec()
            spec["subtasks"] = [node(goals[i]) for i in goal.subtask_ids if i in goals]
            return spec

        roots = [node(g) for g in goals.values() if g.parent_id is None or g.parent_id not in goals]
        counts = {s: sum(1 for g in goals.values() if g.status == s) for s in _GOAL_STATUSES}
        return {"success": True, "goals": roots, "counts": counts, "total": len(goals)}

    def projects(self) -> ProjectDesk:
        """The projects as a read-only desk (``all()``, ``active_key()``...)."""
        return ProjectDesk(self._core.read(), self._core.clock, self._core.settings)

    def projects_view(self) -> dict[str, Any]:
        """Every project, the active one named."""
        desk = self.projects()
        return {
            "success": True,
            "active": desk.active_key(),
            "projects": [p.model_dump(mode="json") for p in desk.all()],
        }

    def session_memory(self) -> SessionMemory:
        """Key facts, learned patterns and completed tasks."""
        return self._core.read().doc(SessionMemory)

    # -- journal -------------------------------------------------------------------------
    def journal_entries(self, where: JournalFilter | None = None) -> list[JournalEntry]:
        """Journal entries matching ``where`` (all by default), newest first."""
        unit = self._core.read()
        if where is None:
            return sorted(unit.all(JournalEntry), key=lambda e: e.id, reverse=True)
        return filter_entries(unit, self._core.clock.now(), where)

    def journal_page(
        self,
        where: JournalFilter,
        *,
        query: str = "",
        min_importance: int = 1,
        offset: int = 0,
        limit: int = 20,
    ) -> dict[str, Any]:
        """A page of journal entries, newest first, with the reflection state."""
        unit = self._core.read()
        entries = filter_entries(unit, self._core.clock.now(), where)
        needle = query.strip().casefold()
        if needle:
            entries = [e for e in entries if needle in e.content.casefold()]
        entries = [e for e in entries if e.importance >= min_importance]
        page = entries[offset : offset + limit]
        return {
            "success": True,
            "total": len(entries),
            "offset": offset,
            "limit": limit,
            "entries": [{**e.to_spec(), "is_synthesis": e.is_synthesis} for e in page],
            "reflection": unit.doc(ReflectionState).to_spec(),
            "max_entries": unit.doc(JournalMeta).max_entries,
        }

    async def search_journal(
        self, query: str, where: JournalFilter, *, limit: int = 10, semantic: bool = True
    ) -> JournalSearch:
        """What the ``search_journal`` tool finds, without counting a tool call.

        By meaning when an embedder is configured and ``semantic`` is on (entries below
        ``journal_min_similarity`` are no match), else a case-insensitive text match.
        """
        core = self._core
        meaning = None
        if core.embedder is not None:
            meaning = SemanticJournal(
                core.embedder, core.journal_index, core.settings.journal_min_similarity
            )
        return await run_journal_search(
            core.read(),
            core.clock.now(),
            query,
            where,
            limit=limit,
            semantic=semantic,
            meaning=meaning,
        )

    def reflection_state(self) -> ReflectionState:
        """When reflection last ran and how much importance has accrued since."""
        return self._core.read().doc(ReflectionState)

    # -- memory --------------------------------------------------------------------------
    def memory_listing(
        self, *, offset: int = 0, limit: int = 20, min_trust: float = 0.0, tags: Sequence[str] = ()
    ) -> MemoryListing:
        """Semantic memories newest first (a page, and how many match in all)."""
        return self.memory.listing(offset=offset, limit=limit, min_trust=min_trust, tags=tags)

    def memory_page(
        self, *, offset: int = 0, limit: int = 20, min_trust: float = 0.0, tags: Sequence[str] = ()
    ) -> dict[str, Any]:
        """Semantic memories, newest first, without their vectors (the HTTP shape)."""
        return self.memory.page(offset=offset, limit=limit, min_trust=min_trust, tags=tags)

    async def search_memories(self, args: Mapping[str, Any]) -> ToolOutcome:
        """What the ``recall_memories`` tool returns for ``args``, without storing anything."""
        return await self._executor.runner.run(
            self._core.read(),
            "recall_memories",
            dict(args),
            lambda u: self._core.tool_context(u, LoopSnapshot()),
        )

    def memory_graph(self) -> dict[str, Any]:
        """The A-MEM link graph: memories as nodes, links with their scores as edges."""
        return self.memory.graph()

    # -- entities and working memory -----------------------------------------------------
    def entity_book(self) -> EntityBook:
        """The entity profiles as a read-only book (``all()``, ``get()``...)."""
        core = self._core
        return EntityBook(core.read(), core.clock, core.settings, core.guard)

    def entities(self) -> list[EntityProfile]:
        """Every entity profile, by first contact."""
        return self.entity_book().all()

    def entity(self, entity_id: str) -> EntityProfile | None:
        """One entity profile, or None."""
        return self.entity_book().get(entity_id)

    def entities_view(self) -> dict[str, Any]:
        """Every entity profile, most recently seen first."""
        profiles = sorted(self.entities(), key=lambda p: (p.last_seen, p.entity_id), reverse=True)
        return {"success": True, "entities": [p.model_dump(mode="json") for p in profiles]}

    def working_memory(self) -> WorkingMemory:
        """The active conversations, by entity."""
        return self._core.read().doc(WorkingMemory)

    # -- history -------------------------------------------------------------------------
    def history(self, *, offset: int = 0, limit: int = 20) -> HistoryPage:
        """Recorded edits, deletions and forgetting, newest first (docs/manage.md)."""
        return history_page(self._core.store, self._core.info.id, offset=offset, limit=limit)

    # -- recall --------------------------------------------------------------------------
    def semantic_memory(self) -> SemanticMemory:
        """Semantic memory as the ``recall_memories`` tool reads it (for evaluation).

        Its reads see the committed state at this call; nothing it returns is stored.
        """
        core = self._core
        return SemanticMemory(
            core.read(), core.clock, core.settings, core.embedder, core.memory_index
        )
