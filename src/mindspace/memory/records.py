"""The memory tiers' persisted shapes (spec 003 §1, §4)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field, field_validator

from mindspace.embeddings.port import Vectors
from mindspace.journal.records import SourceType
from mindspace.state.models import Document, Record

__all__ = [
    "RELATIONSHIP_THRESHOLDS",
    "Conversation",
    "EntityProfile",
    "Memory",
    "MemoryLink",
    "MemoryLinks",
    "MemorySource",
    "Observation",
    "Relationship",
    "RelationshipState",
    "WorkingMemory",
    "memory_key",
    "relationship_state",
]

RelationshipState = Literal["stranger", "acquaintance", "friend", "ally"]

RELATIONSHIP_THRESHOLDS: tuple[tuple[float, RelationshipState], ...] = (
    (0.75, "ally"),
    (0.50, "friend"),
    (0.25, "acquaintance"),
)
"""Dunbar-style thresholds: the first whose favorability is reached names the state."""


def memory_key(content: str, source_entity: str | None) -> str:
    """The text a memory is searched by: who said it, then what was said."""
    return f"{source_entity}: {content}" if source_entity else content


def relationship_state(favorability: float) -> RelationshipState:
    """stranger < 0.25 <= acquaintance < 0.50 <= friend < 0.75 <= ally."""
    for threshold, state in RELATIONSHIP_THRESHOLDS:
        if favorability >= threshold:
            return state
    return "stranger"


MAX_SOURCES = 20
"""Sources kept per memory: the first and the newest (``mentions`` counts them all)."""


class MemorySource(Document):
    """One time a memory's fact was said or written (a memory said twice has two).

    Attributes:
        at: When it was said (the draft's ``occurred_at``).
        source: Where it came from (``tool``, ``journal``, ``conversation``, ...).
        entry_id: The journal entry it came from, if any.
        ref: An external reference (a dialog id), if any.
        verbatim: The text was the speaker's own words, not a fact written about them.
        text: The words of this source when they differ from the memory's content.
    """

    name: ClassVar[str] = "memory_source"

    at: str
    source: str = "tool"
    entry_id: int | None = None
    ref: str | None = None
    verbatim: bool = False
    text: str | None = None


class Memory(Record):
    """A semantic memory (tier 1): text, its metadata and its embedding.

    Bi-temporal (as Zep/Graphiti): ``created_at`` is when it was written,
    ``valid_from``/``valid_to`` when its fact held. A memory another one replaced (the
    same person's and attribute's newer fact, :mod:`mindspace.memory.reconcile`) keeps
    its text with ``valid_to`` and ``superseded_by`` set; recall ranks it below the
    one that replaced it but still finds it ("where did Dave live before?").
    """

    kind: ClassVar[str] = "memory"
    lazy: ClassVar[bool] = True
    """Never all loaded: read by key, listed through the store, searched by the index."""
    bytes_fields: ClassVar[frozenset[str]] = frozenset({"embedding"})
    """The vector is stored as raw float32 bytes."""

    id: str
    content: str
    source: str = "tool"
    entry_id: int | None = None
    tags: tuple[str, ...] = ()
    source_type: SourceType = "observation"
    source_trust: float = Field(default=0.8, ge=0.0, le=1.0)
    source_entity: str | None = None
    importance: int = Field(default=5, ge=1, le=10)
    importance_method: str = "heuristic"
    created_at: str
    occurred_at: str
    ref: str | None = None
    context: str | None = None
    embedder: str | None = None
    embedding: bytes | None = None
    valid_from: str | None = None
    """When the fact began to hold (None: stored before validity was kept; occurred_at)."""
    valid_to: str | None = None
    """When a newer fact replaced it (None: still current)."""
    superseded_by: str | None = None
    """The id of the memory that replaced it."""
    sources: tuple[MemorySource, ...] = ()
    """Each time the fact was said, oldest first (at most :data:`MAX_SOURCES`)."""
    mentions: int = Field(default=1, ge=1)
    """How many times the fact was said or written (restatements included)."""

    @field_validator("sources", mode="before")
    @classmethod
    def _no_sources(cls, value: object) -> object:
        # A row stored before sources were kept has NULL there.
        return () if value is None else value

    @field_validator("mentions", mode="before")
    @classmethod
    def _one_mention(cls, value: object) -> object:
        return 1 if value is None else value

    @property
    def current(self) -> bool:
        """The fact still holds: no newer memory replaced it."""
        return self.valid_to is None

    def dense_key(self) -> str:
        """What is embedded: the text, said by its source entity when there is one."""
        return memory_key(self.content, self.source_entity)

    def lexical_key(self) -> str:
        """What BM25 indexes: the dense key plus the surrounding context."""
        return f"{self.context}\n{self.dense_key()}" if self.context else self.dense_key()

    def vector(self) -> Vectors | None:
        """The embedding as a float32 array, if there is one."""
        if self.embedding is None:
            return None
        return np.frombuffer(self.embedding, dtype=np.float32)

    def metadata(self) -> dict[str, Any]:
        """The spec's metadata of a memory (as Mem0 keeps it)."""
        return {
            "source": self.source,
            "entry_id": self.entry_id,
            "tags": list(self.tags),
            "source_type": self.source_type,
            "source_trust": self.source_trust,
            "source_entity": self.source_entity,
            "importance": self.importance,
            "importance_method": self.importance_method,
            "created_at": self.created_at,
            "occurred_at": self.occurred_at,
            "ref": self.ref,
            "context": self.context,
            "valid_from": self.valid_from or self.occurred_at,
            "valid_to": self.valid_to,
            "superseded_by": self.superseded_by,
            "mentions": self.mentions,
            "sources": [s.model_dump(mode="json", exclude_none=True) for s in self.sources],
        }


class MemoryLink(Document):
    """One A-MEM link to another memory."""

    name: ClassVar[str] = "memory_link"

    id: str
    score: float


class MemoryLinks(Record):
    """The links found from one memory (``memory_links[mem_id]`` in the spec)."""

    kind: ClassVar[str] = "memory_links"
    key_field: ClassVar[str] = "memory_id"
    lazy: ClassVar[bool] = True

    memory_id: str
    linked_to: tuple[MemoryLink, ...] = ()
    processed_at: str


class Observation(Document):
    """A raw observation about an entity (Pf)."""

    name: ClassVar[str] = "observation"

    text: str
    at: str
    source_type: SourceType = "observation"
    consolidated: bool = False
    verbatim: bool = False
    """A message the entity sent, quoted as it came (not something the model noted)."""


class Relationship(Document):
    """How the assistant stands with an entity."""

    name: ClassVar[str] = "relationship"

    state: RelationshipState = "stranger"
    favorability: float = Field(default=0.0, ge=0.0, le=1.0)
    interaction_count: int = 0


class EntityProfile(Record):
    """Tier 2: what is known about one entity (O-Mem style)."""

    kind: ClassVar[str] = "entity"
    key_field: ClassVar[str] = "entity_id"

    entity_id: str
    entity_type: str = "player"
    attributes: dict[str, str] = Field(default_factory=dict)
    observations: tuple[Observation, ...] = ()
    relationship: Relationship = Field(default_factory=Relationship)
    first_seen: str
    last_seen: str


class Conversation(Document):
    """Tier 3: an active conversation with one entity."""

    name: ClassVar[str] = "conversation"

    topic: str
    started_at: str
    last_message_at: str
    messages: tuple[str, ...] = ()
    pending_actions: tuple[str, ...] = ()


class WorkingMemory(Document):
    """Active conversations by entity id."""

    name: ClassVar[str] = "working_memory"

    conversations: dict[str, Conversation] = Field(default_factory=dict)
