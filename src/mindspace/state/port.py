"""The Store ports: where an assistant's records are kept.

A store persists *records* (rows of a kind, keyed within one assistant) and nothing
else; it knows no domain rules. The core reaches it only through these two protocols,
so the SQL implementation in ``mindspace.storage`` can be swapped for another.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "AssistantDirectory",
    "AssistantInfo",
    "Change",
    "EventInbox",
    "RecordStore",
    "Scrubbing",
    "Store",
    "StoredRecord",
    "TickStart",
]

StoredRecord = dict[str, Any]
"""One record as the store sees it: JSON-compatible values keyed by field name."""


@dataclass(frozen=True)
class AssistantInfo:
    """An assistant known to the store."""

    id: int
    key: str
    created_at: str
    revision: int


@dataclass(frozen=True)
class Change:
    """One write: put ``record`` under (``kind``, ``key``), or delete it when ``record`` is None.

    ``new`` is a promise that no row exists under the key yet (so the store may insert
    without looking); when False the store must handle both cases.
    """

    kind: str
    key: str
    record: StoredRecord | None
    new: bool = False


@runtime_checkable
class RecordStore(Protocol):
    """Loads and commits the records of one assistant."""

    def load(self, assistant_id: int, kind: str) -> list[StoredRecord]:
        """All records of ``kind`` for the assistant, in insertion order."""
        ...

    def load_keys(self, assistant_id: int, kind: str, keys: Sequence[str]) -> list[StoredRecord]:
        """The records of ``kind`` stored under ``keys`` (absent keys are left out)."""
        ...

    def scan(
        self, assistant_id: int, kind: str, fields: Sequence[str], *, batch: int = 2000
    ) -> Iterator[StoredRecord]:
        """Some ``fields`` of every record of ``kind``, in insertion order, streamed.

        For building a derived index without holding whole records: the rows are
        fetched ``batch`` at a time.
        """
        ...

    def commit(self, assistant_id: int, expected_revision: int, changes: Sequence[Change]) -> int:
        """Apply ``changes`` in one transaction and return the new revision.

        Raises:
            ConcurrencyError: the assistant's revision is no longer ``expected_revision``.
        """
        ...

    def revision(self, assistant_id: int) -> int:
        """The assistant's current revision (bumped by every commit)."""
        ...

    def changes_since(self, assistant_id: int, revision: int) -> list[tuple[int, str, str]] | None:
        """What every commit after ``revision`` wrote: (revision, kind, key), in order.

        The change feed lets another process's cache reload only the keys that changed.
        A key deleted and one replaced look alike here; reading the key tells which.
        The feed is kept bounded, so it may no longer reach back to ``revision``: then
        the answer is None and the caller must reload everything.
        """
        ...

    def count(self, assistant_id: int, kind: str) -> int:
        """How many records of ``kind`` the assistant has (without loading them)."""
        ...

    def page(
        self,
        assistant_id: int,
        kind: str,
        *,
        offset: int,
        limit: int,
        newest_first: bool = True,
    ) -> list[StoredRecord]:
        """At most ``limit`` records of ``kind`` after skipping ``offset``.

        Ordered by insertion, newest first unless ``newest_first`` is False: what a view
        listing a large kind shows one page at a time.
        """
        ...

    def missing(
        self, assistant_id: int, kind: str, other_kind: str, *, limit: int
    ) -> tuple[list[str], int]:
        """Keys of ``kind`` records with no ``other_kind`` record under the same key.

        Returns at most ``limit`` such keys, oldest first, and how many there are in all
        (e.g. the memories the night has not linked yet: ``memory`` without
        ``memory_links``), found by the store without loading either kind.
        """
        ...


@runtime_checkable
class AssistantDirectory(Protocol):
    """Finds and creates assistants by key."""

    def open_assistant(self, key: str, *, create: bool) -> AssistantInfo:
        """The assistant stored under ``key``; created when absent and ``create`` is set.

        Raises:
            AssistantNotFoundError: absent and ``create`` is False.
        """
        ...

    def list_assistants(self) -> list[AssistantInfo]:
        """Every assistant in the store, by key."""
        ...


@runtime_checkable
class EventInbox(Protocol):
    """Host events for an assistant, written without bumping its revision.

    Hosts enqueue while a tick runs; if enqueueing bumped the revision, every running
    tick would lose its commit. A tick marks its event done through an ordinary
    ``Change`` of kind ``"event"`` in its own commit.
    """

    def enqueue(self, assistant_id: int, event: StoredRecord) -> None:
        """Store a new event."""
        ...

    def open_events(self, assistant_id: int, limit: int) -> list[StoredRecord]:
        """Events still ``pending`` or ``processing``, oldest first."""
        ...

    def find_event(self, assistant_id: int, event_id: str) -> StoredRecord | None:
        """One event by id, whatever its status."""
        ...

    def update_event(self, assistant_id: int, event_id: str, fields: StoredRecord) -> None:
        """Change some fields of one event (status, attempts, error)."""
        ...


@runtime_checkable
class Scrubbing(Protocol):
    """A store that can drop old copies of deleted rows (an optional capability).

    SQLite keeps page images of earlier transactions in its write-ahead log until a
    checkpoint; forgetting calls :meth:`scrub` so words it removed are not left there.
    """

    def scrub(self) -> None:
        """Remove what deleted rows left behind in the store's files, where it can."""
        ...


@runtime_checkable
class TickStart(Protocol):
    """A store that reads what a tick starts with in one round trip (an optional capability).

    Every tick first asks for the assistant's revision (to catch up with other
    processes' commits) and its open events; on a networked database each read is a
    round trip that blocks the worker's event loop.
    """

    def revision_and_open_events(
        self, assistant_id: int, limit: int
    ) -> tuple[int, list[StoredRecord]]:
        """The assistant's revision and its events still ``pending`` or ``processing``
        (oldest first, at most ``limit``), read together.

        Raises:
            AssistantNotFoundError: the assistant no longer exists.
        """
        ...


@runtime_checkable
class Store(RecordStore, AssistantDirectory, EventInbox, Protocol):
    """A complete store: records, the directory of assistants and the event inbox.

    Whoever opened a store closes it: a sync caller (the CLI, a script) with
    :meth:`close`, code on an event loop (a server's shutdown) with ``await``
    :meth:`aclose`, which must not block the loop. After either, the store is not used
    again; closing twice is harmless.
    """

    def close(self) -> None:
        """Release the store's connections (blocking: for sync callers)."""
        ...

    async def aclose(self) -> None:
        """Release the store's connections without blocking the event loop."""
        ...
