"""Imports refuse bad files and taken keys, name the line, and never leave half an assistant."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import select

from mindspace.errors import AlreadyExistsError, ConfigError, StorageError
from mindspace.state import Change
from mindspace.storage import SqlStore
from mindspace.storage.tables import assistants
from mindspace.transfer import TransferError, export_assistant, import_assistant


def _goal(n: int) -> dict[str, Any]:
    return {
        "id": f"g{n}",
        "description": f"goal {n}",
        "priority": "medium",
        "status": "active",
        "progress": 0.25,
        "created": "2025-12-06T10:00:00Z",
        "updated": "2025-12-06T10:00:00Z",
        "parent_id": None,
        "subtask_ids": [],
        "auto_generated": False,
    }


def _memory(n: int) -> dict[str, Any]:
    vector = np.arange(4, dtype=np.float32) + n
    return {
        "id": f"m{n}",
        "content": f"Mira likes dark ale ({n})",
        "source": "explicit",
        "entry_id": None,
        "tags": ["ale"],
        "source_type": "direct",
        "source_trust": 1.0,
        "source_entity": "Mira",
        "importance": 6,
        "importance_method": "heuristic",
        "created_at": "2025-12-06T10:00:00Z",
        "occurred_at": "2025-12-06T10:00:00Z",
        "ref": None,
        "context": None,
        "embedder": "hashing",
        "embedding": vector.tobytes(),
    }


@pytest.fixture
def exported(store: SqlStore, tmp_path: Path) -> Path:
    """An export of 'barkeep': 25 goals, 3 memories with vectors and a doc."""
    aid = store.open_assistant("barkeep", create=True).id
    changes = [Change("goal", f"g{n}", _goal(n), new=True) for n in range(25)]
    changes += [Change("memory", f"m{n}", _memory(n), new=True) for n in range(3)]
    changes.append(Change("doc", "system_prompts", {"name": "system_prompts", "value": {"a": 1}}))
    store.commit(aid, 0, changes)
    path = tmp_path / "mind.jsonl"
    with path.open("w", encoding="utf-8") as out:
        export_assistant(store, "barkeep", out)
    return path


def _keys(url: str) -> list[str]:
    """Every assistant row, staging copies included (``list_assistants`` hides those)."""
    store = SqlStore(url)
    try:
        with store.engine.connect() as conn:
            return list(conn.execute(select(assistants.c.key).order_by(assistants.c.key)).scalars())
    finally:
        store.close()


def _edit(path: Path, number: int, change: Any) -> Path:
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[number - 1] = change(lines[number - 1])
    edited = path.with_name(f"edited-{number}.jsonl")
    edited.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return edited


def test_a_taken_key_is_refused_unless_replace_is_given(store: SqlStore, exported: Path) -> None:
    with pytest.raises(AlreadyExistsError, match="'barkeep' already exists"):
        import_assistant(store, exported)
    aid = store.open_assistant("barkeep", create=False).id
    store.commit(aid, store.revision(aid), [Change("goal", "g0", None)])
    summary = import_assistant(store, exported, replace=True)
    assert summary.replaced
    assert summary.counts == {"goal": 25, "memory": 3, "doc": 1}
    assert store.count(store.open_assistant("barkeep", create=False).id, "goal") == 25
    assert _keys(store.url) == ["barkeep"]  # no staging copy left behind


def test_import_under_another_key_keeps_vectors_and_reports_progress(
    store: SqlStore, exported: Path
) -> None:
    said: list[str] = []
    listed: list[list[str]] = []

    def progress(line: str) -> None:
        said.append(line)
        if line.startswith("imported"):  # mid-write: no server may see the staging copy
            listed.append([info.key for info in store.list_assistants()])
            listed.append(_keys(store.url))

    summary = import_assistant(
        store, exported, key="copy", progress=progress, progress_every=10, batch=7
    )
    assert listed[0] == ["barkeep"]
    assert len(listed[1]) == 2
    assert listed[1][1].startswith("~import-")
    assert summary.assistant == "copy"
    assert summary.source == "barkeep"
    assert summary.records == 29
    original = store.open_assistant("barkeep", create=False).id
    copy = store.open_assistant("copy", create=False).id
    for kind in ("goal", "memory", "doc"):
        assert store.load(copy, kind) == store.load(original, kind)
    assert "checked 20 records" in said
    assert "imported 20/29 records" in said


@pytest.mark.parametrize(
    ("number", "change", "message"),
    [
        (1, lambda line: line.replace('"version": 1', '"version": 2'), "line 1: export format"),
        (3, lambda line: "{not json", "line 3: not JSON"),
        (3, lambda line: line.replace('"goal"', '"gaol"', 1), "line 3: unknown record kind"),
        (4, lambda line: line.replace('"priority"', '"urgency"'), "line 4: .*unknown fields"),
        (5, lambda line: line.replace('"progress": 0.25', '"progress": "half"'), "line 5: field"),
        (6, lambda line: json.dumps({**json.loads(line), "key": "zz"}), "line 6: key 'zz' differs"),
        (7, lambda line: line.replace('"g4"', '"g3"'), "line 7: a second 'goal' record"),
    ],
)
def test_a_bad_line_is_named_and_nothing_is_imported(
    store: SqlStore, exported: Path, number: int, change: Any, message: str
) -> None:
    edited = _edit(exported, number, change)
    with pytest.raises(TransferError, match=message):
        import_assistant(store, edited, key="copy")
    assert _keys(store.url) == ["barkeep"]


def test_a_file_cut_short_is_refused(store: SqlStore, exported: Path) -> None:
    lines = exported.read_text(encoding="utf-8").splitlines()
    cut = exported.with_name("cut.jsonl")
    cut.write_text("\n".join(lines[:10]) + "\n", encoding="utf-8")
    with pytest.raises(TransferError, match="cut short"):
        import_assistant(store, cut, key="copy")
    missing = exported.with_name("missing.jsonl")
    missing.write_text("\n".join(lines[:10] + lines[11:]) + "\n", encoding="utf-8")
    with pytest.raises(TransferError, match="lines were lost"):
        import_assistant(store, missing, key="copy")
    assert _keys(store.url) == ["barkeep"]


def test_a_failure_while_writing_leaves_neither_copy_nor_staging(
    store: SqlStore, exported: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = store.commit
    calls = iter(range(100))

    def failing(assistant_id: int, revision: int, changes: Any) -> int:
        if next(calls) == 2:
            raise StorageError("the disk is full")
        return real(assistant_id, revision, changes)

    monkeypatch.setattr(store, "commit", failing)
    with pytest.raises(StorageError, match="disk is full"):
        import_assistant(store, exported, key="barkeep", replace=True, batch=5)
    assert _keys(store.url) == ["barkeep"]
    monkeypatch.undo()
    aid = store.open_assistant("barkeep", create=False).id
    assert store.count(aid, "goal") == 25  # the replaced assistant is untouched


def test_the_header_says_what_was_exported(store: SqlStore, exported: Path) -> None:
    lines = exported.read_text(encoding="utf-8").splitlines()
    header, end = json.loads(lines[0]), json.loads(lines[-1])
    assert header["format"] == "mindspace-export"
    assert header["version"] == 1
    assert header["assistant"] == "barkeep"
    assert header["schema_version"] >= 7
    assert set(header) >= {"mindspace_version", "exported_at", "assistant_created_at"}
    assert end["counts"]["goal"] == 25
    assert end["counts"]["approval"] == 0
    memory = next(json.loads(line) for line in lines if '"kind": "memory"' in line)
    assert isinstance(memory["fields"]["embedding"], str)  # base64 text
    with pytest.raises(TransferError, match="No assistant 'nobody'"):
        export_assistant(store, "nobody", io.StringIO())


def test_an_invalid_key_is_refused_before_anything_is_written(
    store: SqlStore, exported: Path
) -> None:
    with pytest.raises(ConfigError, match="Invalid assistant key"):
        import_assistant(store, exported, key=" padded ", replace=True)
    assert _keys(store.url) == ["barkeep"]


def _with(path: Path, *records: dict[str, Any]) -> Path:
    """``path`` with ``records`` added before its end line (whose counts follow)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    end = json.loads(lines[-1])
    for record in records:
        end["counts"][record["kind"]] = end["counts"].get(record["kind"], 0) + 1
    added = [json.dumps(r) for r in records]
    edited = path.with_name("added.jsonl")
    edited.write_text("\n".join([*lines[:-1], *added, json.dumps(end)]) + "\n", encoding="utf-8")
    return edited


