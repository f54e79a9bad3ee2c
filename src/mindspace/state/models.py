"""Base classes of what the unit of work keeps: keyed records and singleton documents."""

from __future__ import annotations

from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict

from mindspace.state.port import StoredRecord

__all__ = ["DOC_KIND", "Document", "Record", "document_model", "record_kinds", "record_model"]

DOC_KIND = "doc"
"""The kind under which every singleton document is stored, keyed by its name."""


class Record(BaseModel):
    """An immutable record of a kind, identified within its assistant by :meth:`record_key`.

    Records are frozen so the per-process cache can share them between units of work;
    change one with ``model_copy(update=...)`` and ``unit.put`` the copy.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ClassVar[str]
    lazy: ClassVar[bool] = False
    """A lazy kind is never loaded whole into the per-process cache.

    Its records are read by key through a bounded cache (``Unit.get``, ``Unit.get_many``);
    listing them goes through the store's ``page``/``count``/``missing`` or a semantic
    index, because an assistant may hold far more of them than fit in memory.
    """

    key_field: ClassVar[str] = "id"
    """The field that holds the record's key within its kind (as text: :meth:`record_key`)."""
    bytes_fields: ClassVar[frozenset[str]] = frozenset()
    """Fields stored as raw bytes (vectors), not as JSON."""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        kind = cls.__dict__.get("kind")
        if isinstance(kind, str):
            if cls.key_field not in cls.model_fields:
                raise TypeError(
                    f"{cls.__name__} (kind {kind!r}) has no field {cls.key_field!r}; "
                    "set key_field to the field that holds its key."
                )
            # The class that declares a kind first is its model; subclasses that only
            # change behaviour (or tests) do not replace it.
            _MODELS.setdefault(kind, cls)

    def record_key(self) -> str:
        """The record's key within its kind: its ``key_field`` as text."""
        return str(getattr(self, self.key_field))

    def to_stored(self) -> StoredRecord:
        """The record as JSON-compatible values for the store (``bytes_fields`` raw)."""
        if not self.bytes_fields:
            return self.model_dump(mode="json")
        data = self.model_dump(mode="json", exclude=set(self.bytes_fields))
        data.update({name: getattr(self, name) for name in self.bytes_fields})
        return data

    @classmethod
    def from_stored(cls, stored: StoredRecord) -> Self:
        """Rebuild a record from what the store returned."""
        return cls.model_validate(stored)


_MODELS: dict[str, type[Record]] = {}


def record_model(kind: str) -> type[Record] | None:
    """The record class that declares ``kind``, if one was imported."""
    return _MODELS.get(kind)


def record_kinds() -> dict[str, type[Record]]:
    """Every record kind imported so far, with its model (forgetting walks them all)."""
    return dict(_MODELS)


class Document(BaseModel):
    """A singleton document of an assistant (session memory, prompts, counters...).

    A document that was never written reads as its defaults, so every field needs one.
    Unknown stored fields are ignored, so a document written by a newer version still loads.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    name: ClassVar[str]

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        name = cls.__dict__.get("name")
        if isinstance(name, str):
            _DOCUMENTS.setdefault(name, cls)

    def to_stored(self) -> StoredRecord:
        """The stored form: the document's name and its JSON value."""
        return {"name": self.name, "value": self.model_dump(mode="json")}

    @classmethod
    def from_value(cls, value: dict[str, Any]) -> Self:
        """Rebuild the document from its stored JSON value."""
        return cls.model_validate(value)


_DOCUMENTS: dict[str, type[Document]] = {}


def document_model(name: str) -> type[Document] | None:
    """The document class that declares ``name``, if one was imported."""
    return _DOCUMENTS.get(name)
