"""``mindspace chat`` on Anthropic's Messages API, through the real SDK, in a real process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mindspace.runtime import open_assistant
from mindspace.testing import MessagesServer


def _chat(tmp_path: Path, lines: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MINDSPACE_", "ANTHROPIC_"))  # only what the test sets
    }
    clean.update({"MINDSPACE_DATA_DIR": str(tmp_path), "COLUMNS": "200", **env})
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mindspace.hosts.cli.app",
            "chat",
            "--as",
            "Alice",
            "--db",
            str(tmp_path / "chat.db"),
            "--assistant",
            "barkeep",
        ],
        input=lines,
        capture_output=True,
        text=True,
        timeout=120,
        env=clean,
        check=False,
    )


def test_chat_on_the_messages_api_with_a_tool_call_and_an_overloaded_retry(
    tmp_path: Path,
) -> None:
    with MessagesServer() as server:
        server.overloaded(retry_after=0.2)  # 529 first: retried after the server's wait
        server.reply(
            "Let me note that.",
            tool_calls=[{"name": "add_goal", "arguments": {"description": "Find Alice a room"}}],
        )
        server.reply("A room is being prepared, my lady.")
        done = _chat(
            tmp_path,
            "Could you find me a room?\n/quit\n",
            MINDSPACE_LLM_PROVIDER="anthropic",
            MINDSPACE_LLM_BASE_URL=server.url,
            MINDSPACE_LLM_MODEL="claude-test",
            MINDSPACE_LLM_API_KEY="test-key",
        )
        assert done.returncode == 0, done.stderr
        assert "offline model" not in done.stdout
        assert "barkeep says to Alice: A room is being prepared, my lady." in done.stdout
        assert server.pending == 0
        assert server.connections == 1  # the retry and the round trip reuse one connection
    overloaded, asked, answered = server.requests
    assert overloaded == asked  # the very request was sent again
    assert asked["model"] == "claude-test"
    assert "system" in asked
    assert all(turn["role"] in ("user", "assistant") for turn in asked["messages"])
    assert asked["messages"][-1]["content"][-1]["text"].endswith("Could you find me a room?")
    assert [tool["name"] for tool in asked["tools"] if tool["name"] == "add_goal"] == ["add_goal"]
    # The tool's result went back as a tool_result block answering the tool_use.
    said, result = answered["messages"][-2:]
    use = said["content"][-1]
    assert (use["type"], use["name"]) == ("tool_use", "add_goal")
    assert result["role"] == "user"
    assert result["content"][0]["type"] == "tool_result"
    assert result["content"][0]["tool_use_id"] == use["id"]
    assert "is_error" not in result["content"][0]
    stored = open_assistant("barkeep", db=tmp_path / "chat.db", create=False)
    assert [g.description for g in stored.views.goals().all()] == ["Find Alice a room"]


def test_chat_names_the_missing_key(tmp_path: Path) -> None:
    done = _chat(
        tmp_path,
        "Hello\n/quit\n",
        MINDSPACE_LLM_PROVIDER="anthropic",
        MINDSPACE_LLM_MODEL="claude-test",
    )
    assert done.returncode != 0
    assert "MINDSPACE_LLM_API_KEY" in done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
