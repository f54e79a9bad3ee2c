"""The unit of work: buffered reads and writes over one assistant's state.

Why buffered: a tool call (and later a whole tick) must be atomic, yet it may await an
LLM for seconds in the middle. Holding a database write lock across that await would
stall every other writer of a SQLite file. So a :class:`Unit` keeps its writes in
memory, reads its own writes, nests like savepoints (:meth:`Unit.child`), and only
:meth:`StateCache.commit` touches the database: one short transaction that also checks
the assistant's revision, so a concurrent writer is detected instead of overwritten.

The :class:`StateCache` is the per-process copy of what is committed. Records in it are
frozen models, shared safely with every unit that reads them. Another process's commits
are caught up key by key through the store's change feed (see ``refresh_if_stale``).
A *lazy* kind (``Record.lazy``) is never loaded whole, only read by key through an LRU.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar, cast

from mindspace.errors import ConcurrencyError
from mindspace.state.committed import CommittedState, Entry, Slot, topic_of
from mindspace.state.lazy import LAZY_CACHE_SIZE, not_listable
from mindspace.state.models import DOC_KIND, Document, Record, record_model
from mindspace.state.port import Change

__all__ = ["LAZY_CACHE_SIZE", "MAX_INCREMENTAL", "StateCache", "Unit"]

MAX_INCREMENTAL = 2000
"""Above this many changed keys, reloading everything is cheaper than key by key."""

R = TypeVar("R", bound=Record)
D = TypeVar("D", bound=Document)
T = TypeVar("T")


class StateCache(CommittedState):
    """The committed state of one assistant, with its units of work and their commits.

    Args:
        store: Where records are loaded from and committed to.
        assistant_id: The assistant's id in the store.
        revision: The revision the cache starts at.
    """

    # -- derived state -----------------------------------------------------------------
    def derived(self, build: Callable[[StateCache], T]) -> T:
        """The one object ``build`` makes for this cache, made on first use.

        Indexes and queues kept over the committed records (usually cache listeners
        that register themselves while built) live as long as the cache, so every unit
        of work and status view on it shares them instead of scanning the store again.

        Args:
            build: Makes the object from the cache; the same callable (a class or a
                module-level function) finds it again.
        """
        if build not in self._derived:
            self._derived[build] = build(self)
        # One object per callable, made by it, so it is of the callable's return type.
        return cast("T", self._derived[build])

    # -- units -------------------------------------------------------------------------
    def begin(self) -> Unit:
        """A new top-level unit of work over this cache."""
        return Unit(self, None)

    def refresh_if_stale(self, current: int | None = None) -> bool:
        """Catch up with commits of other processes; returns whether there were any.

        The change feed names the keys written since this cache's revision; each one
        is reloaded where it is held (a loaded kind, a lazy kind's LRU, a document),
        listeners of its kind hear of it, and its topic's version moves. When the feed
        no longer reaches back, or more than :data:`MAX_INCREMENTAL` keys changed,
        everything is dropped instead and the epoch moves.

        Args:
            current: The store's revision of the assistant, when the caller has just
                read it (with other reads, in one round trip); else it is read here.
        """
        if current is None:
            current = self._store.revision(self.assistant_id)
        if current == self.revision:
            return False
        feed = (
            self._store.changes_since(self.assistant_id, self.revision)
            if current > self.revision
            else None  # the database went back in time (a restore): trust nothing
        )
        if feed is None or len(feed) > MAX_INCREMENTAL:
            self._forget(current)
            return True
        try:
            # Rows after ``current`` are commits made since we read it; they come again
            # on the next refresh, and reloading a key twice is harmless.
            self._catch_up([change for change in feed if change[0] <= current])
        except Exception:
            self._forget(self.revision)
            raise
        self.revision = current
        return True

    def _catch_up(self, feed: Sequence[tuple[int, str, str]]) -> None:
        latest: dict[Slot, int] = {}
        for revision, kind, key in feed:
            latest[(kind, key)] = revision
        by_kind: dict[str, list[str]] = {}
        for kind, key in latest:
            by_kind.setdefault(kind, []).append(key)
        for kind, keys in by_kind.items():
            if kind == DOC_KIND:
                self._reload_docs(keys)
            else:
                self._reload_records(kind, keys)
        for (kind, key), revision in latest.items():
            self._mark_written(kind, key, revision)

    def _reload_docs(self, names: list[str]) -> None:
        for name in names:
            self._doc_models.pop(name, None)
        if self._docs is None:
            return  # not loaded here; the first read loads the current values
        rows = self._store.load_keys(self.assistant_id, DOC_KIND, names)
        found = {str(row["name"]): dict(row["value"]) for row in rows}
        for name in names:
            if name in found:
                self._docs[name] = found[name]
            else:
                self._docs.pop(name, None)

    def _reload_records(self, kind: str, keys: list[str]) -> None:
        records = self._kinds.get(kind)
        lru = self._lru.get(kind)
        listeners = self._listeners.get(kind, [])
        if records is None and not listeners:
            if lru is not None:
                for key in keys:
                    lru.pop(key, None)  # read again from the store when next asked for
            return
        model = self._models.get(kind) or record_model(kind)
        if model is None:  # pragma: no cover - a listened kind always has a model class
            for listener in listeners:
                listener.reset()
            return
        rows = self._store.load_keys(self.assistant_id, kind, keys)
        found = {record.record_key(): record for record in map(model.from_stored, rows)}
        if records is not None:
            for key in keys:
                if key not in found:
                    records.pop(key, None)
            records.update(found)  # replaced keys keep their place, new ones go last
        for key in keys:
            if lru is not None and key in lru:
                lru[key] = found.get(key)
            for listener in listeners:
                listener.applied(key, found.get(key))

    def commit(self, unit: Unit) -> int:
        """Write a top-level unit's changes in one transaction; returns the new revision."""
        if unit.parent is not None:
            raise ValueError("only a top-level unit can be committed; merge() a child unit")
        changes = unit.pending_changes()
        if not changes:
            return self.revision
        self._check_overlap(unit, changes)
        stored = [
            Change(
                kind,
                key,
                None if entry is None else entry.to_stored(),
                new=entry is not None and self._known_absent(kind, key),
            )
            for (kind, key), entry in changes.items()
        ]
        try:
            self.revision = self._store.commit(self.assistant_id, self.revision, stored)
        except Exception:
            # What we hold may be behind the database now; reload lazily next time.
            self._forget(self.revision)
            raise
        for (kind, key), entry in changes.items():
            self._mark_written(kind, key, self.revision)
            self._apply(kind, key, entry)
            for listener in self._listeners.get(kind, ()):
                listener.applied(key, entry if isinstance(entry, Record) else None)
        unit.clear()
        return self.revision

    def _check_overlap(self, unit: Unit, changes: dict[Slot, Entry]) -> None:
        # The store's revision check only sees other processes; commits made in this
        # process since the unit began advanced the shared revision too. A unit that
        # writes a record changed since it began would silently undo that change.
        if unit.base_epoch != self.epoch:
            unit.clear()
            raise ConcurrencyError(
                "The assistant's state was reloaded (another process wrote) while this "
                "unit of work was open; nothing was written - retry the call."
            )
        clashes = sorted(
            f"{kind}:{key}"
            for kind, key in changes
            if self._written.get((kind, key), -1) > unit.base_revision
        )
        if clashes:
            unit.clear()
            raise ConcurrencyError(
                f"{', '.join(clashes[:5])} changed while this unit of work was open; "
                "nothing was written - retry the call."
            )


class Unit:
    """Buffered changes over a :class:`StateCache`, optionally nested in a parent unit.

    Reads see this unit's own writes, then its parents', then the committed state.
    A child unit is a savepoint: :meth:`merge` folds it into its parent, and dropping
    it discards its writes.
    """

    def __init__(self, cache: StateCache, parent: Unit | None) -> None:
        self.cache = cache
        self.parent = parent
        self._changes: dict[Slot, Entry] = {}
        root = parent
        while root is not None and root.parent is not None:
            root = root.parent
        self.base_revision: int = root.base_revision if root else cache.revision
        self.base_epoch: int = root.base_epoch if root else cache.epoch

    # -- nesting -----------------------------------------------------------------------
    def child(self) -> Unit:
        """A nested unit whose writes reach this one only through :meth:`merge`."""
        return Unit(self.cache, self)

    def merge(self) -> None:
        """Fold this child's writes into its parent."""
        if self.parent is None:
            raise ValueError("a top-level unit is committed through StateCache.commit()")
        self.parent._changes.update(self._changes)
        self._changes.clear()

    def clear(self) -> None:
        """Forget every buffered write."""
        self._changes.clear()

    # -- reads -------------------------------------------------------------------------
    def _lookup(self, slot: Slot) -> tuple[bool, Entry]:
        unit: Unit | None = self
        while unit is not None:
            if slot in unit._changes:
                return True, unit._changes[slot]
            unit = unit.parent
        return False, None

    def get(self, model: type[R], key: str) -> R | None:
        """The record of ``model`` under ``key``, or None."""
        found, entry = self._lookup((model.kind, key))
        if found:
            return entry if isinstance(entry, model) else None
        if model.lazy:
            return self.cache.lookup(model, (key,)).get(key)
        return self.cache.records(model).get(key)

    def get_many(self, model: type[R], keys: Iterable[str]) -> dict[str, R]:
        """The records of ``model`` under ``keys`` as this unit sees them, in that order.

        Absent (or deleted) keys are left out. For a lazy kind the committed records
        come from one store read for the keys its cache misses.
        """
        wanted = list(dict.fromkeys(keys))
        seen: dict[str, R | None] = {}
        for key in wanted:
            found, entry = self._lookup((model.kind, key))
            if found:
                seen[key] = entry if isinstance(entry, model) else None
        committed = self.cache.lookup(model, [key for key in wanted if key not in seen])
        result: dict[str, R] = {}
        for key in wanted:
            record = seen[key] if key in seen else committed.get(key)
            if record is not None:
                result[key] = record
        return result

    def all(self, model: type[R]) -> list[R]:
        """Every record of ``model``: committed ones in order, then ones added here.

        Raises:
            TypeError: ``model`` is a lazy kind; list it through the store instead.
        """
        if model.lazy:
            raise not_listable(model)
        overlay = self._flattened(model.kind)
        base = self.cache.records(model)
        if not overlay:
            return list(base.values())
        result: list[R] = []
        for key, record in base.items():
            if key in overlay:
                replaced = overlay[key]
                if isinstance(replaced, model):
                    result.append(replaced)
            else:
                result.append(record)
        result.extend(
            entry for key, entry in overlay.items() if key not in base and isinstance(entry, model)
        )
        return result

    def pending(self, model: type[R]) -> dict[str, R | None]:
        """Uncommitted writes of ``model`` visible here (None marks a deletion)."""
        return {
            key: entry if isinstance(entry, model) else None
            for key, entry in self._flattened(model.kind).items()
        }

    def doc(self, model: type[D]) -> D:
        """The document ``model`` as this unit sees it (defaults when never written)."""
        found, entry = self._lookup((DOC_KIND, model.name))
        if found and isinstance(entry, model):
            return entry
        return self.cache.document(model)

    def _flattened(self, kind: str) -> dict[str, Entry]:
        return {key: entry for (of, key), entry in self.pending_changes().items() if of == kind}

    # -- writes ------------------------------------------------------------------------
    def put(self, record: Record) -> None:
        """Insert or replace ``record``."""
        self._changes[(record.kind, record.record_key())] = record

    def put_all(self, records: Iterable[Record]) -> None:
        """Insert or replace several records."""
        for record in records:
            self.put(record)

    def delete(self, model: type[Record], key: str) -> None:
        """Delete the record of ``model`` under ``key`` (no error when absent)."""
        self._changes[(model.kind, key)] = None

    def put_doc(self, doc: Document) -> None:
        """Replace a document."""
        self._changes[(DOC_KIND, doc.name)] = doc

    # -- introspection -----------------------------------------------------------------
    def pending_changes(self) -> dict[Slot, Entry]:
        """Writes buffered here and in every parent, the innermost winning."""
        chain: list[Unit] = []
        unit: Unit | None = self
        while unit is not None:
            chain.append(unit)
            unit = unit.parent
        merged: dict[Slot, Entry] = {}
        for layer in reversed(chain):
            merged.update(layer._changes)
        return merged

    def own_changes(self) -> dict[Slot, Entry]:
        """Writes buffered in this unit itself (not its parents): a savepoint's own work."""
        return dict(self._changes)

    def buffered(self, kind: str, key: str) -> tuple[bool, Record | Document | None]:
        """Whether this unit or a parent buffers a write of (``kind``, ``key``), and which.

        Never reads the committed state (no store query); None marks a deletion.
        """
        return self._lookup((kind, key))

    def touched_topics(self) -> set[str]:
        """Invalidation topics written by this unit or its parents and not yet committed."""
        return {topic_of(kind, key) for kind, key in self.pending_changes()}
