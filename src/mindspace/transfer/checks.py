"""An imported record is checked as the assistant will read it, before anything is written.

The column types (:func:`~mindspace.transfer.format.decode_fields`) say little: a goal's
``priority`` is text to the store and ``"urgent!!"`` fits. So each record is also built
with the model the engine reads it with (:func:`~mindspace.state.models.record_model`,
:func:`~mindspace.state.models.document_model`), its text passes the input boundary
(:mod:`mindspace.validation`: no lone surrogate, no NUL, the limits), and a vector must
be float32 bytes of the same size as the others of its embedder. The first problem is
reported with its line and field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError
from sqlalchemy import String

import mindspace.engine.assistant  # noqa: F401 - registers every record and document model
from mindspace.config import Settings
from mindspace.limits import MAX_EVENT_CHARS, MAX_TEXT_CHARS
from mindspace.state.models import DOC_KIND, document_model, record_model
from mindspace.storage.tables import KINDS
from mindspace.transfer.format import TransferError
from mindspace.validation import find_invalid_text

__all__ = ["RecordChecker", "field_limits"]

_FIX = "fix the value or export the assistant again"


def field_limits(settings: Settings) -> dict[tuple[str, str], int]:
    """The most characters of each limited text, by (kind, field).

    The sizes of the VARCHAR columns (PostgreSQL refuses a longer value; SQLite would
    keep it, so the assistant could never move) and the texts tools and hosts limit.
    """
    sizes = {
        (kind, column.name): column.type.length
        for kind, spec in KINDS.items()
        for column in spec.table.columns
        if isinstance(column.type, String) and column.type.length is not None
    }
    return {
        **sizes,
        ("memory", "content"): settings.max_memory_chars,
        ("journal_entry", "content"): settings.max_journal_entry_chars,
        ("goal", "description"): settings.max_goal_description_chars,
        ("event", "content"): MAX_EVENT_CHARS,
    }


class RecordChecker:
    """Checks records one by one; remembers each embedder's vector size across them.

    Args:
        limits: Most characters per (kind, field) (:func:`field_limits`); every other
            string is held to :data:`~mindspace.validation.MAX_TEXT_CHARS`.
    """

    def __init__(self, limits: Mapping[tuple[str, str], int]) -> None:
        self.limits = dict(limits)
        self._sizes: dict[tuple[str, str], tuple[int, str]] = {}

    def check(self, kind: str, fields: dict[str, Any], where: str) -> None:
        """Raise :class:`TransferError` naming ``where`` and the field of the first problem."""
        found = find_invalid_text(fields, max_chars=MAX_TEXT_CHARS)
        if found is not None:
            path, problem = found
            raise TransferError(f"{where}: field {path!r} of a {kind!r} record {problem}.")
        for (limited_kind, name), limit in self.limits.items():
            value = fields.get(name)
            if limited_kind == kind and isinstance(value, str) and len(value) > limit:
                raise TransferError(
                    f"{where}: field {name!r} of a {kind!r} record is {len(value):,} "
                    f"characters long; the limit is {limit:,} - shorten it or split it."
                )
        self._vectors(kind, fields, where)
        self._model(kind, fields, where)

    def _vectors(self, kind: str, fields: dict[str, Any], where: str) -> None:
        vector = fields.get("embedding")
        if not isinstance(vector, bytes | bytearray):
            return
        if not vector or len(vector) % 4:
            raise TransferError(
                f"{where}: field 'embedding' of a {kind!r} record holds {len(vector)} bytes, "
                f"not float32 values (a multiple of 4); {_FIX}."
            )
        embedder = str(fields.get("embedder") or "")
        first = self._sizes.setdefault((kind, embedder), (len(vector), where))
        if first[0] != len(vector):
            raise TransferError(
                f"{where}: field 'embedding' of a {kind!r} record has {len(vector) // 4} "
                f"dimensions but {first[1]} has {first[0] // 4} for embedder {embedder!r}; "
                f"{_FIX}."
            )

    def _model(self, kind: str, fields: dict[str, Any], where: str) -> None:
        if kind == DOC_KIND:
            name = str(fields.get("name"))
            document = document_model(name)
            if document is None:
                return  # a document this mindspace does not know: kept, never read
            value = fields.get("value")
            if not isinstance(value, dict):
                raise TransferError(
                    f"{where}: field 'value' of document {name!r} must be an object, got "
                    f"{type(value).__name__!r}; {_FIX}."
                )
            try:
                document.from_value(value)
            except ValidationError as exc:
                raise TransferError(_problem(where, f"document {name!r}", exc)) from None
            return
        model = record_model(kind)
        if model is None:
            return
        try:
            # Columns that are not model fields (a journal entry's key) are the store's.
            model.from_stored({k: v for k, v in fields.items() if k in model.model_fields})
        except ValidationError as exc:
            raise TransferError(_problem(where, f"{kind!r} record", exc)) from None


def _problem(where: str, what: str, exc: ValidationError) -> str:
    error = exc.errors()[0]
    path = ".".join(str(part) for part in error["loc"]) or "(value)"
    shown = repr(error.get("input"))
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return f"{where}: field {path!r} of a {what}: {error['msg']} (got {shown}); {_FIX}."
