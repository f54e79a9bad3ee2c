"""End-to-end tests of the ``mindspace`` command on a temp SQLite file.

Most run the command's entry point in the test's process (``run_cli``: the environment
and streams are the call's own); a restart and the demo run in real processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import mindspace
from mindspace import Settings, open_assistant
from mindspace.journal.records import JournalEntry, ReflectionState
from mindspace.memory.records import EntityProfile, Memory, MemoryLinks
from mindspace.offline import OFFLINE_NOTICE, OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing.inspect import stored_records
from mindspace.tools import default_registry

Cli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    """The environment without MINDSPACE_* settings or terminal hints, data dir in tmp_path."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MINDSPACE_") and k not in ("FORCE_COLOR", "COLUMNS", "LINES")
    }
    env["MINDSPACE_DATA_DIR"] = str(tmp_path)
    env["PYTHONIOENCODING"] = "utf-8"
    return env


@pytest.fixture
def cli_db(tmp_path: Path) -> Path:
    """The database file passed with --db."""
    return tmp_path / "cli.db"


@pytest.fixture
def cli(cli_env: dict[str, str], cli_db: Path, run_cli: Cli) -> Cli:
    """Run ``mindspace ARGS... --db <db>`` through its entry point, in this process."""

    def run(
        *args: str, use_db: bool = True, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        command = [*args, "--db", str(cli_db)] if use_db else list(args)
        return run_cli(command, env=env or cli_env)

    return run


@pytest.fixture
def spawned_cli(cli_env: dict[str, str], cli_db: Path) -> Cli:
    """Run ``mindspace ARGS... --db <db>`` in a fresh process."""

    def run(
        *args: str, use_db: bool = True, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "mindspace.hosts.cli.app", *args]
        if use_db:
            command += ["--db", str(cli_db)]
        return subprocess.run(
            command,
            env=env or cli_env,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=60,
            check=False,
        )

    return run


def _error_line(process: subprocess.CompletedProcess[str]) -> str:
    lines = process.stderr.splitlines()
    assert len(lines) == 1, f"expected one stderr line, got {process.stderr!r}"
    assert lines[0].startswith("error: ")
    return lines[0]


def test_version(cli: Cli) -> None:
    process = cli("--version", use_db=False)
    assert process.returncode == 0
    assert process.stdout.strip() == f"mindspace {mindspace.__version__}"


def test_tool_list_names_every_tool(cli: Cli) -> None:
    process = cli("tool", "list")
    assert process.returncode == 0, process.stderr
    for name in default_registry().names():
        assert name in process.stdout
    assert "ASYNC_REQUIRED" in process.stdout  # decompose_goal's category
    assert "required" in process.stdout  # parameters are described


def test_added_goal_survives_a_restart(spawned_cli: Cli) -> None:
    cli = spawned_cli  # two processes: nothing carries over but the database file
    added = cli("tool", "add_goal", "--args", '{"description": "Fix the gate"}')
    assert added.returncode == 0, added.stderr
    result = json.loads(added.stdout)
    assert result["success"] is True
    goal_id = result["goal_id"]
    assert goal_id.startswith("goal_")

    shown = cli("goals")
    assert shown.returncode == 0, shown.stderr
    assert "Fix the gate" in shown.stdout
    assert goal_id in shown.stdout
    assert "0%" in shown.stdout


def test_default_database_is_in_the_data_dir(cli: Cli, tmp_path: Path) -> None:
    process = cli("tool", "add_goal", "--args", '{"description": "Sweep"}', use_db=False)
    assert process.returncode == 0, process.stderr
    assert (tmp_path / "mindspace.db").is_file()


def test_invalid_json_args_exit_2_with_one_error_line(cli: Cli) -> None:
    process = cli("tool", "add_goal", "--args", "{bad json")
    assert process.returncode == 2
    line = _error_line(process)
    assert "--args is not valid JSON" in line
    assert "'{bad json'" in line
    assert "description (string, required)" in line


def test_args_must_be_an_object(cli: Cli) -> None:
    process = cli("tool", "add_goal", "--args", '["Fix the gate"]')
    assert process.returncode == 2
    assert "must be a JSON object" in _error_line(process)


def test_unknown_tool_suggests_the_closest_name(cli: Cli) -> None:
    process = cli("tool", "add_gaol")
    assert process.returncode == 1
    line = _error_line(process)
    assert "'add_gaol'" in line
    assert "'add_goal'" in line
    result = json.loads(process.stdout)
    assert result["success"] is False
    assert "add_goal" in result["closest_tools"]


def test_failed_tool_exits_1_and_prints_its_result(cli: Cli) -> None:
    process = cli("tool", "update_goal", "--args", '{"goal_id": "goal_9_9", "progress": 10}')
    assert process.returncode == 1
    line = _error_line(process)
    assert "goal_9_9" in line
    assert " - " in line  # the suggestion follows the error
    result = json.loads(process.stdout)
    assert result["success"] is False
    assert result["suggestion"]


def test_invalid_arguments_for_a_tool_exit_1(cli: Cli) -> None:
    process = cli("tool", "add_goal", "--args", '{"priority": "urgent"}')
    assert process.returncode == 1
    assert "Invalid arguments for 'add_goal'" in _error_line(process)


def test_status_json_has_token_usage(cli: Cli) -> None:
    cli("tool", "noop")
    process = cli("status", "--json")
    assert process.returncode == 0, process.stderr
    status = json.loads(process.stdout)
    assert status["token_usage"]["model_limit"] == 128_000
    assert status["token_advisory"]["level"] == "normal"
    assert status["session_metrics"]["successful_calls"] == 1


def test_status_is_readable(cli: Cli) -> None:
    assert cli("tool", "noop", "--assistant", "barkeep").returncode == 0  # status only reads
    process = cli("status", "--assistant", "barkeep")
    assert process.returncode == 0, process.stderr
    for label in ("'barkeep'", "Token usage", "NORMAL", "Loop", "Session", "mindspace-offline"):
        assert label in process.stdout


def test_status_shows_the_night_work_left(cli: Cli) -> None:
    for n in range(3):
        args = json.dumps({"content": f"Bob paid {n} coins for ale", "source_entity": "Bob"})
        assert cli("tool", "add_journal_entry", "--args", args).returncode == 0
    process = cli("status")
    assert process.returncode == 0, process.stderr
    assert "Night work left" in process.stdout
    assert "3 journal entries unscored, 3 unconsolidated, 0 memories unlinked" in " ".join(
        process.stdout.split()
    )
    backlog = json.loads(cli("status", "--json").stdout)["night_backlog"]
    assert backlog == {"unscored": 3, "unconsolidated": 3, "unlinked": 0}


def test_projects_mark_the_active_one(cli: Cli) -> None:
    for key in ("build_tavern", "quest_design"):
        args = json.dumps({"project_key": key, "summary": f"Work on {key}"})
        assert cli("tool", "create_project", "--args", args).returncode == 0
    process = cli("projects")
    assert process.returncode == 0, process.stderr
    assert "build_tavern" in process.stdout
    assert "quest_design" in process.stdout
    active_row = next(line for line in process.stdout.splitlines() if "▶ │" in line)
    assert "build_tavern" in active_row


def test_empty_workspace_says_how_to_start(cli: Cli) -> None:
    assert cli("tool", "noop").returncode == 0  # creates the assistant; goals only reads
    goals = cli("goals")
    assert goals.returncode == 0, goals.stderr
    assert "no goals yet" in goals.stdout
    assert "add_goal" in goals.stdout
    projects = cli("projects")
    assert projects.returncode == 0, projects.stderr
    assert "create_project" in projects.stdout


def test_unusable_database_path_is_one_error_line(cli: Cli, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    process = cli("tool", "noop", "--db", str(blocker / "sub" / "x.db"), use_db=False)
    assert process.returncode == 1
    line = _error_line(process)
    assert "Cannot create the directory" in line
    assert "MINDSPACE_DATA_DIR or --db" in line


def test_bad_setting_is_one_error_line(cli: Cli, cli_env: dict[str, str]) -> None:
    process = cli("status", env={**cli_env, "MINDSPACE_MODEL_LIMIT": "lots"})
    assert process.returncode == 1
    assert "MINDSPACE_MODEL_LIMIT" in _error_line(process)


def test_demo_runs_and_leaves_its_workspace(spawned_cli: Cli, cli_db: Path, tmp_path: Path) -> None:
    cli = spawned_cli  # the demo as a user runs it, in its own process
    process = cli("demo")
    assert process.returncode == 0, process.stderr
    out = process.stdout
    assert OFFLINE_NOTICE.split(":")[0] in out
    assert "Alice (say): Good afternoon! Could you start a project" in out
    assert "fell asleep: scheduled sleep window 23:00-06:00" in out
    assert "reflection: 3 insights stored" in out
    assert "woke up: urgent whisper from Carol" in out
    assert "Summary" in out
    assert "0 failed" in out
    assert str(cli_db) in out

    assistant = open_assistant(
        "barkeep",
        settings=Settings(data_dir=tmp_path, embedder="none"),
        db=cli_db,
        create=False,
        llm=OfflineLLM(announce=False),
    )
    try:
        goals = assistant.views.goals().all()
        tavern = next(g for g in goals if g.description.startswith("Build a tavern with a bar"))
        assert tavern.status == "completed"
        assert len(tavern.subtask_ids) == 5
        desk = assistant.views.projects()
        assert {p.key for p in desk.all()} == {"build_tavern", "design_quests", "brew_house_ale"}
        assert desk.active_key() == "build_tavern"
        facts = assistant.views.session_memory().key_facts
        assert "Alice prefers dark ale by the fire" in facts
        unit = assistant._core.read()
        alice = unit.get(EntityProfile, "Alice")
        assert alice is not None
        assert alice.attributes["preference"] == "dark ale by the fire"
        carol = unit.get(EntityProfile, "Carol")
        assert carol is not None
        assert carol.relationship.state == "friend"
        assert unit.doc(ReflectionState).reflection_count == 1
        entries = unit.all(JournalEntry)
        assert sum(1 for e in entries if e.is_synthesis) == 3
        assert not any("routine" in e.content for e in entries)  # pruned while dreaming
        assert any("secret passage" in e.content for e in entries)  # important: kept
        assert len(stored_records(assistant, Memory)) > 20
        assert any(links.linked_to for links in stored_records(assistant, MemoryLinks))
        assert assistant.views.mode().mode == "awake"  # the urgent whisper woke it
    finally:
        if isinstance(assistant._core.store, SqlStore):
            assistant._core.store.close()

    shown = cli("goals", "--all", "--assistant", "barkeep")
    assert "Build a tavern with a bar" in shown.stdout


def test_demo_runs_again_on_a_fresh_assistant(cli: Cli) -> None:
    assert cli("demo").returncode == 0
    again = cli("demo")
    assert again.returncode == 0, again.stderr
    assert "'barkeep-2'" in again.stdout
