"""Commands that only read never create a database, a directory or an assistant.

A typo in ``--db`` or ``--assistant`` used to leave a new empty database or assistant
behind and print "no goals yet" as if all were well. Now it is one error line that says
what exists and how to create an assistant, and nothing is written.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from mindspace import open_assistant
from mindspace.errors import AssistantNotFoundError, StorageError
from mindspace.storage import SqlStore

READ_ONLY = [
    ("goals",),
    ("projects",),
    ("status",),
    ("journal",),
    ("journal", "search", "ale"),
    ("memories",),
    ("memories", "search", "ale"),
    ("entities",),
    ("entities", "show", "Alice"),
    ("mode",),
]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """No inherited MINDSPACE_* settings; the data dir is a fresh folder in tmp_path."""
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MINDSPACE_") and k not in ("FORCE_COLOR", "COLUMNS", "LINES")
    }
    clean["MINDSPACE_DATA_DIR"] = str(tmp_path / "data")
    clean["MINDSPACE_EMBEDDER"] = "hashing"
    clean["PYTHONIOENCODING"] = "utf-8"
    return clean


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mindspace.hosts.cli.app", *args],
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )


def _error_line(process: subprocess.CompletedProcess[str]) -> str:
    assert process.returncode == 1, (process.stdout, process.stderr)
    assert "Traceback" not in process.stderr
    lines = process.stderr.splitlines()
    assert len(lines) == 1, f"expected one stderr line, got {process.stderr!r}"
    assert lines[0].startswith("error: ")
    return lines[0]


def _assistants(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [row[0] for row in conn.execute("SELECT key FROM assistants ORDER BY key")]


@pytest.mark.parametrize("command", READ_ONLY, ids=" ".join)
def test_a_missing_database_is_an_error_and_nothing_is_created(
    env: dict[str, str], tmp_path: Path, command: tuple[str, ...]
) -> None:
    missing = tmp_path / "nonexistent" / "dir" / "x.db"
    line = _error_line(_run(env, *command, "--db", str(missing)))
    assert f"No database at {str(missing)!r} (from --db)" in line
    assert "creates nothing" in line
    assert f"mindspace chat --db {missing} --assistant default" in line
    assert not (tmp_path / "nonexistent").exists()
    assert not (tmp_path / "data").exists()


def test_the_default_database_is_not_created_either(env: dict[str, str], tmp_path: Path) -> None:
    line = _error_line(_run(env, "goals", "--assistant", "barkeep"))
    default = tmp_path / "data" / "mindspace.db"
    assert f"No database at {str(default)!r} (from MINDSPACE_DATA_DIR)" in line
    assert "mindspace chat --assistant barkeep" in line
    assert not (tmp_path / "data").exists()


def test_an_unset_data_dir_is_called_the_default(env: dict[str, str], tmp_path: Path) -> None:
    # Naming MINDSPACE_DATA_DIR when nobody set it sent a new user looking for it.
    del env["MINDSPACE_DATA_DIR"]
    env["HOME"] = str(tmp_path / "home")
    env.pop("XDG_DATA_HOME", None)
    line = _error_line(_run(env, "goals"))
    assert "(the default data directory; set MINDSPACE_DATA_DIR or pass --db for another)" in line
    assert "MINDSPACE_DATA_DIR)" not in line
    assert not (tmp_path / "home").exists()


def test_an_assistant_key_from_the_environment_is_named(
    env: dict[str, str], tmp_path: Path
) -> None:
    db = tmp_path / "tavern.db"
    assert _run(env, "tool", "noop", "--db", str(db), "--assistant", "barkeep").returncode == 0
    env["MINDSPACE_ASSISTANT_KEY"] = "cook"
    line = _error_line(_run(env, "goals", "--db", str(db)))
    assert "No assistant 'cook' (from MINDSPACE_ASSISTANT_KEY)" in line
    env["MINDSPACE_ASSISTANT_KEY"] = "barkeep"
    assert _run(env, "goals", "--db", str(db)).returncode == 0


@pytest.fixture(scope="module")
def tavern(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database with the assistants 'barkeep' and 'cook' (shared: the commands only read)."""
    db = tmp_path_factory.mktemp("tavern") / "tavern.db"
    store = SqlStore.from_path(db)
    for key in ("barkeep", "cook"):
        store.open_assistant(key, create=True)
    store.close()
    return db


