"""The journal's persisted shapes: entries, the journal document and the reflection state.

Spec 004 §1 keeps everything in ``db.journal``; mindspace stores each entry as a row
(kind ``journal_entry``) and the rest as two singleton documents: ``journal``
(``entry_count``, ``max_entries``, ``last_reflection``) and ``reflection_state``.
``consolidated_entry_ids`` is derived from the entries' ``consolidated`` flags.
"""

from __future__ import annotations

import hashlib
from typing import Any, ClassVar, Literal, Self

from pydantic import Field

from mindspace.state.models import Document, Record
from mindspace.state.port import StoredRecord

__all__ = [
    "DEFAULT_MAX_ENTRIES",
    "DEFAULT_REFLECTION_THRESHOLD",
    "DEFAULT_TRUST",
    "SOURCE_TYPES",
    "SYNTHESIS_PREFIX",
    "SYNTHESIS_TAGS",
    "EntryVector",
    "ImportanceMethod",
    "JournalEntry",
    "JournalMeta",
    "ReflectionState",
    "SourceType",
    "text_digest",
]

SourceType = Literal["direct", "observation", "inference", "environmental"]
ImportanceMethod = Literal["heuristic", "llm", "offline", "manual"]

SOURCE_TYPES: tuple[SourceType, ...] = ("direct", "observation", "inference", "environmental")
DEFAULT_TRUST: dict[SourceType, float] = {
    "direct": 0.9,
    "observation": 0.8,
    "inference": 0.6,
    "environmental": 0.3,
}
"""Default ``source_trust`` per source type (spec 004 §1)."""

SYNTHESIS_PREFIX = "[SYNTHESIS]"
"""Content prefix marking a synthesis entry (reflection insights, ``review_journal``)."""
SYNTHESIS_TAGS: tuple[str, ...] = ("synthesis", "meta_learning")

DEFAULT_MAX_ENTRIES = 100
DEFAULT_REFLECTION_THRESHOLD = 150.0


class JournalEntry(Record):
    """One journal entry (spec 004 §1), plus the bookkeeping the sleep cycle needs.

    ``consolidated``/``consolidated_at`` record the move to semantic memory,
    ``evidence_ids`` the evidence a synthesis entry cites, and ``scoring_attempts`` how
    often the LLM failed to rate a heuristic score (so one bad entry cannot block others).
    """

    kind: ClassVar[str] = "journal_entry"

    id: int = Field(ge=1)
    timestamp: str
    content: str
    source_type: SourceType = "observation"
    source_trust: float = Field(default=0.8, ge=0.0, le=1.0)
    source_entity: str | None = None
    importance: int = Field(ge=1, le=10)
    importance_method: ImportanceMethod = "heuristic"
    tags: tuple[str, ...] = ()
    related_projects: tuple[str, ...] = ()
    consolidated: bool = False
    consolidated_at: str | None = None
    evidence_ids: tuple[str, ...] = ()
    scoring_attempts: int = Field(default=0, ge=0)

    @property
    def is_synthesis(self) -> bool:
        """Whether this is a ``[SYNTHESIS]`` entry (kept by the auto-pruning)."""
        return self.content.startswith(SYNTHESIS_PREFIX)

    @property
    def evidence_key(self) -> str:
        """How evidence lists and insights cite this entry: ``journal_<id>``."""
        return f"journal_{self.id}"

    def has_tags(self, tags: tuple[str, ...] | list[str]) -> bool:
        """Whether the entry carries every one of ``tags`` (ignoring case)."""
        own = {t.casefold() for t in self.tags}
        return all(t.casefold() in own for t in tags)

    def to_stored(self) -> StoredRecord:
        """The stored row: the fields plus the text key column."""
        return {"key": self.record_key(), **self.model_dump(mode="json")}

    @classmethod
    def from_stored(cls, stored: StoredRecord) -> Self:
        """Rebuild an entry from its row (the key column is derived, so dropped)."""
        return cls.model_validate({k: v for k, v in stored.items() if k != "key"})

    def to_spec(self) -> dict[str, Any]:
        """The entry in the spec's dict shape, with the consolidation and evidence fields."""
        return self.model_dump(mode="json", exclude={"consolidated_at", "scoring_attempts"})


def text_digest(text: str) -> str:
    """The MD5 hex digest of an entry's UTF-8 text (not for security: a change detector).

    MD5 because PostgreSQL computes the same digest in SQL (``md5(content)``), so the
    database can tell a current vector from a stale one without Python reading entries.
    """
    return hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()


class EntryVector(Record):
    """The stored embedding of one journal entry (kind ``journal_vector``, keyed like it).

    ``digest`` is :func:`text_digest` of the text that was embedded, so a vector whose
    entry changed since is recognised as stale and embedded again. A lazy kind: vectors
    are read by the journal's semantic index, never loaded whole into the state cache.
    """

    kind: ClassVar[str] = "journal_vector"
    key_field: ClassVar[str] = "key"
    lazy: ClassVar[bool] = True
    bytes_fields: ClassVar[frozenset[str]] = frozenset({"embedding"})

    key: str
    embedder: str
    digest: str
    embedding: bytes


class JournalMeta(Document):
    """The journal's counters (spec 004 §1): ids are ``entry_count + 1``, never reused."""

    name: ClassVar[str] = "journal"

    entry_count: int = 0
    max_entries: int = Field(default=DEFAULT_MAX_ENTRIES, ge=1)
    last_reflection: str | None = None


class ReflectionState(Document):
    """Cumulative importance since the last reflection (spec 004 §3)."""

    name: ClassVar[str] = "reflection_state"

    cumulative_importance: float = 0.0
    threshold: float = Field(default=DEFAULT_REFLECTION_THRESHOLD, gt=0)
    last_reflection_time: str | None = None
    reflection_count: int = 0
    entries_since_reflection: tuple[int, ...] = ()

    def to_spec(self) -> dict[str, Any]:
        """The state in the spec's dict shape (a whole threshold as an int, like ``150``)."""
        data = self.model_dump(mode="json")
        data["threshold"] = int(self.threshold) if self.threshold.is_integer() else self.threshold
        return data
