"""The committed state of one assistant held in this process, and how it is read.

:class:`CommittedState` keeps every loaded kind, the documents, a lazy kind's LRU
(``Record.lazy``), per-topic versions for caches built on top, and the listeners that
keep derived indexes in step. Writing goes through :class:`~mindspace.state.unit.StateCache`
(units of work, commits, the change feed), which extends it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeVar, cast

from mindspace.state.lazy import RecordLRU, not_listable
from mindspace.state.models import DOC_KIND, Document, Record
from mindspace.state.port import RecordStore

__all__ = ["CacheListener", "CommittedState", "Entry", "Slot", "topic_of"]

R = TypeVar("R", bound=Record)
D = TypeVar("D", bound=Document)

Entry = Record | Document | None
"""A buffered or committed value of a slot; None marks a deletion."""
Slot = tuple[str, str]
"""Where a value lives: (kind, key)."""


def topic_of(kind: str, key: str) -> str:
    """The invalidation topic of a write: the kind, or ``doc:<name>`` for documents."""
    return f"{DOC_KIND}:{key}" if kind == DOC_KIND else kind


class CacheListener(Protocol):
    """Keeps something derived (a search index) in step with committed records of a kind."""

    def applied(self, key: str, record: Record | None) -> None:
        """``record`` was committed under ``key`` (None: deleted)."""
        ...

    def reset(self) -> None:
        """The cache was reloaded; drop everything derived."""
        ...


class CommittedState:
    """The committed state of one assistant in this process, loaded lazily per kind.

    What is held and how it is read; :class:`~mindspace.state.unit.StateCache` adds the
    units of work, committing them, and catching up with other processes' commits.

    Args:
        store: Where records are loaded from and committed to.
        assistant_id: The assistant's id in the store.
        revision: The revision the cache starts at.
    """

    def __init__(self, store: RecordStore, assistant_id: int, revision: int) -> None:
        self._store = store
        self.assistant_id = assistant_id
        self.revision = revision
        self._kinds: dict[str, dict[str, Record]] = {}
        self._docs: dict[str, dict[str, Any]] | None = None
        self._doc_models: dict[str, Document] = {}
        self._versions: dict[str, int] = {}
        self._listeners: dict[str, list[CacheListener]] = {}
        self._written: dict[Slot, int] = {}
        self._models: dict[str, type[Record]] = {}
        self._lru: dict[str, RecordLRU] = {}
        # What StateCache.derived made, by the callable that made it (indexes, queues).
        self._derived: dict[Callable[..., Any], Any] = {}
        self.epoch = 0

    @property
    def store(self) -> RecordStore:
        """The store this cache reads from (for queries the cache cannot answer)."""
        return self._store

    def listen(self, kind: str, listener: CacheListener) -> None:
        """Tell ``listener`` about every committed write of ``kind`` from now on."""
        self._listeners.setdefault(kind, []).append(listener)

    # -- reads -------------------------------------------------------------------------
    def records(self, model: type[R]) -> dict[str, R]:
        """Committed records of ``model.kind`` by key, loading them on first use.

        Raises:
            TypeError: ``model`` is a lazy kind, which is never loaded whole.
        """
        if model.lazy:
            raise not_listable(model)
        kind = model.kind
        if kind not in self._kinds:
            self._models[kind] = model
            rows = self._store.load(self.assistant_id, kind)
            loaded = (model.from_stored(row) for row in rows)
            self._kinds[kind] = {record.record_key(): record for record in loaded}
        # One model class is registered per kind, so the records are instances of it.
        return cast("dict[str, R]", self._kinds[kind])

    def cached(self, model: type[R], key: str) -> R | None:
        """The committed record of a lazy kind under ``key`` if it was read already.

        Never queries the store: None when the record is not in the LRU (or absent).
        """
        lru = self._lru.get(model.kind)
        return None if lru is None else cast("R | None", lru.get(key))

    def lookup(self, model: type[R], keys: Iterable[str]) -> dict[str, R]:
        """Committed records of ``model`` under ``keys``, in that order (absent ones left out).

        A lazy kind is read through its LRU and only the keys it misses are loaded; any
        other kind is answered from the whole kind, loaded on first use.
        """
        wanted = list(dict.fromkeys(keys))
        if not model.lazy:
            records = self.records(model)
            return {key: records[key] for key in wanted if key in records}
        kind = model.kind
        self._models[kind] = model
        lru = self._lru.setdefault(kind, RecordLRU())
        known: dict[str, Record | None] = {}
        for key in wanted:
            if key in lru:
                lru.move_to_end(key)
                known[key] = lru[key]
        absent = [key for key in wanted if key not in known]
        if absent:
            loaded = (
                model.from_stored(row)
                for row in self._store.load_keys(self.assistant_id, kind, absent)
            )
            found = {record.record_key(): record for record in loaded}
            for key in absent:
                known[key] = found.get(key)
                lru.remember(key, found.get(key))
        # One model class is used per kind, so the records are instances of it.
        return {key: cast("R", known[key]) for key in wanted if known[key] is not None}

    def document(self, model: type[D]) -> D:
        """The committed document, or its defaults when it was never written."""
        cached = self._doc_models.get(model.name)
        if isinstance(cached, model):
            return cached
        if self._docs is None:
            rows = self._store.load(self.assistant_id, DOC_KIND)
            self._docs = {str(row["name"]): dict(row["value"]) for row in rows}
        value = self._docs.get(model.name)
        doc = model.from_value(value) if value is not None else model()
        self._doc_models[model.name] = doc
        return doc

    def version(self, topic: str) -> tuple[int, int]:
        """A token that changes whenever ``topic`` is written (or the cache is reloaded)."""
        return (self.epoch, self._versions.get(topic, 0))

    def _mark_written(self, kind: str, key: str, revision: int) -> None:
        # A unit begun before ``revision`` that writes the same slot would undo this
        # write: StateCache._check_overlap refuses it.
        self._written[(kind, key)] = max(self._written.get((kind, key), -1), revision)
        topic = topic_of(kind, key)
        self._versions[topic] = self._versions.get(topic, 0) + 1

    def _known_absent(self, kind: str, key: str) -> bool:
        # Only a loaded kind tells for sure that a key has no row (the revision check
        # guarantees nobody else wrote since the load).
        if kind == DOC_KIND:
            return self._docs is not None and key not in self._docs
        model = self._models.get(kind)
        if model is not None and model.lazy:
            return False  # an LRU holds a few keys of a lazy kind, never all of them
        records = self._kinds.get(kind)
        return records is not None and key not in records

    def _apply(self, kind: str, key: str, entry: Entry) -> None:
        if kind == DOC_KIND:
            self._doc_models.pop(key, None)
            if self._docs is not None:
                if isinstance(entry, Document):
                    self._docs[key] = entry.model_dump(mode="json")
                    self._doc_models[key] = entry
                else:
                    self._docs.pop(key, None)
            return
        if kind in self._lru:
            self._lru[kind].remember(key, entry if isinstance(entry, Record) else None)
        records = self._kinds.get(kind)
        if records is None:
            return  # not loaded here; the next load reads it from the store
        if isinstance(entry, Record):
            records[key] = entry
        else:
            records.pop(key, None)

    def _forget(self, revision: int) -> None:
        self._kinds.clear()
        self._docs = None
        self._doc_models.clear()
        self._versions.clear()
        self._written.clear()
        self._lru.clear()
        self.epoch += 1
        self.revision = revision
        for listeners in self._listeners.values():
            for listener in listeners:
                listener.reset()
