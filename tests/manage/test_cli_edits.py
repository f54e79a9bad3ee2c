"""``mindspace memories/journal edit|delete``, ``entities forget`` and ``history``, in real
subprocesses on a SQLite file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from mindspace import Assistant, ManualClock, Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.llm import OfflineLLM
from mindspace.storage import SqlStore

Teach = Callable[[Assistant], Awaitable[dict[str, str]]]
Cli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
async def db(tmp_path: Path, clock: ManualClock, settings: Settings, teach: Teach) -> Path:
    path = tmp_path / "edits.db"
    store = SqlStore.from_path(path)
    try:
        assistant = Assistant.open(
            store,
            "barkeep",
            llm=OfflineLLM(announce=False),
            clock=clock,
            settings=settings,
            embedder=HashingEmbedder(64),
        )
        await teach(assistant)
    finally:
        store.close()
    return path


@pytest.fixture
def cli(tmp_path: Path, db: Path) -> Cli:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MINDSPACE_")}
    env.update(
        MINDSPACE_DATA_DIR=str(tmp_path),
        MINDSPACE_EMBEDDER="hashing",
        MINDSPACE_ASSISTANT_KEY="barkeep",
        MINDSPACE_LLM_PROVIDER="offline",
        PYTHONIOENCODING="utf-8",
        COLUMNS="200",
    )

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mindspace.hosts.cli.app", *args, "--db", str(db)],
            env=env,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=120,
            check=False,
        )

    return run


def test_edit_delete_forget_and_history_from_the_command_line(cli: Cli) -> None:
    edited = cli("memories", "edit", "mem_3", "--content", "The cellar is dry", "--json")
    assert edited.returncode == 0, edited.stderr
    assert json.loads(edited.stdout)["content"] == "The cellar is dry"

    deleted = cli("journal", "delete", "2", "--actor", "innkeeper")
    assert deleted.returncode == 0, deleted.stderr
    assert "Journal entry 2 deleted" in deleted.stdout

    dry = cli("entities", "forget", "Alice", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "Would forget 'Alice'" in dry.stdout
    assert "Nothing was changed" in dry.stdout
    forgot = cli("entities", "forget", "Alice", "--json")
    assert forgot.returncode == 0, forgot.stderr
    assert json.loads(forgot.stdout)["memory_ids"] == ["mem_1"]

    history = json.loads(cli("history", "--limit", "3", "--json").stdout)
    assert history["total"] == 7 + 3  # the tool calls that filled it, then three edits
    actions = [(e["action"], e["actor"]) for e in history["entries"]]
    assert actions == [("forget", "cli"), ("delete", "innkeeper"), ("update", "cli")]
    table = cli("history")
    assert "forget" in table.stdout
    assert "user:innkeeper" in table.stdout


def test_mistakes_are_one_line_errors(cli: Cli) -> None:
    absent = cli("memories", "delete", "mem_999")
    assert absent.returncode == 1
    assert absent.stderr.startswith("error: Memory 'mem_999' does not exist")
    assert "Traceback" not in absent.stderr
    nothing = cli("journal", "edit", "1")
    assert nothing.returncode == 1
    assert "Nothing to change" in nothing.stderr
    stranger = cli("entities", "forget", "Zed")
    assert stranger.returncode == 1
    assert "Nothing is known about entity 'Zed'" in stranger.stderr
