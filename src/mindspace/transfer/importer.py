"""Reading an export into a store: checked in full first, then written all or nothing.

The file is read twice. The first pass checks every line (and the end line's counts,
so a file cut short is refused) without writing; the second writes the records in
batches under a staging key, then gives the staging assistant the wanted key in one
transaction (:func:`mindspace.storage.swap.promote`). A failure at any point removes
the staging copy: the wanted key either has the whole import or is untouched.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mindspace.config import Settings
from mindspace.errors import (
    AlreadyExistsError,
    AssistantNotFoundError,
    ConfigError,
    MindspaceError,
)
from mindspace.limits import MAX_JSON_DEPTH
from mindspace.state.port import Change, Store
from mindspace.storage.swap import drop, promote, sql_store, staging_key
from mindspace.transfer.checks import RecordChecker, field_limits
from mindspace.transfer.format import (
    FORMAT,
    VERSION,
    Progress,
    TransferError,
    decode_fields,
    kind_specs,
    schema_version,
)
from mindspace.validation import assistant_key_problem, json_depth_exceeds

__all__ = ["ImportSummary", "import_assistant", "read_header"]

logger = logging.getLogger("mindspace.transfer")


@dataclass
class ImportSummary:
    """What an import wrote."""

    assistant: str
    source: str
    replaced: bool
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def records(self) -> int:
        """How many records in all."""
        return sum(self.counts.values())


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        with path.open(encoding="utf-8") as handle:
            yield from enumerate(handle, start=1)
    except OSError as exc:
        raise TransferError(f"Cannot read {str(path)!r}: {exc.strerror}; check the path.") from exc
    except UnicodeDecodeError:
        raise TransferError(
            f"{str(path)!r} is not UTF-8 text; give a file written by `mindspace export`."
        ) from None


_LINE_DEPTH = MAX_JSON_DEPTH + 4
"""A line wraps a record's value in a few levels ({"fields": {"value": ...}})."""


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _object(number: int, line: str) -> dict[str, Any]:
    if json_depth_exceeds(line, _LINE_DEPTH):
        raise TransferError(
            f"line {number}: JSON nested deeper than {_LINE_DEPTH} levels; no export "
            "nests that deep - was the file edited?"
        )
    try:
        # NaN and Infinity are not JSON: no database stores them in a JSON column.
        value = json.loads(line, parse_constant=_no_constant)
    except ValueError as exc:
        if not isinstance(exc, json.JSONDecodeError):
            raise TransferError(f"line {number}: {exc}; replace it with a number.") from None
        raise TransferError(
            f"line {number}: not JSON ({exc.msg} at column {exc.colno}); every line of an "
            "export is one JSON object - was the file edited or cut short?"
        ) from None
    if not isinstance(value, dict):
        raise TransferError(f"line {number}: expected a JSON object, got {line.strip()[:40]!r}.")
    return value


def read_header(path: Path) -> dict[str, Any]:
    """The header (line 1) of the export at ``path``, checked.

    Raises:
        TransferError: no header, another format, or a version this mindspace cannot read.
    """
    for number, line in _lines(path):
        header = _object(number, line)
        if header.get("format") != FORMAT:
            raise TransferError(
                f"line 1: not a mindspace export (format {header.get('format')!r}, expected "
                f"{FORMAT!r}); give a file written by `mindspace export`."
            )
        version = header.get("version")
        if type(version) is not int or version < 1 or version > VERSION:
            raise TransferError(
                f"line 1: export format version {version!r} is not one this mindspace reads "
                f"(1 to {VERSION}); upgrade mindspace to import it."
            )
        schema = header.get("schema_version")
        if type(schema) is not int or schema > schema_version():
            raise TransferError(
                f"line 1: the export has schema version {schema!r}, newer than this "
                f"mindspace's {schema_version()!r}; upgrade mindspace to import it."
            )
        if not isinstance(header.get("assistant"), str) or not header["assistant"]:
            raise TransferError("line 1: the header names no 'assistant'; add the source key.")
        return header
    raise TransferError(f"{str(path)!r} is empty; give a file written by `mindspace export`.")


