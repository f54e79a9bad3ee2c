"""The conventions every command follows: --json on stdout, --db/--assistant, one error line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

from mindspace.hosts.cli.app import app

# Commands that print data take --json; the rest act (demo, chat) or serve (serve, worker, mcp).
PRINTS_DATA = {
    "bench locomo",
    "doctor",
    "entities",
    "entities show",
    "goals",
    "journal",
    "journal search",
    "memories",
    "memories search",
    "mode",
    "projects",
    "sleep",
    "status",
    "tool",
    "wake",
}
# Commands that open no single assistant: serve and worker serve every one in the database,
# bench locomo builds its own temporary databases, doctor only probes the LLM.
NO_ASSISTANT = {
    "bench locomo",
    "doctor",
    "import",
    "serve",
    "worker",
}  # import: the file's key, or --as
NO_DB = {"bench locomo", "doctor"}


def _commands() -> dict[str, Any]:
    found: dict[str, Any] = {}

    def walk(command: Any, path: str) -> None:
        if path:
            found[path] = command
        for name, sub in (getattr(command, "commands", None) or {}).items():
            walk(sub, f"{path} {name}".strip())

    walk(typer.main.get_command(app), "")
    return found


def _options(command: Any) -> set[str]:
    return {opt for param in command.params for opt in getattr(param, "opts", [])}


def test_every_command_that_prints_data_takes_json() -> None:
    commands = _commands()
    assert sorted(PRINTS_DATA - set(commands)) == []
    assert sorted(path for path in PRINTS_DATA if "--json" not in _options(commands[path])) == []
    # --json is a switch everywhere (bench once took a file path here; that is --output now)
    for path in PRINTS_DATA:
        [param] = [p for p in commands[path].params if "--json" in getattr(p, "opts", [])]
        assert param.is_flag, path


def test_db_and_assistant_wherever_an_assistant_is_opened() -> None:
    commands = _commands()
    leaves = {p: c for p, c in commands.items() if not getattr(c, "commands", None)} | {
        p: c for p, c in commands.items() if p in {"memories", "entities", "journal"}
    }
    lacking_db = sorted(
        p for p, c in leaves.items() if p not in NO_DB and "--db" not in _options(c)
    )
    lacking_key = sorted(
        p for p, c in leaves.items() if p not in NO_ASSISTANT and "--assistant" not in _options(c)
    )
    assert lacking_db == []
    assert lacking_key == []


@pytest.fixture
def run(tmp_path: Path) -> Any:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MINDSPACE_") and k not in ("FORCE_COLOR", "COLUMNS")
    }
    env |= {"MINDSPACE_DATA_DIR": str(tmp_path), "MINDSPACE_EMBEDDER": "hashing"}

    def call(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mindspace.hosts.cli.app", *args],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            check=False,
        )

    return call


def test_json_output_is_only_json_on_stdout(run: Any) -> None:
    added = run("tool", "add_goal", "--args", '{"description": "Fix the gate"}')
    assert added.returncode == 0, added.stderr
    goals = json.loads(run("goals", "--json").stdout)
    assert [g["description"] for g in goals] == ["Fix the gate"]
    assert json.loads(run("projects", "--json").stdout) == {"active": None, "projects": []}
    tools = json.loads(run("tool", "list", "--json").stdout)
    assert "add_goal" in {t["function"]["name"] for t in tools}
    asleep = run("sleep", "--json")
    assert asleep.returncode == 0, asleep.stderr
    assert json.loads(asleep.stdout)["mode"] == "sleep"
    assert "is asleep" in asleep.stderr  # the narration is still shown, on stderr
    night = run("sleep", "--run", "--ticks", "1", "--json")
    assert json.loads(night.stdout)["ticks_run"] == 1
    woken = run("wake", "--json")
    assert json.loads(woken.stdout)["mode"] == "awake"


def test_usage_errors_are_one_line_with_status_2(run: Any) -> None:
    for args, expected in (
        (("goals", "--nosuch"), "error: No such option: --nosuch. See: mindspace goals --help"),
        (("nosuch",), "error: No such command 'nosuch'. See: mindspace --help"),
        (("status", "--db"), "error: Option '--db' requires an argument."),
    ):
        done = run(*args)
        assert done.returncode == 2, done.stderr
        [line] = done.stderr.splitlines()
        assert line.startswith(expected)
        assert done.stdout == ""


def test_help_paragraphs_are_single_lines_so_the_terminal_wraps_them() -> None:
    """A docstring's source line breaks must not reach the terminal (demo, sleep broke)."""
    broken = {
        path: paragraph
        for path, command in _commands().items()
        for paragraph in (command.help or "").split("\n\n")
        if "\n" in paragraph.strip()
    }
    assert broken == {}


def test_a_missing_optional_package_names_its_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import tomllib

    from mindspace.hosts.cli import app as cli_app
    from mindspace.hosts.cli.common import _EXTRA_OF_MODULE, missing_extra

    extras = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert {e for e in _EXTRA_OF_MODULE.values() if e not in extras} == set()
    assert missing_extra(ModuleNotFoundError("No module named 'yaml'", name="yaml")) is None

    def no_fleet(*args: object, **kwargs: object) -> None:
        raise ModuleNotFoundError("No module named 'procrastinate'", name="procrastinate")

    monkeypatch.setattr(cli_app, "load_settings", no_fleet)
    with pytest.raises(SystemExit) as exited:
        cli_app.main(["status"])
    assert exited.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("error: This needs the 'procrastinate' package of the 'fleet' extra")
    assert "pip install -e '.[fleet]'" in err
