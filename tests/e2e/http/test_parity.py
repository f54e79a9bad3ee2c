"""Every tool returns the same result through Python, the CLI and HTTP, good calls and bad
(issue 12); and the CLI refuses ``--args`` nested too deep as a usage error.

Each channel gets its own fresh SQLite file, prepared the same way; the CLI runs through
the ``mindspace`` command's entry point (in this process; the deep-args case spawns a real
one), HTTP through the real app. Ids and timestamps differ between runs (each
channel has its own clock and ids), so they are replaced by placeholders before comparing.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from mindspace import Settings
from mindspace.hosts.http import ServerSettings, create_app
from mindspace.hosts.http.app import build_hub
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on

KEY = "barkeep"

# (tool, --args text). The text is sent as-is by every channel: the CLI as --args, HTTP as
# the body, Python as the parsed object.
CALLS: list[tuple[str, str]] = [
    ("add_goal", '{"description": "Fix the gate", "priority": "high"}'),
    ("add_goal", '{"description": "Fix the \\ud800 gate"}'),
    ("add_goal", '{"description": "' + "x" * 501 + '"}'),
    ("add_goal", '{"description": 7}'),
    ("add_goal", '{"description": "Fix it", "colour": "red"}'),
    ("create_project", '{"project_key": "tavern", "summary": "Already there"}'),
    ("update_system_prompt", '{"new_prompt": "be kind \\ud800 always", "reasoning": "r"}'),
    ("store_memory", '{"content": "Bob fixes roofs", "source_entity": "' + "a" * 129 + '"}'),
    ("add_journal_entry", '{"content": "Alice opened a shop", "tags": ["trade"]}'),
    ("list_projects", "{}"),
    ("no_such_tool", "{}"),
]

_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T[\d:.]+(Z|[+-]\d{2}:?\d{2})?$")
_ID_KEYS = re.compile(r"(^|_)id$|_ids$")


def _normal(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _normal(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_normal(v, key) for v in value]
    if isinstance(value, str) and (_TIME.match(value) or _ID_KEYS.search(key)):
        return "<varies>"
    if key in {"created_at", "last_active", "session_start", "last_updated"}:
        return "<varies>"
    return value


def _settings(folder: Path) -> Settings:
    return Settings(data_dir=folder, embedder="hashing")


async def _prepare(folder: Path) -> Path:
    """A database with the assistant and one project, the same for every channel."""
    await asyncio.to_thread(folder.mkdir)
    db = folder / "state.db"
    store = SqlStore.from_path(db)
    try:
        assistant = assistant_on(
            store, KEY, settings=_settings(folder), llm=OfflineLLM(announce=False)
        )
        await assistant.call_tool("create_project", {"project_key": "tavern", "summary": "Run it"})
    finally:
        store.close()
    return db


def _env(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MINDSPACE_")}
    env.update(
        MINDSPACE_DATA_DIR=str(folder), MINDSPACE_EMBEDDER="hashing", PYTHONIOENCODING="utf-8"
    )
    return env


def _cli(folder: Path, db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The ``mindspace`` command in a real process."""
    return subprocess.run(
        [sys.executable, "-m", "mindspace.hosts.cli.app", *args, "--db", str(db), "-a", KEY],
        env=_env(folder),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("tool", "args"), CALLS, ids=[f"{i:02d}-{c[0]}" for i, c in enumerate(CALLS)]
)
async def test_a_tool_answers_the_same_through_python_cli_and_http(
    tmp_path: Path, tool: str, args: str, run_cli: Callable[..., Any]
) -> None:
    py_db = await _prepare(tmp_path / "python")
    store = SqlStore.from_path(py_db)
    try:
        assistant = assistant_on(
            store, KEY, settings=_settings(tmp_path / "python"), llm=OfflineLLM(announce=False)
        )
        through_python = await assistant.call_tool(tool, json.loads(args))
    finally:
        store.close()

    cli_db = await _prepare(tmp_path / "cli")
    # The command's own entry point in this process (a spawn per case cost more than the
    # rest of the case); the deep-args test below runs a real `mindspace` process.
    command = ("tool", tool, "--args", args, "--db", str(cli_db), "-a", KEY)
    process = await asyncio.to_thread(run_cli, command, env=_env(tmp_path / "cli"))
    assert "Traceback" not in process.stderr, process.stderr
    assert process.returncode == (0 if through_python["success"] else 1), process.stderr
    through_cli = json.loads(process.stdout)

    http_db = await _prepare(tmp_path / "http")
    hub = build_hub(_settings(tmp_path / "http"), db=http_db, llm=OfflineLLM(announce=False))
    server = ServerSettings(api_token=None, api_tokens=None)
    app = create_app(hub, server=server, background_ticks=False)
    try:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            response = await client.post(
                f"/v1/assistants/{KEY}/tools/{tool}",
                content=args,
                headers={"content-type": "application/json"},
            )
    finally:
        hub.close()
    assert (response.status_code == 200) is through_python["success"], response.text
    through_http = response.json()
    # HTTP adds the API's one 422 field, 'problems', mirroring the spec's 'invalid_fields'
    problems = through_http.pop("problems", None)
    invalid = through_python.get("invalid_fields")
    assert (problems is None) is (response.status_code != 422), through_http
    if invalid is not None:
        assert problems is not None
        assert [(p["field"], p["message"]) for p in problems] == [
            (f["field"], f["problem"]) for f in invalid
        ]
    elif problems is not None:
        assert problems == [
            {"field": "body", "message": through_python["error"], "type": "invalid_body"}
        ]

    assert _normal(through_cli) == _normal(through_python)
    assert _normal(through_http) == _normal(through_python)


async def test_cli_args_nested_3000_deep_is_a_usage_error_without_a_traceback(
    tmp_path: Path,
) -> None:
    db = await _prepare(tmp_path / "cli")
    deep = '{"description": ' + "[" * 3_000 + "]" * 3_000 + "}"
    process = await asyncio.to_thread(
        _cli, tmp_path / "cli", db, "tool", "add_goal", "--args", deep
    )
    assert process.returncode == 2
    assert "Traceback" not in process.stderr
    [line] = process.stderr.splitlines()
    assert line.startswith("error: --args nests JSON deeper than 64 levels")
    assert "description (string, required)" in line  # says what to send instead
    assert process.stdout == ""
