"""The journal: adding entries (scored, trusted, counted, pruned), reading and pruning them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from mindspace.clock import Clock, format_time
from mindspace.config import Settings
from mindspace.errors import InvalidArgumentsError, NotFoundError
from mindspace.journal.importance import score_importance_heuristic
from mindspace.journal.pruning import (
    LOW_IMPORTANCE_MAX,
    LOW_IMPORTANCE_MAX_AGE_DAYS,
    LOW_IMPORTANCE_PER_CALL,
    select_low_importance,
    select_overflow,
)
from mindspace.journal.records import (
    DEFAULT_TRUST,
    SOURCE_TYPES,
    SYNTHESIS_PREFIX,
    SYNTHESIS_TAGS,
    ImportanceMethod,
    JournalEntry,
    JournalMeta,
    ReflectionState,
    SourceType,
)
from mindspace.journal.reflection_state import forget_reflection_entries, update_reflection_state
from mindspace.limits import MAX_LABEL_CHARS, MAX_LABELS
from mindspace.state.unit import Unit
from mindspace.workspace.desk import Desk
from mindspace.workspace.limits import bounded_text

__all__ = [
    "SYNTHESIS_IMPORTANCE",
    "AddedEntry",
    "JournalBook",
    "prune_low_importance_entries",
]

MAX_ENTITY_CHARS = 128
SYNTHESIS_IMPORTANCE = 8


@dataclass(frozen=True)
class AddedEntry:
    """The result of adding one entry."""

    entry: JournalEntry
    pruned: tuple[JournalEntry, ...]
    reflection: ReflectionState
    total_entries: int


class JournalBook(Desk):
    """Journal operations within one unit of work.

    Args:
        unit: Where reads and writes go.
        clock: The time source for timestamps and ages.
        settings: Length limits.
    """

    # -- reads -------------------------------------------------------------------------
    @property
    def synthesis_limit(self) -> int:
        """Longest synthesis text accepted: the entry limit less the ``[SYNTHESIS]`` prefix."""
        return self.settings.max_journal_entry_chars - len(SYNTHESIS_PREFIX) - 1

    def meta(self) -> JournalMeta:
        """The journal's counters."""
        return self.unit.doc(JournalMeta)

    def entries(self) -> list[JournalEntry]:
        """Every entry, oldest id first."""
        return sorted(self.unit.all(JournalEntry), key=lambda e: e.id)

    def get(self, entry_id: int) -> JournalEntry:
        """The entry ``entry_id``.

        Raises:
            NotFoundError: no such entry (it may have been pruned).
        """
        entry = self.unit.get(JournalEntry, str(entry_id))
        if entry is None:
            raise NotFoundError(
                f"Journal entry {entry_id!r} does not exist (it may have been pruned)",
                "Use search_journal to find entries and their ids.",
                entry_id=entry_id,
            )
        return entry

    def consolidated_entry_ids(self) -> list[int]:
        """Ids of entries already moved to semantic memory (the spec's list)."""
        return [e.id for e in self.entries() if e.consolidated]

    def view(self) -> dict[str, Any]:
        """The journal in the spec's ``db.journal`` shape."""
        meta = self.meta()
        entries = self.entries()
        return {
            "entries": [e.to_spec() for e in entries],
            "entry_count": meta.entry_count,
            "max_entries": meta.max_entries,
            "last_reflection": meta.last_reflection,
            "consolidated_entry_ids": [e.id for e in entries if e.consolidated],
        }

    # -- writes ------------------------------------------------------------------------
    def add(
        self,
        content: str,
        *,
        tags: Sequence[str] = (),
        related_projects: Sequence[str] = (),
        source_type: str = "observation",
        source_trust: float | None = None,
        source_entity: str | None = None,
        importance: int | None = None,
        importance_method: ImportanceMethod | None = None,
        evidence_ids: Sequence[str] = (),
    ) -> AddedEntry:
        """Add an entry: trust from the source type and a heuristic score unless given.

        Updates the reflection state and auto-prunes past ``max_entries`` (see
        :func:`~mindspace.journal.pruning.select_overflow`).

        Raises:
            InvalidArgumentsError: empty or too long content, an unknown source type,
                trust outside 0-1, importance outside 1-10, or bad tags.
        """
        text = bounded_text(content, "content", self.settings.max_journal_entry_chars)
        kind = _source_type(source_type)
        trust = DEFAULT_TRUST[kind] if source_trust is None else _trust(source_trust)
        clean_tags = _labels(tags, "tags")
        projects = _labels(related_projects, "related_projects")
        entity = _entity(source_entity)
        if importance is None:
            score = score_importance_heuristic(text, kind, list(clean_tags))
            method: ImportanceMethod = importance_method or "heuristic"
        else:
            score = _importance(importance)
            method = importance_method or "manual"

        meta = self.meta()
        entry = JournalEntry(
            id=meta.entry_count + 1,
            timestamp=format_time(self.clock.now()),
            content=text,
            source_type=kind,
            source_trust=trust,
            source_entity=entity,
            importance=score,
            importance_method=method,
            tags=clean_tags,
            related_projects=projects,
            evidence_ids=tuple(evidence_ids),
        )
        self.unit.put(entry)
        self.unit.put_doc(meta.model_copy(update={"entry_count": entry.id}))
        reflection = update_reflection_state(self.unit, score, entry.id)
        entries = self.unit.all(JournalEntry)
        pruned = select_overflow(entries, meta.max_entries, keep_id=entry.id)
        self._delete(pruned)
        if pruned:
            reflection = self.unit.doc(ReflectionState)
        return AddedEntry(entry, tuple(pruned), reflection, len(entries) - len(pruned))

    def add_synthesis(
        self, synthesis: str, *, evidence_ids: Sequence[str] = (), tags: Sequence[str] = ()
    ) -> AddedEntry:
        """Store a ``[SYNTHESIS]`` entry: importance 8, tags synthesis and meta_learning."""
        text = bounded_text(synthesis, "synthesis", self.synthesis_limit)
        if not text.startswith(SYNTHESIS_PREFIX):
            text = f"{SYNTHESIS_PREFIX} {text}"
        extra = [t for t in tags if t.strip().casefold() not in SYNTHESIS_TAGS]
        return self.add(
            text,
            tags=[*SYNTHESIS_TAGS, *extra],
            source_type="inference",
            importance=SYNTHESIS_IMPORTANCE,
            importance_method="manual",
            evidence_ids=evidence_ids,
        )

    def set_max_entries(self, max_entries: int) -> list[JournalEntry]:
        """Change how many entries are kept; prunes at once when there are more.

        Raises:
            InvalidArgumentsError: not a positive integer.
        """
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 1:
            raise InvalidArgumentsError(
                f"max_entries must be a positive integer, got {max_entries!r}",
                "Pass a whole number of entries, e.g. 100.",
            )
        self.unit.put_doc(self.meta().model_copy(update={"max_entries": max_entries}))
        pruned = select_overflow(self.unit.all(JournalEntry), max_entries)
        self._delete(pruned)
        return pruned

    def mark_consolidated(self, entry_ids: Iterable[int]) -> list[JournalEntry]:
        """Record that entries were moved to semantic memory (sleep consolidation).

        Raises:
            NotFoundError: an id does not exist.
        """
        now = format_time(self.clock.now())
        marked = []
        for entry_id in entry_ids:
            entry = self.get(entry_id)
            if not entry.consolidated:
                entry = entry.model_copy(update={"consolidated": True, "consolidated_at": now})
                self.unit.put(entry)
            marked.append(entry)
        return marked

    def prune_low_importance(
        self,
        *,
        max_importance: int = LOW_IMPORTANCE_MAX,
        older_than_days: float = LOW_IMPORTANCE_MAX_AGE_DAYS,
        limit: int = LOW_IMPORTANCE_PER_CALL,
    ) -> list[JournalEntry]:
        """Delete up to ``limit`` entries with importance <= 3 older than 30 days, oldest first."""
        doomed = select_low_importance(
            self.unit.all(JournalEntry),
            self.clock.now(),
            max_importance=max_importance,
            older_than_days=older_than_days,
            limit=limit,
        )
        self._delete(doomed)
        return doomed

    def _delete(self, entries: Sequence[JournalEntry]) -> None:
        for entry in entries:
            self.unit.delete(JournalEntry, entry.record_key())
        forget_reflection_entries(self.unit, {e.id for e in entries})