def _records(
    path: Path, checker: RecordChecker | None = None
) -> Iterator[tuple[int, str, str, dict[str, Any]]]:
    """(line number, kind, key, fields) of every record, checked; then the end line's check.

    With a ``checker``, each record is also checked as the assistant will read it.
    """
    specs = kind_specs()
    counts: dict[str, int] = {}
    end: dict[str, Any] | None = None
    last = 0
    for number, line in _lines(path):
        last = number
        if number == 1:
            continue
        if end is not None:
            raise TransferError(f"line {number}: text after the end line; remove it.")
        value = _object(number, line)
        if "end" in value:
            end = value
            continue
        kind = value.get("kind")
        spec = specs.get(kind) if isinstance(kind, str) else None
        if spec is None:
            raise TransferError(
                f"line {number}: unknown record kind {kind!r} (this mindspace knows "
                f"{sorted(specs)!r}); upgrade mindspace or remove the line."
            )
        key = value.get("key")
        if not isinstance(key, str):
            raise TransferError(f"line {number}: the record has no string 'key'; add one.")
        fields = decode_fields(spec, key, value.get("fields"), f"line {number}")
        if checker is not None:
            checker.check(spec.kind, fields, f"line {number}")
        counts[spec.kind] = counts.get(spec.kind, 0) + 1
        yield number, spec.kind, key, fields
    if end is None:
        raise TransferError(
            f"the export ends at line {last} without its end line: the file was cut short; "
            "export the assistant again."
        )
    expected = {k: v for k, v in (end.get("counts") or {}).items() if v}
    if expected != counts:
        raise TransferError(
            f"the end line counts {expected!r} records but the file holds {counts!r}; "
            "lines were lost or added - export the assistant again."
        )


def import_assistant(
    store: Store,
    path: Path,
    *,
    key: str | None = None,
    replace: bool = False,
    progress: Progress | None = None,
    progress_every: int = 10_000,
    batch: int = 1000,
    settings: Settings | None = None,
) -> ImportSummary:
    """Import the export at ``path`` into ``store`` as the assistant ``key``.

    Every record is checked before anything is written: its fields' types, its text
    (no lone surrogate, no NUL, the limits of ``settings``), its vectors, and the
    model the engine reads it with (enums, ranges, shapes).

    Args:
        store: A SQL store (SQLite or PostgreSQL).
        path: The export file.
        key: The key to import under; the header's source key when None.
        replace: Replace an existing assistant of that key (otherwise refuse).
        progress: Called with a short line every ``progress_every`` records.
        progress_every: How often ``progress`` is called.
        batch: Records written per commit.
        settings: Where the text limits come from (the environment's when None).

    Raises:
        TransferError: the file is invalid (the message names the line and field), or
            the key is not one the API accepts.
        AlreadyExistsError: the key is taken and ``replace`` is False.
    """
    sql_store(store)
    header = read_header(path)
    target = key if key is not None else str(header["assistant"])
    problem = assistant_key_problem(target)
    if problem is not None and key is None:
        raise TransferError(
            f"line 1: the export's assistant key cannot be used here. {problem}; import it "
            "under another with --as KEY."
        )
    if problem is not None:
        raise ConfigError(f"{problem}.")
    checker = RecordChecker(field_limits(settings or Settings()))
    # Also checks the key itself (ConfigError) before anything is read or written.
    if _exists(store, target) and not replace:
        raise AlreadyExistsError(
            f"An assistant {target!r} already exists",
            "Pass --replace to overwrite it, or --as NEW_KEY to import beside it.",
        )
    seen: dict[str, set[str]] = {}
    checked = 0
    for number, kind, record_key, _ in _records(path, checker):
        keys = seen.setdefault(kind, set())
        if record_key in keys:
            raise TransferError(
                f"line {number}: a second {kind!r} record with key {record_key!r}; "
                "remove one of them."
            )
        keys.add(record_key)
        checked += 1
        if progress is not None and checked % progress_every == 0:
            progress(f"checked {checked} records")
    seen.clear()
    summary = ImportSummary(assistant=target, source=str(header["assistant"]), replaced=False)
    staging = store.open_assistant(staging_key(), create=True)
    try:
        revision = staging.revision
        pending: list[Change] = []
        for _, kind, record_key, fields in _records(path):
            pending.append(Change(kind, record_key, fields, new=True))
            summary.counts[kind] = summary.counts.get(kind, 0) + 1
            if len(pending) >= batch:
                revision = store.commit(staging.id, revision, pending)
                pending = []
            if progress is not None and summary.records % progress_every == 0:
                progress(f"imported {summary.records}/{checked} records")
        if pending:
            store.commit(staging.id, revision, pending)
        summary.replaced = _exists(store, target)
        created = header.get("assistant_created_at")
        promote(
            store,
            staging.id,
            target,
            created if isinstance(created, str) else None,
            replace=replace,
        )
    except BaseException:
        try:
            drop(store, staging.id)
        except MindspaceError as exc:  # the import's own error matters more; say both
            logger.warning("Could not remove the failed import's staging copy: %s", exc)
        raise
    return summary


def _exists(store: Store, key: str) -> bool:
    try:
        store.open_assistant(key, create=False)
    except AssistantNotFoundError:
        return False
    return True
