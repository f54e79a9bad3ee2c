"""Read-only state: goals, projects, session memory, journal, memories, entities, status."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from mindspace.hosts.http.auth import KeyDep
from mindspace.hosts.http.contract import Limit, Offset, page_of
from mindspace.hosts.http.errors import found, http_tool_result
from mindspace.hosts.http.models import (
    EntityList,
    EntityOut,
    GoalTree,
    JournalPage,
    MemoryGraph,
    MemoryPage,
    ModeOut,
    ProjectList,
    SessionMemoryOut,
    StatusOut,
    WorkingMemoryOut,
)
from mindspace.hosts.http.responses import SafeJSONResponse as JSONResponse
from mindspace.hosts.http.schemas import HubDep
from mindspace.journal.search import JournalFilter

__all__ = ["router"]

router = APIRouter(prefix="/v1/assistants/{key}", tags=["state"])

PageLimit = Annotated[int, Query(ge=1, le=200, description="Most entries returned.")]
Tags = Annotated[
    list[str] | None,
    Query(max_length=20, description="Only items with every one of these tags (repeat)."),
]


@router.get("/goals", summary="The goal tree with progress", response_model=GoalTree)
async def get_goal_tree(key: KeyDep, hub: HubDep) -> dict[str, Any]:
    """Root goals with nested ``subtasks``; parents carry the rolled-up progress."""
    return hub.get(key).views.goal_tree()


@router.get("/projects", summary="Projects, the active one named", response_model=ProjectList)
async def list_projects(
    key: KeyDep, hub: HubDep, offset: Offset = 0, limit: Limit = 1000
) -> dict[str, Any]:
    """Every project with its status and context; ``active`` is the loaded one."""
    view = hub.get(key).views.projects_view()
    listed, paging = page_of(view["projects"], offset, limit)
    return {**view, **paging, "projects": listed}


@router.get(
    "/session-memory",
    summary="Key facts, learned patterns, completed tasks",
    response_model=SessionMemoryOut,
)
async def get_session_memory(key: KeyDep, hub: HubDep) -> dict[str, Any]:
    """The session memory."""
    memory = hub.get(key).views.session_memory()
    return {"success": True, **memory.model_dump(mode="json")}


@router.get(
    "/journal",
    summary="Journal entries, newest first, filtered and paged",
    response_model=JournalPage,
)
async def list_journal_entries(
    key: KeyDep,
    hub: HubDep,
    tag: Tags = None,
    days: Annotated[int | None, Query(ge=1, le=36_500, description="Only the last N days.")] = None,
    project: Annotated[
        str | None, Query(min_length=1, max_length=64, description="Only this project's.")
    ] = None,
    query: Annotated[str, Query(max_length=500, description="Text the entry contains.")] = "",
    min_importance: Annotated[int, Query(ge=1, le=10)] = 1,
    offset: Offset = 0,
    limit: PageLimit = 20,
) -> dict[str, Any]:
    """Entries with importance, how it was scored, trust, tags and consolidation; and the
    reflection state (importance gathered towards the next reflection).
    """
    where = JournalFilter(tags=tuple(tag or ()), days_back=days, project=project)
    return hub.get(key).views.journal_page(
        where,
        query=query,
        min_importance=min_importance,
        offset=offset,
        limit=limit,
    )


@router.get(
    "/memories",
    summary="Semantic memories: newest first, or ranked for a query",
    response_model=MemoryPage,
)
async def list_memories(
    key: KeyDep,
    hub: HubDep,
    query: Annotated[
        str, Query(max_length=500, description="Rank by this (as recall_memories does).")
    ] = "",
    tag: Tags = None,
    min_trust: Annotated[float, Query(ge=0, le=1)] = 0.0,
    offset: Offset = 0,
    limit: PageLimit = 20,
) -> JSONResponse:
    """Without ``query``, a page of memories newest first; with it, the ``recall_memories``
    ranking (dense and BM25, fused), best first, paged like the listing (``total`` then
    counts the ranked matches, at most 100). Nothing is written or counted.
    """
    assistant = hub.get(key)
    if not query.strip():
        listed = assistant.views.memory_page(
            offset=offset, limit=limit, min_trust=min_trust, tags=list(tag or ())
        )
        return JSONResponse(listed)
    args = {
        "query": query,
        "limit": 100,  # rank the first 100, then page them, so `total` is stable
        "min_source_trust": min_trust,
        "tags": list(tag or ()),
    }
    outcome = await assistant.views.search_memories(args)
    result = http_tool_result(outcome.result, outcome.http_status)
    if outcome.http_status < 400:
        ranked, paging = page_of(list(result.get("memories", [])), offset, limit)
        result = {**result, **paging, "memories": ranked}
    return JSONResponse({**result, "query": query}, status_code=outcome.http_status)


@router.get("/memory-links", summary="The A-MEM link graph", response_model=MemoryGraph)
async def get_memory_graph(key: KeyDep, hub: HubDep) -> dict[str, Any]:
    """Memories as nodes and their A-MEM links (similarity scores) as edges."""
    return hub.get(key).views.memory_graph()


@router.get(
    "/entities", summary="Entity profiles with relationship state", response_model=EntityList
)
async def list_entities(
    key: KeyDep, hub: HubDep, offset: Offset = 0, limit: Limit = 1000
) -> dict[str, Any]:
    """Every profile, most recently seen first: type, attributes, observations,
    relationship, first and last seen.
    """
    view = hub.get(key).views.entities_view()
    listed, paging = page_of(view["entities"], offset, limit)
    return {**view, **paging, "entities": listed}


@router.get("/entities/{entity_id}", summary="One entity profile", response_model=EntityOut)
async def get_entity(
    key: KeyDep,
    entity_id: Annotated[str, Path(min_length=1, max_length=128)],
    hub: HubDep,
) -> dict[str, Any]:
    """The profile of ``entity_id``."""
    profile = found(
        hub.get(key).views.entity(entity_id),
        f"No entity {entity_id!r} is known to {key!r}",
        "List the entities with GET .../entities.",
    )
    return {"success": True, "entity": profile.model_dump(mode="json")}


@router.get("/working-memory", summary="Active conversations", response_model=WorkingMemoryOut)
async def get_working_memory(key: KeyDep, hub: HubDep) -> dict[str, Any]:
    """Topic, start, the last messages and pending actions of each active conversation."""
    memory = hub.get(key).views.working_memory()
    return {"success": True, **memory.model_dump(mode="json")}


@router.get(
    "/status",
    summary="Token usage, advisory level, loop and session metrics",
    response_model=StatusOut,
)
async def get_status(key: KeyDep, hub: HubDep) -> dict[str, Any]:
    """What ``get_system_status`` reports, without counting as a tool call."""
    return hub.get(key).views.status()


@router.get(
    "/mode", summary="Operating mode, sleep phase, tick rate and schedule", response_model=ModeOut
)
async def get_mode(key: KeyDep, hub: HubDep) -> dict[str, Any]:
    """Awake or asleep; asleep, the phase (compacting, dreaming) and depth."""
    return {"success": True, **hub.get(key).views.mode_view()}
