"""Base classes of what the unit of work keeps: keyed records and singleton documents."""

from __future__ import annotations

from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict

from mindspace.state.port import StoredRecord

__all__ = ["DOC_KIND", "Document", "Record"]

DOC_KIND = "doc"
"""The kind under which every singleton document is stored, keyed by its name."""


class Record(BaseModel):
    """An immutable record of a kind, identified within its assistant by :meth:`record_key`.

    Records are frozen so the per-process cache can share them between units of work;
    change one with ``model_copy(update=...)`` and ``unit.put`` the copy.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ClassVar[str]

    def record_key(self) -> str:
        """The record's key within its kind."""
        raise NotImplementedError(f"{type(self).__name__} must define record_key()")

    def to_stored(self) -> StoredRecord:
        """The record as JSON-compatible values for the store."""
        return self.model_dump(mode="json")

    @classmethod
    def from_stored(cls, stored: StoredRecord) -> Self:
        """Rebuild a record from what the store returned."""
        return cls.model_validate(stored)


class Document(BaseModel):
    """A singleton document of an assistant (session memory, prompts, counters...).

    A document that was never written reads as its defaults, so every field needs one.
    Unknown stored fields are ignored, so a document written by a newer version still loads.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    name: ClassVar[str]

    def to_stored(self) -> StoredRecord:
        """The stored form: the document's name and its JSON value."""
        return {"name": self.name, "value": self.model_dump(mode="json")}

    @classmethod
    def from_value(cls, value: dict[str, Any]) -> Self:
        """Rebuild the document from its stored JSON value."""
        return cls.model_validate(value)
