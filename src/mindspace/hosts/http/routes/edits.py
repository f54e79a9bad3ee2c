"""Edit, delete and forget, and the history of every such change (docs/manage.md).

Each change runs through ``assistant.edits`` in one transaction and is recorded in the
history with the caller as a ``user`` actor named by the ``actor`` query parameter
(``http`` by default). Errors have the API's error shape (docs/http.md).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query
from pydantic import BaseModel, Field

from mindspace.engine import Actor, memory_view
from mindspace.hosts.http.auth import KeyDep
from mindspace.hosts.http.contract import Limit, Offset, Page
from mindspace.hosts.http.schemas import HubDep, StrictBody

__all__ = ["UserDep", "router"]


router = APIRouter(prefix="/v1/assistants/{key}", tags=["edits"])

ActorName = Annotated[
    str,
    Query(
        min_length=1,
        max_length=128,
        description="Who makes the change, as the history records it (a user).",
    ),
]
MemoryId = Annotated[str, Path(min_length=1, max_length=40, description="The memory's id.")]
EntryId = Annotated[int, Path(ge=1, description="The journal entry's id.")]
GoalId = Annotated[str, Path(min_length=1, max_length=64, description="The goal's id.")]
EntityName = Annotated[str, Path(min_length=1, max_length=128, description="The entity's id.")]
Tag = Annotated[str, Field(min_length=1, max_length=64)]


# -- request bodies ----------------------------------------------------------------------
class MemoryPatch(StrictBody):
    """What to change in a memory (fields left out stay as they are)."""

    content: str | None = Field(default=None, min_length=1, max_length=100_000)
    tags: list[Tag] | None = Field(default=None, max_length=20)
    importance: int | None = Field(default=None, ge=1, le=10)
    source_trust: float | None = Field(default=None, ge=0, le=1)


class JournalPatch(StrictBody):
    """What to change in a journal entry (fields left out stay as they are)."""

    content: str | None = Field(default=None, min_length=1, max_length=100_000)
    tags: list[Tag] | None = Field(default=None, max_length=20)
    importance: int | None = Field(default=None, ge=1, le=10)


class GoalPatch(StrictBody):
    """What to change in a goal (fields left out stay as they are)."""

    description: str | None = Field(default=None, min_length=1, max_length=10_000)
    priority: Literal["high", "medium", "low"] | None = None
    status: Literal["active", "completed", "abandoned"] | None = None
    progress: float | None = Field(default=None, ge=0, le=100)


class EntityPatch(StrictBody):
    """Attributes to set (a null value removes one) and observations to drop by index."""

    attributes: dict[str, str | None] = Field(default_factory=dict, max_length=50)
    remove_observations: list[Annotated[int, Field(ge=0)]] = Field(
        default_factory=list, max_length=1_000
    )


# -- responses ---------------------------------------------------------------------------
class EditedOut(BaseModel):
    """The record as it is after the change."""

    success: Literal[True] = True
    kind: str = Field(description="memory, journal_entry, goal or entity.")
    id: str
    record: dict[str, Any]


class DeletedOut(BaseModel):
    """What was deleted (a goal takes its subtasks along)."""

    success: Literal[True] = True
    kind: str
    ids: list[str]


class ForgetCounts(BaseModel):
    """How much goes, per tier."""

    profile: int
    observations: int
    working_memory: int
    messages: int
    memories: int
    journal_entries: int
    journal_vectors: int
    memory_links: int
    session_facts: int
    events: int


class ForgetOut(BaseModel):
    """What forgetting the entity removed (or, in a dry run, would remove)."""

    success: Literal[True] = True
    entity: str
    dry_run: bool
    counts: ForgetCounts
    redacted: dict[str, int] = Field(
        description="Other places copies of its words were blanked: records per kind or document."
    )
    memory_ids: list[str]
    journal_entry_ids: list[int]
    message_ids: list[str]


class HistoryEntryOut(BaseModel):
    """One recorded change."""

    id: str
    at: str
    actor_kind: Literal["model", "user", "host"]
    actor: str
    action: Literal["create", "update", "delete", "forget"]
    target_kind: str
    target_key: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    via: str | None = Field(description="tool:<name> for a tool call; null for a direct edit.")


class HistoryOut(Page):
    """A page of the history, newest first."""

    entries: list[HistoryEntryOut]


def _user(actor: ActorName = "http") -> Actor:
    # the caller, as the history records it: a user named by the `actor` query parameter
    return Actor("user", actor)


UserDep = Annotated[Actor, Depends(_user)]


# -- memories ----------------------------------------------------------------------------
@router.patch("/memories/{memory_id}", summary="Edit a memory", response_model=EditedOut)
async def edit_memory(
    key: KeyDep, memory_id: MemoryId, body: MemoryPatch, hub: HubDep, user: UserDep
) -> EditedOut:
    """Change the text (embedded again), tags, importance or trust of a memory."""
    memory = await hub.get(key).edits.update_memory(
        memory_id, user, **body.model_dump(exclude_none=True)
    )
    return EditedOut(kind="memory", id=memory.id, record=memory_view(memory))


@router.delete("/memories/{memory_id}", summary="Delete a memory", response_model=DeletedOut)
async def delete_memory(key: KeyDep, memory_id: MemoryId, hub: HubDep, user: UserDep) -> DeletedOut:
    """The memory goes from pages and recall now; links to it go at night."""
    memory = await hub.get(key).edits.delete_memory(memory_id, user)
    return DeletedOut(kind="memory", ids=[memory.id])


# -- journal -----------------------------------------------------------------------------
@router.patch("/journal/{entry_id}", summary="Edit a journal entry", response_model=EditedOut)
async def edit_journal_entry(
    key: KeyDep, entry_id: EntryId, body: JournalPatch, hub: HubDep, user: UserDep
) -> EditedOut:
    """Change the text, tags or importance of an entry (importance_method becomes manual)."""
    entry = await hub.get(key).edits.update_journal_entry(
        entry_id, user, **body.model_dump(exclude_none=True)
    )
    return EditedOut(kind="journal_entry", id=str(entry.id), record=entry.to_spec())


@router.delete("/journal/{entry_id}", summary="Delete a journal entry", response_model=DeletedOut)
async def delete_journal_entry(
    key: KeyDep, entry_id: EntryId, hub: HubDep, user: UserDep
) -> DeletedOut:
    """The entry and its stored vector go."""
    entry = await hub.get(key).edits.delete_journal_entry(entry_id, user)
    return DeletedOut(kind="journal_entry", ids=[str(entry.id)])


# -- goals -------------------------------------------------------------------------------
@router.patch("/goals/{goal_id}", summary="Edit a goal", response_model=EditedOut)
async def edit_goal(
    key: KeyDep, goal_id: GoalId, body: GoalPatch, hub: HubDep, user: UserDep
) -> EditedOut:
    """Change a goal's description, priority, status or progress."""
    goal = await hub.get(key).edits.update_goal(goal_id, user, **body.model_dump(exclude_none=True))
    return EditedOut(kind="goal", id=goal.id, record=goal.to_spec())


