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
from mindspace.state.models import Record
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
]

ActorKind = Literal["model", "user", "host"]
HistoryAction = Literal["update", "delete", "forget"]
HISTORY_ACTIONS: tuple[HistoryAction, ...] = ("update", "delete", "forget")


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

    def record_key(self) -> str:
        """Keyed by id."""
        return self.id


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
