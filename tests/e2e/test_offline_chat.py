"""A first conversation with the offline model through the real ``mindspace chat``.

Tried as a new user would: the first message used to fail ("that did not work: Content
appears to reference assistant actions or identity"), engine log lines came into the
chat, and "What do I like to drink?" was stored as a fact instead of answered. The chat
runs as a subprocess on a SQLite file, then the night's mining runs, then what is stored
is read back with the commands a user has.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

FIRST = "Hello! My name is Dave and I prefer red wine."
LINES = (
    FIRST,
    FIRST,  # sent again: the same answer, nothing stored twice
    "Do you remember me?",
    "What do I like to drink?",
    "What do you know about Alice?",
    "I'm a smith and my sister lives in Oakvale.",
    "What do you know about me?",
)
# What must never reach the person: tool errors, engine log lines, exception names.
LEAKS = re.compile(
    r"did not work|Content appears|ReAct loop|max_iterations|Event 'evt_|Traceback|"
    r"WARNING|ERROR|[A-Z][a-z]+Error\b|lost my train of thought"
)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MINDSPACE_")}
    clean.update(
        MINDSPACE_DATA_DIR=str(tmp_path),
        MINDSPACE_EMBEDDER="hashing",
        PYTHONIOENCODING="utf-8",
        COLUMNS="200",
    )
    return clean


def _run(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mindspace.hosts.cli.app", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        check=False,
    )


def test_the_offline_model_remembers_and_answers_from_memory(env: dict[str, str]) -> None:
    chat = _run(env, "chat", "--as", "Dave", stdin="".join(f"{line}\n" for line in LINES))
    assert chat.returncode == 0, chat.stderr
    replies = [
        line.split("default says to Dave: ", 1)[1].strip()
        for line in chat.stdout.replace("\n", " ").split("you> ")
        if "default says to Dave: " in line
    ]
    assert len(replies) == len(LINES), chat.stdout
    assert not LEAKS.search(chat.stdout + chat.stderr), chat.stdout + chat.stderr

    assert replies[0] == "Hello, Dave! I'll remember that you prefer red wine."
    assert replies[1] == replies[0]
    assert "red wine" in replies[2]  # "do you remember me?" answered with what it knows
    assert "red wine" in replies[3]  # "what do I like to drink?"
    assert replies[4] == "I know nothing about Alice yet, Dave."
    assert "smith" in replies[6]
    assert "sister lives in Oakvale" in replies[6]

    session = json.loads(_run(env, "session", "--json").stdout)
    assert session["key_facts"] == [
        "Dave prefers red wine",
        "Dave is a smith",
        "Dave's sister lives in Oakvale",
    ]

    night = _run(env, "sleep", "--run")
    assert night.returncode == 0, night.stderr
    memories = json.loads(_run(env, "memories", "--json", "--limit", "100").stdout)
    contents = [m["content"] for m in memories]
    assert any("red wine" in c for c in contents), contents
    assert not [c for c in contents if "?" in c or c.lower().startswith(("what", "do you"))]
    assert "Dave's name is Dave" not in " ".join(contents)
    assert not LEAKS.search(night.stdout + night.stderr)


def test_ctrl_l_clears_the_screen_and_never_reaches_the_assistant(env: dict[str, str]) -> None:
    chat = _run(env, "chat", "--as", "Dave", stdin="\x0c\nHello!\x0c I prefer red wine.\n")
    assert chat.returncode == 0, chat.stderr
    assert chat.stdout.count("\x1b[H\x1b[2J") == 2
    assert "I'll remember that" in chat.stdout
    assert chat.stdout.count("default says to Dave") == 1  # the Ctrl+L line sent nothing
    session = json.loads(_run(env, "session", "--json").stdout)
    assert session["key_facts"] == ["Dave prefers red wine"]


def test_engine_log_lines_stay_out_of_the_chat(env: dict[str, str]) -> None:
    from mindspace.testing import ChatCompletionsServer

    server = ChatCompletionsServer().start()
    try:
        # A model that keeps calling tools: the loop stops at its limit and logs a warning.
        for _ in range(12):
            server.reply(tool_calls=[{"name": "get_system_status", "arguments": {}}])
        env.update(
            MINDSPACE_LLM_BASE_URL=server.url,
            MINDSPACE_LLM_MODEL="scripted",
            MINDSPACE_LLM_API_KEY="test-key",
        )
        chat = _run(env, "chat", "--as", "Dave", stdin="How busy are you?\n")
    finally:
        server.stop()
    assert chat.returncode == 0, chat.stderr
    # the loop's fallback reply, in character, and nothing of the engine's log
    assert "default says to Dave: Sorry - I lost my train of thought" in chat.stdout
    assert chat.stderr == ""
    assert not re.search(r"ReAct loop|max_iterations|WARNING|Event 'evt_", chat.stdout)


def test_ctrl_l_on_a_terminal_prints_no_caret_l(env: dict[str, str]) -> None:
    import pty
    import select
    import time

    master, slave = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "mindspace.hosts.cli.app", "chat", "--as", "Dave"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        close_fds=True,
    )
    os.close(slave)
    seen = b""

    def read_until(marker: bytes, timeout: float = 120.0) -> None:
        nonlocal seen
        end = time.monotonic() + timeout
        while marker not in seen and time.monotonic() < end:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    seen += os.read(master, 4096)
                except OSError:
                    break
        assert marker in seen, seen.decode("utf-8", "replace")

    try:
        read_until(b"you> ")
        os.write(master, b"\x0cI prefer red wine.\n")  # Ctrl+L, then a line
        read_until(b"I'll remember that")
        os.write(master, b"/quit\n")
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
        os.close(master)
    text = seen.decode("utf-8", "replace")
    assert "^L" not in text  # the terminal echoed nothing for Ctrl+L
    assert "\x1b[H\x1b[2J" in text  # and the screen was cleared at Enter