@router.delete(
    "/goals/{goal_id}", summary="Delete a goal and its subtasks", response_model=DeletedOut
)
async def delete_goal(key: KeyDep, goal_id: GoalId, hub: HubDep, user: UserDep) -> DeletedOut:
    """The goal, its subtasks, and its place in its parent's subtasks go."""
    goals = await hub.get(key).edits.delete_goal(goal_id, user)
    return DeletedOut(kind="goal", ids=[g.id for g in goals])


# -- entities ----------------------------------------------------------------------------
@router.patch(
    "/entities/{entity_id}",
    summary="Edit an entity's attributes and observations",
    response_model=EditedOut,
)
async def edit_entity(
    key: KeyDep, entity_id: EntityName, body: EntityPatch, hub: HubDep, user: UserDep
) -> EditedOut:
    """Set or remove attributes and drop observations (indexes from 0)."""
    profile = await hub.get(key).edits.update_entity(
        entity_id,
        user,
        attributes=body.attributes,
        remove_observations=body.remove_observations,
    )
    return EditedOut(kind="entity", id=profile.entity_id, record=profile.model_dump(mode="json"))


@router.post(
    "/entities/{entity_id}/forget",
    summary="Forget everything about an entity",
    response_model=ForgetOut,
)
async def forget_entity(
    key: KeyDep,
    entity_id: EntityName,
    hub: HubDep,
    user: UserDep,
    dry_run: Annotated[bool, Query(description="Only list what would go.")] = False,
) -> ForgetOut:
    """Profile, working memory, conversation, memories and journal entries from the entity,
    their links and vectors go in one transaction; session facts naming it go and copies of
    its words are blanked everywhere else (history, documents, events, this server's tick
    log); ``dry_run`` lists them and writes nothing.
    """
    report = await hub.get(key).edits.forget(entity_id, user, dry_run=dry_run)
    shown = report.to_dict()
    if not dry_run and report.redactor is not None:
        # The server's own copies: prompts and replies of recent ticks.
        shown["redacted"]["tick_log"] = hub.ticks.forget(
            key, report.redactor, set(report.own_events)
        )
    return ForgetOut.model_validate(shown)


# -- history -----------------------------------------------------------------------------
@router.get("/history", summary="Who changed what, newest first", response_model=HistoryOut)
async def list_history(
    key: KeyDep,
    hub: HubDep,
    offset: Offset = 0,
    limit: Limit = 20,
) -> HistoryOut:
    """Edits, deletions and forgetting with the actor, the time, before and after."""
    page = hub.get(key).views.history(offset=offset, limit=limit)
    entries = [HistoryEntryOut.model_validate(e.model_dump(mode="json")) for e in page.entries]
    return HistoryOut(total=page.total, offset=offset, limit=limit, entries=entries)
