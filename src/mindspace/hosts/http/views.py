"""Read-only views of an assistant's state as JSON, through the engine's public API.

Routes call these; nothing here touches the database directly, writes anything or counts
a tool call.
"""

from __future__ import annotations

from typing import Any

from mindspace.engine.assistant import Assistant
from mindspace.engine.modes import OperatingMode, SleepSchedule
from mindspace.engine.records import Event
from mindspace.journal.records import JournalEntry, JournalMeta, ReflectionState
from mindspace.journal.search import JournalFilter, filter_entries
from mindspace.memory.entities import EntityBook
from mindspace.memory.records import EntityProfile, Memory, MemoryLinks, WorkingMemory
from mindspace.workspace.records import Goal

__all__ = [
    "assistant_summary",
    "entity_view",
    "event_view",
    "goal_tree",
    "journal_page",
    "memory_graph",
    "memory_list",
    "mode_view",
    "projects_view",
    "session_memory_view",
    "working_memory_view",
]

MAX_GRAPH_NODES = 500


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


def mode_view(assistant: Assistant) -> dict[str, Any]:
    """The operating mode, sleep phase, tick rate and sleep schedule."""
    unit = assistant.read()
    state = unit.doc(OperatingMode)
    return {
        **state.model_dump(mode="json"),
        "tick_rate": assistant.tick_rate(),
        "schedule": unit.doc(SleepSchedule).model_dump(mode="json"),
    }


def assistant_summary(assistant: Assistant) -> dict[str, Any]:
    """Key, mode, token usage and how much each part of the workspace holds."""
    unit = assistant.read()
    state = unit.doc(OperatingMode)
    status = assistant.status()
    goals = unit.all(Goal)
    return {
        "key": assistant.key,
        "mode": state.mode,
        "sleep_phase": state.sleep_phase,
        "model": getattr(assistant.llm, "model", type(assistant.llm).__name__),
        "embedder": assistant.embedder.name if assistant.embedder else None,
        "token_usage": status["token_usage"],
        "token_advisory": status["token_advisory"],
        "session_metrics": status["session_metrics"],
        "tool_use_health": status["tool_use_health"],
        "counts": {
            "goals": len(goals),
            "active_goals": sum(1 for g in goals if g.status == "active"),
            "projects": len(assistant.projects().all()),
            "journal_entries": len(unit.all(JournalEntry)),
            "memories": len(unit.all(Memory)),
            "entities": len(unit.all(EntityProfile)),
            "open_events": len(assistant.open_events()),
            "pending_approvals": len(assistant.pending_approvals()),
        },
    }


def goal_tree(assistant: Assistant) -> dict[str, Any]:
    """The goal tree: roots with nested ``subtasks``, each with progress and status."""
    book = assistant.goals()
    goals = {g.id: g for g in book.all()}

    def node(goal: Goal) -> dict[str, Any]:
        spec = goal.to_spec()
        spec["subtasks"] = [node(goals[i]) for i in goal.subtask_ids if i in goals]
        return spec

    roots = [node(g) for g in goals.values() if g.parent_id is None or g.parent_id not in goals]
    counts = {s: sum(1 for g in goals.values() if g.status == s) for s in _GOAL_STATUSES}
    return {"success": True, "goals": roots, "counts": counts, "total": len(goals)}


_GOAL_STATUSES = ("active", "completed", "abandoned")


def projects_view(assistant: Assistant) -> dict[str, Any]:
    """Every project, the active one named."""
    desk = assistant.projects()
    return {
        "success": True,
        "active": desk.active_key(),
        "projects": [p.model_dump(mode="json") for p in desk.all()],
    }


def session_memory_view(assistant: Assistant) -> dict[str, Any]:
    """Key facts, learned patterns and completed tasks."""
    return {"success": True, **assistant.session_memory().model_dump(mode="json")}


def journal_page(
    assistant: Assistant,
    where: JournalFilter,
    *,
    query: str = "",
    min_importance: int = 1,
    offset: int = 0,
    limit: int = 20,
) -> dict[str, Any]:
    """A page of journal entries, newest first, with the reflection state."""
    unit = assistant.read()
    entries = filter_entries(unit, assistant.clock.now(), where)
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


def memory_list(
    assistant: Assistant, *, offset: int, limit: int, min_trust: float, tags: list[str]
) -> dict[str, Any]:
    """Semantic memories, newest first, without their vectors."""
    wanted = {t.casefold() for t in tags}
    memories = [
        m
        for m in assistant.read().all(Memory)
        if m.source_trust >= min_trust and wanted <= {t.casefold() for t in m.tags}
    ]
    memories.sort(key=lambda m: (m.created_at, m.id), reverse=True)
    return {
        "success": True,
        "total": len(memories),
        "offset": offset,
        "limit": limit,
        "memories": [
            {"id": m.id, "content": m.content, "metadata": m.metadata()}
            for m in memories[offset : offset + limit]
        ],
    }


def memory_graph(assistant: Assistant) -> dict[str, Any]:
    """The A-MEM link graph: memories as nodes, links with their scores as edges."""
    unit = assistant.read()
    memories = {m.id: m for m in unit.all(Memory)}
    links = unit.all(MemoryLinks)
    edges = [
        {"source": x.memory_id, "target": link.id, "score": link.score}
        for x in links
        for link in x.linked_to
        if x.memory_id in memories and link.id in memories
    ]
    linked = {e["source"] for e in edges} | {e["target"] for e in edges}
    ordered = sorted(memories.values(), key=lambda m: (m.id not in linked, m.created_at))
    shown = ordered[:MAX_GRAPH_NODES]
    ids = {m.id for m in shown}
    return {
        "success": True,
        "nodes": [
            {
                "id": m.id,
                "content": m.content,
                "importance": m.importance,
                "source_entity": m.source_entity,
                "tags": list(m.tags),
                "linked": m.id in linked,
            }
            for m in shown
        ],
        "edges": [e for e in edges if e["source"] in ids and e["target"] in ids],
        "processed": len(links),
        "total_memories": len(memories),
    }


def entity_view(profile: EntityProfile) -> dict[str, Any]:
    """An entity profile with its relationship state."""
    return profile.model_dump(mode="json")


def entities_view(assistant: Assistant) -> dict[str, Any]:
    """Every entity profile, most recently seen first."""
    book = EntityBook(assistant.read(), assistant.clock, assistant.settings, assistant.guard)
    profiles = sorted(book.all(), key=lambda p: (p.last_seen, p.entity_id), reverse=True)
    return {"success": True, "entities": [entity_view(p) for p in profiles]}


def working_memory_view(assistant: Assistant) -> dict[str, Any]:
    """The active conversations, by entity."""
    memory = assistant.read().doc(WorkingMemory)
    return {"success": True, **memory.model_dump(mode="json")}