def _record(kind: str, key: str, **fields: Any) -> dict[str, Any]:
    return {"kind": kind, "key": key, "fields": fields}


_GOAL = _goal(99)
_MEMORY = {**_memory(99), "embedding": None}
_ENTITY = {
    "entity_id": "Eve",
    "entity_type": "player",
    "attributes": {},
    "observations": [],
    "relationship": {},
    "first_seen": "2025-12-06T10:00:00Z",
    "last_seen": "2025-12-06T10:00:00Z",
}


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (_record("goal", "g99", **{**_GOAL, "priority": "urgent!!"}), "field 'priority'"),
        (_record("memory", "m99", **{**_MEMORY, "importance": 999}), "field 'importance'"),
        (_record("memory", "m99", **{**_MEMORY, "source_trust": 5.0}), "field 'source_trust'"),
        (_record("entity", "Eve", **{**_ENTITY, "attributes": [1, 2]}), "field 'attributes'"),
        (
            _record("doc", "session_memory", name="session_memory", value={"key_facts": 5}),
            "field 'key_facts' of a document 'session_memory'",
        ),
        (_record("doc", "working_memory", name="working_memory", value=[1]), "must be an object"),
        (
            _record("memory", "m99", **{**_MEMORY, "embedding": "AAAAAAA="}),
            "5 bytes, not float32",
        ),
        (
            _record("memory", "m99", **{**_MEMORY, "embedding": "AAAAAAAAAAA="}),
            "2 dimensions but line 2",
        ),
        (_record("goal", "g99", **{**_GOAL, "description": "a\ud800"}), "lone surrogate"),
        (_record("goal", "g99", **{**_GOAL, "description": "a\x00b"}), "NUL"),
        (_record("memory", "m99", **{**_MEMORY, "content": "x" * 5_000}), "limit is 4,000"),
    ],
)
def test_a_record_the_assistant_could_not_read_is_refused_naming_line_and_field(
    store: SqlStore, exported: Path, record: dict[str, Any], message: str
) -> None:
    edited = _with(exported, record)
    last = len(edited.read_text(encoding="utf-8").splitlines()) - 1
    with pytest.raises(TransferError, match=f"line {last}: .*{message}"):
        import_assistant(store, edited, key="copy")
    assert _keys(store.url) == ["barkeep"]


