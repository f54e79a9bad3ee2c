"""The history of edits: who changed what in an assistant's mind, when, before and after.

Every edit, deletion and forgetting done through :class:`~mindspace.engine.edits.Edits`
appends one :class:`HistoryEntry` in the same unit of work as the change itself, so the
history and the state never disagree. Entries are a lazy kind (an assistant's history
only grows): they are written, paged and counted, never loaded whole.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from mindspace.clock import Clock, format_time
from mindspace.errors import InvalidInputError
from mindspace.state.models import Record, record_model
from mindspace.state.port import RecordStore
from mindspace.state.unit import Unit

__all__ = [
    "HISTORY_ACTIONS",
    "Actor",
    "ActorKind",
    "HistoryAction",
    "HistoryEntry",
    "HistoryPage",
    "history_page",
    "record_change",
    "record_tool_writes",
    "view_of",
]

ActorKind = Literal["model", "user", "host"]
HistoryAction = Literal["create", "update", "delete", "forget"]
HISTORY_ACTIONS: tuple[HistoryAction, ...] = ("create", "update", "delete", "forget")

TRACKED_KINDS = frozenset({"memory", "journal_entry", "goal", "entity"})
"""The kinds whose writes by tools are recorded (what people edit and forget)."""


@dataclass(frozen=True)
class Actor:
    """Who made a change: the model, a user (an operator, a player) or a host, by name.

    Raises:
        InvalidInputError: a blank name or one longer than 128 characters.
    """

    kind: ActorKind
    name: str

    def __post_init__(self) -> None:
        if not self.name.strip() or len(self.name) > 128:
            raise InvalidInputError(
                f"An actor's name must be 1-128 characters, got {self.name!r}",
                "Say who makes the change, e.g. Actor('user', 'admin').",
            )


class HistoryEntry(Record):
    """One recorded change (kind ``history``), keyed by a random id."""

    kind: ClassVar[str] = "history"
    lazy: ClassVar[bool] = True

    id: str
    at: str
    actor_kind: ActorKind
    actor: str
    action: HistoryAction
    target_kind: str
    """What was changed: ``memory``, ``journal_entry``, ``goal``, ``entity``..."""
    target_key: str
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    via: str | None = None
    """How the change came: ``tool:<name>`` for a tool call, None for a direct edit."""


def record_change(
    unit: Unit,
    clock: Clock,
    actor: Actor,
    action: HistoryAction,
    target_kind: str,
    target_key: str,
    *,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    via: str | None = None,
) -> HistoryEntry:
    """Append a history entry to ``unit`` (committed with the change it describes)."""
    entry = HistoryEntry(
        id=f"h_{uuid.uuid4().hex}",
        at=format_time(clock.now()),
        actor_kind=actor.kind,
        actor=actor.name,
        action=action,
        target_kind=target_kind,
        target_key=target_key,
        before=before,
        after=after,
        via=via,
    )
    unit.put(entry)
    return entry


@dataclass(frozen=True)
class HistoryPage:
    """A page of history, newest first, and how many entries there are in all."""

    total: int
    entries: list[HistoryEntry]


def history_page(store: RecordStore, assistant_id: int, *, offset: int, limit: int) -> HistoryPage:
    """The committed history, newest first (one page and the count, from the store)."""
    rows = store.page(assistant_id, HistoryEntry.kind, offset=offset, limit=limit)
    return HistoryPage(
        total=store.count(assistant_id, HistoryEntry.kind),
        entries=[HistoryEntry.from_stored(row) for row in rows],
    )


def view_of(record: Record) -> dict[str, Any]:
    """A record as history keeps it: JSON, without vectors (they are large and opaque)."""
    return record.model_dump(
        mode="json", exclude={"embedding"} if "embedding" in type(record).model_fields else None
    )


def record_tool_writes(savepoint: Unit, clock: Clock, actor: Actor, tool: str) -> int:
    """Append a history entry to ``savepoint`` for each tracked record ``tool`` wrote.

    ``savepoint`` is the tool call's own unit before it is merged, so its own changes are
    exactly the call's writes; the entries merge (and commit) with them. The record
    before the call is what the enclosing units buffer (an earlier write of the same
    tick) or, for a kind the cache holds whole, the committed one. A lazy kind's
    committed record is not looked up (that would cost a store query per call): it is
    taken from the cache's LRU when the call read it (``store_memory`` reads the memory a
    fact restates or replaces), else ``before`` is None (a new memory). Everything here
    is in memory.

    Returns:
        How many entries were appended.
    """
    parent = savepoint.parent
    appended = 0
    for (kind, key), entry in savepoint.own_changes().items():
        if kind not in TRACKED_KINDS:
            continue
        found, earlier = parent.buffered(kind, key) if parent is not None else (False, None)
        previous = earlier if isinstance(earlier, Record) else None
        if not found:
            model = record_model(kind)
            if model is not None and not model.lazy:
                previous = savepoint.cache.records(model).get(key)
            elif model is not None:
                # A memory the call restated or replaced was read by it: no query here.
                previous = savepoint.cache.cached(model, key)
        after = entry if isinstance(entry, Record) else None
        if previous is None and after is None:
            continue
        action: HistoryAction = (
            "create" if previous is None else "delete" if after is None else "update"
        )
        record_change(
            savepoint,
            clock,
            actor,
            action,
            kind,
            key,
            before=None if previous is None else view_of(previous),
            after=None if after is None else view_of(after),
            via=f"tool:{tool}"[:64],  # the column holds 64 characters
        )
        appended += 1
    return appended