def prune_low_importance_entries(
    unit: Unit, clock: Clock, settings: Settings, max_per_call: int = LOW_IMPORTANCE_PER_CALL
) -> list[JournalEntry]:
    """The sleep cycle's episodic pruning: importance <= 3 and older than 30 days, 10 a call."""
    return JournalBook(unit, clock, settings).prune_low_importance(limit=max_per_call)


def _source_type(value: str) -> SourceType:
    for kind in SOURCE_TYPES:
        if value == kind:
            return kind
    raise InvalidArgumentsError(
        f"Unknown source_type {value!r}",
        f"Use one of {', '.join(repr(k) for k in SOURCE_TYPES)}.",
        field="source_type",
    )


def _trust(value: float) -> float:
    if isinstance(value, bool) or not 0.0 <= value <= 1.0:
        raise InvalidArgumentsError(
            f"source_trust must be between 0.0 and 1.0, got {value!r}",
            "Pass a trust between 0.0 and 1.0, or omit it to use the source type's default.",
            field="source_trust",
        )
    return float(value)


def _importance(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10:
        raise InvalidArgumentsError(
            f"importance must be a whole number from 1 to 10, got {value!r}",
            "Pass an importance from 1 (mundane) to 10 (major), or omit it to score it.",
            field="importance",
        )
    return value


def _labels(values: Sequence[str], field: str) -> tuple[str, ...]:
    if isinstance(values, str):
        raise InvalidArgumentsError(
            f"{field!r} must be a list of strings, got the string {values!r}",
            f"Pass {field!r} as a list, e.g. [{values!r}].",
            field=field,
        )
    if len(values) > MAX_LABELS:
        raise InvalidArgumentsError(
            f"{field!r} has {len(values)} items; the limit is {MAX_LABELS}",
            f"Keep the {MAX_LABELS} most useful {field}.",
            field=field,
        )
    result: list[str] = []
    for value in values:
        label = bounded_text(value, f"{field} item", MAX_LABEL_CHARS)
        if label.casefold() not in {r.casefold() for r in result}:
            result.append(label)
    return tuple(result)


def _entity(value: str | None) -> str | None:
    if value is None or not value.strip():
        return None
    return bounded_text(value, "source_entity", MAX_ENTITY_CHARS)