@pytest.mark.parametrize(
    ("number", "change", "message"),
    [
        (1, lambda line: line.replace('"version": 1', '"version": true'), "line 1: export format"),
        (3, lambda line: line.replace('"progress": 0.25', '"progress": NaN'), "line 3: NaN"),
        (3, lambda line: "[" * 100_000 + "]" * 100_000, "line 3: JSON nested deeper"),
        (
            1,
            lambda line: line.replace('"barkeep"', '"../../etc/passwd"'),
            "line 1: the export's assistant key .*--as KEY",
        ),
    ],
)
def test_hostile_lines_are_refused_without_a_traceback(
    store: SqlStore, exported: Path, number: int, change: Any, message: str
) -> None:
    edited = _edit(exported, number, change)
    with pytest.raises(TransferError, match=message):
        import_assistant(store, edited, key=None if number == 1 else "copy")
    assert _keys(store.url) == ["barkeep"]


@pytest.mark.parametrize("key", ["../evil", "a b/c", "-dash", "x" * 65])
def test_keys_the_api_refuses_are_never_created(store: SqlStore, exported: Path, key: str) -> None:
    with pytest.raises(ConfigError, match="Invalid assistant key"):
        import_assistant(store, exported, key=key)
    with pytest.raises(ConfigError, match="Invalid assistant key"):
        store.open_assistant(key, create=True)
    assert _keys(store.url) == ["barkeep"]


def test_a_value_longer_than_its_column_is_refused(store: SqlStore, exported: Path) -> None:
    edited = _with(exported, _record("entity", "Eve", **{**_ENTITY, "entity_type": "t" * 40}))
    with pytest.raises(TransferError, match=r"field 'entity_type' .* the limit is 32"):
        import_assistant(store, edited, key="copy")
    assert _keys(store.url) == ["barkeep"]
