"""The export format: one JSON object a line, a header first and an end line last.

``mindspace-export`` version 1 (docs/export.md is the specification):

* line 1, the header: ``format``, ``version``, ``mindspace_version``, ``assistant`` (the
  source key), ``assistant_created_at``, ``exported_at`` and ``schema_version``;
* one line per record: ``{"kind": ..., "key": ..., "fields": {...}}`` for every kind the
  store keeps (:data:`mindspace.storage.tables.KINDS`), binary fields (vectors) as
  base64 text;
* the last line, ``{"end": "mindspace-export", "counts": {kind: n}}``, so a file cut
  short is refused instead of imported in part.

The kinds and their fields come from the store's table definitions, so a kind added
later is exported and imported with no change here.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, TypedDict

from sqlalchemy import JSON, Boolean, Float, Integer, LargeBinary, String, Text
from sqlalchemy.types import TypeDecorator, TypeEngine

from mindspace.errors import MindspaceError
from mindspace.storage.migrations import MIGRATIONS
from mindspace.storage.tables import KINDS

__all__ = [
    "FORMAT",
    "VERSION",
    "KindSpec",
    "Progress",
    "ProgressOptions",
    "TransferError",
    "decode_fields",
    "encode_record",
    "kind_specs",
    "schema_version",
]

Progress = Callable[[str], None]
"""Told a line of progress now and then during a long export or import (stderr in the CLI)."""


class ProgressOptions(TypedDict, total=False):
    """How an export or import reports progress; wrappers pass them on as ``**reporting``.

    ``progress`` is told a line every ``progress_every`` records (by default nothing is
    told, and every 10,000 records).
    """

    progress: Progress | None
    progress_every: int


FORMAT = "mindspace-export"
"""The ``format`` of every export's header (and the ``end`` of its last line)."""

VERSION = 1
"""The format version this mindspace writes; it reads this version and older ones."""

FieldType = Literal["text", "int", "float", "bool", "json", "bytes"]


class TransferError(MindspaceError):
    """An export or import that cannot go on: a bad file, a key in use, a missing assistant."""

    http_status = 422


@dataclass(frozen=True)
class KindSpec:
    """What a record of one kind holds: its key field and each field's type."""

    kind: str
    key_field: str
    fields: dict[str, FieldType]
    required: frozenset[str]


def _field_type(column_type: TypeEngine[Any]) -> FieldType:
    """The JSON-level type of a column (checked on import, bytes base64-encoded)."""
    base = column_type.impl if isinstance(column_type, TypeDecorator) else column_type
    checks: list[tuple[type[TypeEngine[Any]], FieldType]] = [
        (LargeBinary, "bytes"),
        (JSON, "json"),
        (Boolean, "bool"),
        (Float, "float"),
        (Integer, "int"),
        (String, "text"),
        (Text, "text"),
    ]
    for kind, name in checks:
        if isinstance(base, kind):
            return name
    return "json"  # pragma: no cover - every column today has one of the types above


@cache
def kind_specs() -> dict[str, KindSpec]:
    """Every kind the store keeps, in the store's order, with its fields."""
    specs: dict[str, KindSpec] = {}
    for kind, table in KINDS.items():
        columns = [table.table.c[name] for name in table.value_columns]
        specs[kind] = KindSpec(
            kind=kind,
            key_field=table.key_column,
            fields={c.name: _field_type(c.type) for c in columns},
            required=frozenset(c.name for c in columns if not c.nullable),
        )
    return specs


def schema_version() -> int:
    """The store schema version this mindspace writes (its newest migration)."""
    return max(m.version for m in MIGRATIONS)


def encode_record(spec: KindSpec, record: Mapping[str, Any]) -> str:
    """One record line (without the newline): bytes become base64 text."""
    fields = {
        name: (
            base64.b64encode(bytes(value)).decode("ascii")
            if spec.fields[name] == "bytes" and value is not None
            else value
        )
        for name, value in record.items()
    }
    key = str(record[spec.key_field])
    return json.dumps({"kind": spec.kind, "key": key, "fields": fields}, ensure_ascii=False)


_CHECKS: dict[FieldType, tuple[type, ...]] = {
    "text": (str,),
    "int": (int,),
    "float": (int, float),
    "bool": (bool,),
    "bytes": (str,),
}


def decode_fields(spec: KindSpec, key: object, fields: object, where: str) -> dict[str, Any]:
    """A record's fields as the store takes them, checked against the kind's spec.

    Args:
        spec: The record's kind.
        key: The line's ``key``.
        fields: The line's ``fields``.
        where: ``"line N"``, for messages.

    Raises:
        TransferError: a field is unknown, missing, of the wrong type, or the key does
            not match the key field.
    """
    if not isinstance(fields, dict):
        raise TransferError(f"{where}: 'fields' must be an object, got {type(fields).__name__!r}.")
    unknown = sorted(set(fields) - set(spec.fields))
    if unknown:
        raise TransferError(
            f"{where}: a {spec.kind!r} record has unknown fields {unknown!r}; the file may "
            "come from a newer mindspace (upgrade this one) or have been edited by hand."
        )
    missing = sorted(spec.required - {k for k, v in fields.items() if v is not None})
    if missing:
        raise TransferError(
            f"{where}: a {spec.kind!r} record lacks required fields {missing!r}; "
            "restore them or export the assistant again."
        )
    decoded: dict[str, Any] = {}
    for name, value in fields.items():
        kind = spec.fields[name]
        allowed = _CHECKS.get(kind)
        if value is not None and allowed is not None:
            wrong_bool = isinstance(value, bool) and kind != "bool"
            if wrong_bool or not isinstance(value, allowed):
                raise TransferError(
                    f"{where}: field {name!r} of a {spec.kind!r} record must be {kind}, "
                    f"got {value!r}; fix the value or export the assistant again."
                )
        if kind == "bytes" and value is not None:
            try:
                value = base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                raise TransferError(
                    f"{where}: field {name!r} of a {spec.kind!r} record is not base64 text; "
                    "export the assistant again."
                ) from None
        decoded[name] = value
    if str(decoded.get(spec.key_field)) != key:
        raise TransferError(
            f"{where}: key {key!r} differs from the record's {spec.key_field!r} "
            f"({decoded.get(spec.key_field)!r}); make them equal or export again."
        )
    return decoded
