"""``mindspace chat`` in a real terminal process: the offline model, and a real endpoint."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from mindspace.runtime import open_assistant
from mindspace.testing import ChatCompletionsServer
from mindspace.testing.scripted_server import Step


def _chat(tmp_path: Path, lines: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MINDSPACE_")}
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


def test_chat_with_the_offline_model(tmp_path: Path) -> None:
    done = _chat(
        tmp_path,
        "Can you build a tavern with a bar, a kitchen and rooms?\n"
        "I prefer formal address.\n/goals\n/status\n/quit\n",
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "offline model" in out
    assert "barkeep says to Alice: I'll see to it, Alice. I've planned 5 steps" in out
    assert "barkeep says to Alice: I'll remember that, Alice." in out
    assert "Build a tavern with a bar, a kitchen and rooms" in out  # /goals
    assert "Advisory" in out
    assert "mindspace-offline" in out
    stored = open_assistant("barkeep", db=tmp_path / "chat.db", create=False)
    assert stored.views.session_memory().key_facts == ("Alice prefers formal address",)
    assert len(stored.views.goals().all()) == 6


def test_chat_with_an_openai_compatible_server(tmp_path: Path) -> None:
    with ChatCompletionsServer() as server:
        server.reply(
            tool_calls=[{"name": "add_goal", "arguments": {"description": "Find Alice a room"}}]
        )
        server.reply("A room is being prepared, my lady.")
        done = _chat(
            tmp_path,
            "Could you find me a room?\n/quit\n",
            MINDSPACE_LLM_BASE_URL=server.url,
            MINDSPACE_LLM_MODEL="scripted",
            MINDSPACE_LLM_API_KEY="test-key",
        )
        assert done.returncode == 0, done.stderr
        assert "offline model" not in done.stdout
        assert "barkeep says to Alice: A room is being prepared, my lady." in done.stdout
        assert server.requests[0]["model"] == "scripted"
        assert server.requests[0]["messages"][-1]["content"].endswith("Could you find me a room?")
    stored = open_assistant("barkeep", db=tmp_path / "chat.db", create=False)
    assert [g.description for g in stored.views.goals().all()] == ["Find Alice a room"]


SLEEP_RUN = [sys.executable, "-m", "mindspace.hosts.cli", "sleep", "--run"]


def _answer_the_question(body: dict[str, Any]) -> Step:
    """Answers the request's own question, whatever else the night asks."""
    last = str(body["messages"][-1].get("content") or "")
    asked = re.findall(r"\bQ\d\b", last.rsplit("## Pending Event", 1)[-1])
    return Step(content=f"Answer to {asked[-1]}." if asked else "Noted.")


def test_after_sleep_run_every_line_gets_its_own_reply(tmp_path: Path) -> None:
    db = str(tmp_path / "chat.db")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MINDSPACE_")}
    clean.update({"MINDSPACE_DATA_DIR": str(tmp_path), "COLUMNS": "200"})
    open_assistant("barkeep", db=db)
    done = subprocess.run(
        [*SLEEP_RUN, "--db", db, "--assistant", "barkeep"],
        capture_output=True,
        text=True,
        timeout=120,
        env=clean,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    with ChatCompletionsServer(respond=_answer_the_question) as server:
        done = _chat(
            tmp_path,
            "Q1 is the first question?\nQ2 is the second one?\nQ3 the third?\n/quit\n",
            MINDSPACE_LLM_BASE_URL=server.url,
            MINDSPACE_LLM_MODEL="scripted",
        )
    assert done.returncode == 0, done.stderr
    said = re.findall(r"barkeep says to Alice: (.*)", done.stdout)
    assert said == ["Answer to Q1.", "Answer to Q2.", "Answer to Q3."], done.stdout
    assert "did not reply" not in done.stdout