@pytest.mark.parametrize("command", READ_ONLY, ids=" ".join)
def test_an_unknown_assistant_is_an_error_that_lists_the_existing_ones(
    env: dict[str, str], tavern: Path, command: tuple[str, ...]
) -> None:
    db = tavern
    line = _error_line(_run(env, *command, "--db", str(db), "--assistant", "barkep"))
    assert f"No assistant 'barkep' in {str(db)!r}" in line
    assert "Assistants there: 'barkeep', 'cook'" in line
    assert f"mindspace chat --db {db} --assistant barkep" in line
    assert _assistants(db) == ["barkeep", "cook"]


def test_the_default_assistant_is_not_created_by_a_read(
    env: dict[str, str], tmp_path: Path
) -> None:
    db = tmp_path / "tavern.db"
    assert _run(env, "tool", "noop", "--db", str(db), "--assistant", "barkeep").returncode == 0
    line = _error_line(_run(env, "goals", "--db", str(db)))
    assert (
        "No assistant 'default' (the default; pass --assistant or set MINDSPACE_ASSISTANT_KEY)"
        in line
    )
    assert "Assistants there: 'barkeep'" in line
    assert _assistants(db) == ["barkeep"]


def test_reading_an_existing_assistant_still_works(env: dict[str, str], tmp_path: Path) -> None:
    db = tmp_path / "tavern.db"
    args = ("--db", str(db), "--assistant", "barkeep")
    added = _run(env, "tool", "add_goal", "--args", '{"description": "Fix the gate"}', *args)
    assert added.returncode == 0, added.stderr
    shown = _run(env, "goals", *args)
    assert shown.returncode == 0, shown.stderr
    assert "Fix the gate" in shown.stdout
    assert _assistants(db) == ["barkeep"]


def test_tool_list_needs_no_database(env: dict[str, str], tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent" / "x.db"
    listed = _run(env, "tool", "list", "--db", str(missing))
    assert listed.returncode == 0, listed.stderr
    assert "add_goal" in listed.stdout
    assert not (tmp_path / "nonexistent").exists()
    assert not (tmp_path / "data").exists()


def test_opening_without_create_through_python_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "x.db"
    with pytest.raises(StorageError, match="No database file at"):
        open_assistant("barkeep", db=missing, create=False)
    assert not (tmp_path / "nowhere").exists()
    db = tmp_path / "tavern.db"
    SqlStore.from_path(db).close()
    with pytest.raises(AssistantNotFoundError, match="'barkeep'"):
        open_assistant("barkeep", db=db, create=False)
    assert _assistants(db) == []


def _revision(db: Path, key: str) -> int:
    store = SqlStore.from_path(db)
    try:
        return store.open_assistant(key, create=False).revision
    finally:
        store.close()


def test_reading_commands_leave_the_revision_unchanged(env: dict[str, str], tmp_path: Path) -> None:
    # Opening an assistant used to write session_start; a command that only reads must
    # not bump the revision (a running host would see a conflict it did not cause).
    db = tmp_path / "tavern.db"
    args = ("--db", str(db), "--assistant", "barkeep")
    for tool, payload in (
        ("add_goal", '{"description": "Fix the gate"}'),
        ("add_journal_entry", '{"content": "Alice likes dark ale", "tags": ["alice"]}'),
        ("store_memory", '{"content": "Alice prefers dark ale by the fire"}'),
        ("update_entity_observation", '{"entity_id": "Alice", "observation": "Orders ale"}'),
    ):
        done = _run(env, "tool", tool, "--args", payload, *args)
        assert done.returncode == 0, done.stderr
    before = _revision(db, "barkeep")
    assert before > 0
    for command in READ_ONLY:
        shown = _run(env, *command, *args)
        assert shown.returncode == 0, (command, shown.stdout, shown.stderr)
        assert _revision(db, "barkeep") == before, f"{' '.join(command)} wrote to the assistant"
