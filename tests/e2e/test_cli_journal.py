"""``mindspace journal`` and ``mindspace journal search`` in real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from mindspace import ManualClock, Settings
from mindspace.journal import JournalBook
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on

Cli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """The database file the commands use."""
    return tmp_path / "journal.db"


@pytest.fixture
def cli(tmp_path: Path, db: Path) -> Cli:
    """Run ``mindspace ARGS... --db <db>`` in a fresh process with a clean environment."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MINDSPACE_") and k not in ("FORCE_COLOR", "COLUMNS", "LINES")
    }
    env["MINDSPACE_DATA_DIR"] = str(tmp_path)
    env["PYTHONIOENCODING"] = "utf-8"
    env["COLUMNS"] = "160"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mindspace.hosts.cli.app", *args, "--db", str(db)],
            env=env,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=60,
            check=False,
        )

    return run


def _old_entry(db: Path, tmp_path: Path) -> None:
    """An entry written in 2020 (a manual clock), so day filters leave it out."""
    store = SqlStore.from_path(db)
    assistant = assistant_on(
        store,
        "default",
        llm=OfflineLLM(announce=False),
        clock=ManualClock(datetime(2020, 1, 1, 9, 30, tzinfo=UTC)),
        settings=Settings(data_dir=tmp_path),
    )
    with assistant._core.transaction() as unit:
        JournalBook(unit, assistant.clock, assistant.settings).add(
            "An old rumour about the silver mine", tags=["rumour"], source_type="environmental"
        )
    store.close()


def _add(cli: Cli, args: dict[str, object]) -> None:
    process = cli("tool", "add_journal_entry", "--args", json.dumps(args))
    assert process.returncode == 0, process.stderr


def test_listing_filters_and_search(cli: Cli, db: Path, tmp_path: Path) -> None:
    _old_entry(db, tmp_path)
    _add(cli, {"content": "Alice opened a shop by the mine", "tags": ["alice", "trade"]})
    _add(cli, {"content": "Bob repaired the mill", "importance": 2, "source_type": "direct"})

    listed = cli("journal")
    assert listed.returncode == 0, listed.stderr
    out = listed.stdout
    for text in ("Time (UTC)", "Imp.", "Method", "Trust", "Content and tags"):
        assert text in out
    assert out.index("Bob repaired the mill") < out.index("Alice opened a shop")  # newest first
    assert "2020-01-01 09:30" in out
    assert "heuristic" in out
    assert "manual" in out
    assert "#alice #trade" in out
    assert "3 entries shown" in out

    recent = cli("journal", "--days", "1", "--json")
    assert recent.returncode == 0, recent.stderr
    assert [e["id"] for e in json.loads(recent.stdout)] == [3, 2]

    tagged = cli("journal", "--tag", "RUMOUR", "--json")
    rows = json.loads(tagged.stdout)
    assert [(e["id"], e["source_trust"], e["importance"]) for e in rows] == [(1, 0.3, 4)]

    limited = cli("journal", "--limit", "1")
    assert "1 of 3 entries shown" in limited.stdout

    found = cli("journal", "search", "MINE", "--text", "--json")
    assert found.returncode == 0, found.stderr
    result = json.loads(found.stdout)
    assert result["mode"] == "text"
    assert [e["id"] for e in result["results"]] == [2, 1]

    shown = cli("journal", "search", "mine", "--days", "1", "--text")
    assert "Alice opened a shop" in shown.stdout
    assert "silver mine" not in shown.stdout

    # By meaning (the configured embedder), as the search_journal tool does.
    meant = json.loads(cli("journal", "search", "rumour about the silver mine", "--json").stdout)
    assert meant["mode"] == "semantic"
    assert meant["results"][0]["id"] == 1
    assert meant["total_matches"] == len(meant["results"])
    nothing = cli("journal", "search", "purple elephants dancing")
    assert nothing.returncode == 0, nothing.stderr
    assert "No journal entries match." in nothing.stdout

    none = cli("journal", "search", "dragon")
    assert none.returncode == 0
    assert "No journal entries match." in none.stdout


def test_an_empty_journal_and_bad_options(cli: Cli) -> None:
    assert cli("tool", "noop", "-a", "fresh").returncode == 0  # the journal only reads
    empty = cli("journal", "-a", "fresh")
    assert empty.returncode == 0, empty.stderr
    assert "has no journal entries yet" in empty.stdout
    assert "add_journal_entry" in empty.stdout

    bad = cli("journal", "--days", "0")
    assert bad.returncode == 2
    assert "--days" in bad.stderr
    assert bad.stdout == ""
