"""``mindspace mcp`` as a real subprocess, driven by the ``mcp`` SDK's own stdio client.

The client launches the command exactly as Claude Desktop would (docs/mcp.md), lists the
tools, calls ``add_goal``, reads the goal tree back as a resource and sees a failing
call come back in the spec's error shape. The store and the engine are real; the model
is the offline one (no MINDSPACE_LLM_* set) and no embedder weights are loaded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from mindspace.engine.assistant import assistant_tools
from mindspace.engine.operator_edits import OPERATOR_EDITS
from mindspace.hosts.mcp import CATEGORY_META_KEY
from mindspace.storage import SqlStore

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The environment without MINDSPACE_* settings; this checkout's sources first."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MINDSPACE_")}
    clean["MINDSPACE_DATA_DIR"] = str(tmp_path)
    clean["MINDSPACE_EMBEDDER"] = "hashing"
    clean["PYTHONPATH"] = os.pathsep.join([str(SRC), clean.get("PYTHONPATH", "")])
    return clean


def _server(env: dict[str, str], *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "mindspace.hosts.cli.app", "mcp", *args],
        # the SDK passes only a few variables to the child unless told
        env=env,
    )


async def test_a_client_lists_tools_calls_add_goal_and_reads_the_goal_tree(
    tmp_path: Path, env: dict[str, str]
) -> None:
    db = tmp_path / "tavern.db"
    params = _server(env, "--db", str(db), "--assistant", "barkeep", "--create")
    async with Client(params, read_timeout_seconds=60) as client:
        listed = (await client.list_tools()).tools
        by_name = {tool.name: tool for tool in listed}
        # the model's tools, and a person's edits that wait for approval
        assert sorted(by_name) == sorted([*assistant_tools().names(), *OPERATOR_EDITS])
        add_goal = by_name["add_goal"]
        assert add_goal.input_schema["properties"]["description"]["type"] == "string"
        assert "description" in add_goal.input_schema["required"]
        assert add_goal.meta == {CATEGORY_META_KEY: "SAFE_CHAIN"}
        assert by_name["decompose_goal"].meta == {CATEGORY_META_KEY: "ASYNC_REQUIRED"}
        assert add_goal.annotations is not None
        assert add_goal.annotations.destructive_hint is False

        added = await client.call_tool("add_goal", {"description": "Fix the gate"})
        assert added.is_error is False
        assert added.structured_content["success"] is True
        goal_id = added.structured_content["goal_id"]
        assert json.loads(added.content[0].text)["goal_id"] == goal_id  # type: ignore[union-attr]

        uris = [str(r.uri) for r in (await client.list_resources()).resources]
        assert uris == [
            "mindspace://barkeep/goals",
            "mindspace://barkeep/session-memory",
            "mindspace://barkeep/journal",
            "mindspace://barkeep/memories",
            "mindspace://barkeep/entities",
            "mindspace://barkeep/history",
        ]
        read = await client.read_resource("mindspace://barkeep/goals")
        tree = json.loads(read.contents[0].text)  # type: ignore[union-attr]
        assert [(g["id"], g["description"]) for g in tree["goals"]] == [(goal_id, "Fix the gate")]

        # A call the tool refuses: the spec's error shape, flagged as an error for MCP.
        failed = await client.call_tool("update_goal", {"goal_id": "goal_9_9", "progress": 50})
        assert failed.is_error is True
        error = failed.structured_content
        assert error["success"] is False
        assert "goal_9_9" in error["error"]
        assert error["suggestion"]
        assert json.loads(failed.content[0].text) == error  # type: ignore[union-attr]

        # Arguments the schema rejects fail the same way; nothing is stored.
        invalid = await client.call_tool("add_goal", {"priority": "urgent-ish"})
        assert invalid.is_error is True
        assert invalid.structured_content["success"] is False
        assert "description" in invalid.structured_content["error"]

        session = await client.read_resource("mindspace://barkeep/session-memory")
        assert json.loads(session.contents[0].text)["success"] is True  # type: ignore[union-attr]

    # the goal is in the database for every other host
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mindspace.hosts.cli.app",
            "goals",
            "--db",
            str(db),
            "-a",
            "barkeep",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Fix the gate" in done.stdout


def test_a_missing_database_is_one_error_line(tmp_path: Path, env: dict[str, str]) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mindspace.hosts.cli.app",
            "mcp",
            "--db",
            str(tmp_path / "missing.db"),
            "--assistant",
            "barkeep",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert done.stdout == ""  # nothing on the protocol's channel
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ")
    assert "No database at" in lines[0]
    assert "mindspace tool get_system_status" in lines[0]  # how to create it
    assert not (tmp_path / "missing.db").exists()


def test_an_unknown_assistant_names_the_ones_there(tmp_path: Path, env: dict[str, str]) -> None:
    db = tmp_path / "tavern.db"
    store = SqlStore(f"sqlite:///{db}")
    store.open_assistant("barkeep", create=True)
    store.close()
    done = subprocess.run(
        [sys.executable, "-m", "mindspace.hosts.cli.app", "mcp", "--db", str(db), "-a", "barkep"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "No assistant 'barkep'" in done.stderr
    assert "'barkeep'" in done.stderr


def test_every_malformed_request_gets_a_json_rpc_error_and_the_server_goes_on(
    tmp_path: Path, env: dict[str, str]
) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    call = {"jsonrpc": "2.0", "method": "tools/call"}
    lines = [
        "this is not json",
        "{}",
        json.dumps([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]),
        json.dumps({"jsonrpc": "1.0", "id": 2, "method": "ping"}),
        json.dumps({**call, "id": 3, "params": [1, 2]}),
        json.dumps(
            {
                **call,
                "id": 4,
                "params": {"name": "add_goal", "arguments": {"description": "\ud800"}},
            }
        ),
        '{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "add_goal", '
        f'"arguments": {{"description": {deep}}}}}}}',
        json.dumps({**call, "params": [1]}),  # a notification: never answered
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 6,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            }
        ),
    ]
    done = subprocess.run(
        [
            *(sys.executable, "-m", "mindspace.hosts.cli.app", "mcp"),
            *("--db", str(tmp_path / "t.db"), "--assistant", "barkeep", "--create"),
        ],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    replies = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    codes = [(r.get("id"), r["error"]["code"]) for r in replies if "error" in r]
    assert codes == [
        (None, -32700),
        (None, -32600),
        (None, -32600),
        (2, -32600),
        (3, -32602),
        (4, -32602),
        (5, -32600),
    ], done.stderr[-2000:]
    assert "surrogate" in replies[5]["error"]["message"]
    initialized = [r for r in replies if r.get("id") == 6]
    assert initialized
    assert "result" in initialized[0]
    assert "Traceback" not in done.stderr
