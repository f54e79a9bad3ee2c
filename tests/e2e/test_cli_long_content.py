"""Issue 34 item 4 acceptance, in real processes: long content never stops a night.

A journal entry of 10,000 characters (the journal's limit; a memory holds 4,000) and a
chat message of 10,000 characters go through ``mindspace sleep --run`` with the offline
model, on SQLite and PostgreSQL; ``mindspace memories search`` then finds words from
the middle and the end of each. Before, the night stopped at the first tick with
"'content' is 9,016 characters long; the limit is 4,000", and every later night too.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


def _text(topic: str, chars: int = 10_000) -> str:
    """Exactly ``chars`` characters of sentences, each with its own code word."""
    sentences: list[str] = []
    n = 0
    while sum(len(s) + 1 for s in sentences) < chars:
        sentences.append(f"The {topic} ledger line {n} records cargo {topic}{n}x for pier {n}.")
        n += 1
    body = " ".join(sentences)[: chars - 40].rsplit(" ", 1)[0]
    return (body + f" The last word is final{topic} " + "z" * chars)[: chars - 1] + "."


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "long.db")
    url: str = request.getfixturevalue("pg_url")
    return url


def _cli(tmp_path: Path, db: str, *args: str, stdin: str | None = None) -> str:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MINDSPACE_") and k not in ("COLUMNS", "LINES")
    }
    env.update(
        MINDSPACE_DATA_DIR=str(tmp_path),
        MINDSPACE_EMBEDDER="hashing",
        PYTHONIOENCODING="utf-8",
        COLUMNS="200",
    )
    done = subprocess.run(
        [sys.executable, "-m", "mindspace.hosts.cli.app", *args, "--db", db],
        input=stdin,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout


def _found(tmp_path: Path, db: str, query: str) -> list[dict[str, Any]]:
    out = _cli(tmp_path, db, "memories", "search", query, "--json", "-n", "3")
    memories: list[dict[str, Any]] = json.loads(out)["memories"]
    return memories


def test_sleep_run_takes_a_long_entry_and_a_long_message(tmp_path: Path, db: str) -> None:
    entry, message = _text("harbour"), _text("granary")
    assert len(entry) == len(message) == 10_000
    added = json.loads(
        _cli(tmp_path, db, "tool", "add_journal_entry", "--args", json.dumps({"content": entry}))
    )
    assert added["success"] is True, added
    chat = _cli(tmp_path, db, "chat", "--as", "Dana", stdin=message + "\n/quit\n")
    assert "says to Dana" in chat

    night = _cli(tmp_path, db, "sleep", "--run")
    assert "The night is done" in night

    for text, topic in ((entry, "harbour"), (message, "granary")):
        codes = re.findall(rf"{topic}\d+x", text)
        for word in (codes[len(codes) // 2], codes[-1], f"final{topic}"):
            found = _found(tmp_path, db, word)
            assert any(word in m["content"] for m in found), (word, found)
            assert all(len(m["content"]) <= 4_000 for m in found)
