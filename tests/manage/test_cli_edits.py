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
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on

Teach = Callable[[Assistant], Awaitable[dict[str, str]]]
Cli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
async def db(tmp_path: Path, clock: ManualClock, settings: Settings, teach: Teach) -> Path:
    path = tmp_path / "edits.db"
    store = SqlStore.from_path(path)
    try:
        assistant = assistant_on(
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
    # The tool calls' history records of her memory, entry and profile would be blanked.
    assert "Copies of its words would be blanked in: history (3)." in dry.stdout
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


def test_goal_and_entity_edits_show_in_the_history(cli: Cli) -> None:
    added = cli("tool", "add_goal", "--args", '{"description": "Fix the gate"}')
    assert added.returncode == 0, added.stderr
    goal_id = json.loads(added.stdout)["goal_id"]
    edited = cli("goals", "edit", goal_id, "--priority", "high", "--progress", "40", "--json")
    assert edited.returncode == 0, edited.stderr
    assert json.loads(edited.stdout)["priority"] == "high"
    assert "Fix the gate" in cli("goals").stdout  # the tree still shows without a subcommand

    # The table numbers each observation the way --remove-observation counts them.
    shown = cli("entities", "show", "Alice").stdout.splitlines()
    assert [line.split()[0] for line in shown if "Alice came" in line] == ["0"]
    entity = cli(
        "entities", "edit", "Alice", "--set", "drink=dark ale", "--remove-observation", "0"
    )
    assert entity.returncode == 0, entity.stderr
    profile = json.loads(cli("entities", "show", "Alice", "--json").stdout)
    assert profile["attributes"]["drink"] == "dark ale"
    assert profile["observations"] == []

    deleted = cli("goals", "delete", goal_id, "--actor", "innkeeper")
    assert deleted.returncode == 0, deleted.stderr
    assert json.loads(cli("goals", "--json").stdout) == []

    history = json.loads(cli("history", "--limit", "3", "--json").stdout)
    changes = [(e["action"], e["target_kind"], e["actor"]) for e in history["entries"]]
    assert changes == [
        ("delete", "goal", "innkeeper"),
        ("update", "entity", "cli"),
        ("update", "goal", "cli"),
    ]


def test_goal_and_entity_mistakes_are_one_line_errors(cli: Cli) -> None:
    absent = cli("goals", "delete", "goal_9_9")
    assert absent.returncode == 1
    assert absent.stderr.startswith("error: Goal 'goal_9_9' does not exist")
    assert absent.stderr.count("\n") == 1
    out_of_range = cli("entities", "edit", "Alice", "--remove-observation", "5")
    assert out_of_range.returncode == 1
    assert out_of_range.stderr.startswith("error: Observation index 5 is out of range")
    assert "Traceback" not in out_of_range.stderr
    malformed = cli("entities", "edit", "Alice", "--set", "drink")
    assert malformed.returncode == 2
    assert malformed.stderr.startswith("error: --set takes KEY=VALUE, not 'drink'")
    bad_priority = cli("goals", "edit", "goal_9_9", "--priority", "urgent")
    assert bad_priority.returncode == 2
