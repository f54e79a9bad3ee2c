"""What is stored as a memory (a draft), and what storing it did (reconciled with the rest)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from mindspace.errors import InvalidArgumentsError
from mindspace.journal.records import SourceType
from mindspace.memory.records import Memory
from mindspace.state.models import Document

__all__ = [
    "DEFAULT_TRUST",
    "VERBATIM_SOURCES",
    "MemoryDraft",
    "MemoryState",
    "Written",
    "check_draft",
]

VERBATIM_SOURCES = frozenset({"message"})
"""Sources whose drafts are what someone said, word for word: ``message`` is what the
formation path stores of each message before the model is called."""

DEFAULT_TRUST: dict[str, float] = {
    "direct": 0.9,
    "observation": 0.8,
    "inference": 0.6,
    "environmental": 0.3,
}


class MemoryState(Document):
    """Counters of the semantic memory."""

    name: ClassVar[str] = "memory_state"

    next_id: int = 0
    forgotten: tuple[str, ...] = ()
    """Memories deleted since the night last pruned the A-MEM links that point to them."""


@dataclass(frozen=True)
class MemoryDraft:
    """What to store as a memory; the id, times and vector are added when stored."""

    content: str
    tags: Sequence[str] = ()
    source_type: SourceType = "observation"
    source_trust: float | None = None
    source_entity: str | None = None
    importance: int = 5
    importance_method: str = "manual"
    source: str = "tool"
    entry_id: int | None = None
    occurred_at: str | None = None
    ref: str | None = None
    context: str | None = None
    verbatim: bool = False
    """The speaker's own words, quoted as they came (kept even when they ask something).

    A draft from a source in :data:`VERBATIM_SOURCES` is verbatim whatever this says.
    """

    @property
    def said(self) -> bool:
        """The draft holds a speaker's own words (flagged, or from a verbatim source)."""
        return self.verbatim or self.source in VERBATIM_SOURCES


def check_draft(draft: MemoryDraft) -> None:
    """Refuse a draft whose trust, importance or source type is out of range.

    Raises:
        InvalidArgumentsError: naming the value and the accepted ones.
    """
    trust = draft.source_trust
    if trust is not None and not 0.0 <= trust <= 1.0:
        raise InvalidArgumentsError(
            f"source_trust must be between 0 and 1, not {trust!r}",
            "Use 0.9 for direct statements, 0.8 observations, 0.6 inferences, 0.3 overheard.",
        )
    if not 1 <= draft.importance <= 10:
        raise InvalidArgumentsError(
            f"importance must be 1-10, not {draft.importance!r}",
            "Rate from 1 (mundane) to 10 (major).",
        )
    if draft.source_type not in DEFAULT_TRUST:
        raise InvalidArgumentsError(
            f"Unknown source_type {draft.source_type!r}",
            f"Use one of {sorted(DEFAULT_TRUST)!r}.",
        )


@dataclass(frozen=True)
class Written:
    """What storing one draft did (:mod:`mindspace.memory.reconcile`).

    Attributes:
        memory: The memory the draft became (``added``, ``updated``), or the one it
            restated, with its new source; None when it was refused.
        action: ``added`` (a new memory), ``restated`` (one more source of an existing
            memory), ``updated`` (a new memory that replaced ``related``) or ``refused``.
        related: The memories restated or replaced.
        reason: Why, in a few words.
        by: ``rules`` or ``model`` (the night's judgement on a close call).
    """

    memory: Memory | None
    action: Literal["added", "restated", "updated", "refused"]
    related: tuple[str, ...] = ()
    reason: str = ""
    by: Literal["rules", "model"] = "rules"

    def to_result(self) -> dict[str, object]:
        """The fields a tool result adds about the reconciliation."""
        result: dict[str, object] = {"action": self.action}
        if self.action == "restated":
            result["restated"] = self.related[0]
        elif self.action == "updated":
            result["replaced"] = list(self.related)
        if self.reason:
            result["reason"] = self.reason
        return result
