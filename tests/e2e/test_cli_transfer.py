"""``mindspace export`` and ``mindspace import`` in real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from mindspace.state import Change
from mindspace.storage import SqlStore

Cli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    """Run ``mindspace ARGS...`` in a fresh process with a clean environment."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MINDSPACE_") and k not in ("FORCE_COLOR", "COLUMNS", "LINES")
    }
    env["MINDSPACE_DATA_DIR"] = str(tmp_path)
    env["PYTHONIOENCODING"] = "utf-8"

    def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mindspace.hosts.cli.app", *args],
            env=env,
            input=stdin,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=60,
            check=False,
        )

    return run


def _source(path: Path) -> None:
    store = SqlStore.from_path(path)
    try:
        aid = store.open_assistant("barkeep", create=True).id
        store.commit(
            aid,
            0,
            [Change("doc", "system_prompts", {"name": "system_prompts", "value": {"user": "Hi"}})],
        )
    finally:
        store.close()


def test_export_to_stdout_then_import_it_elsewhere(cli: Cli, tmp_path: Path) -> None:
    source, target = tmp_path / "a.db", tmp_path / "b.db"
    _source(source)
    exported = cli("export", "--db", str(source), "--assistant", "barkeep")
    assert exported.returncode == 0, exported.stderr
    lines = exported.stdout.splitlines()
    assert json.loads(lines[0])["assistant"] == "barkeep"
    assert json.loads(lines[1])["fields"]["value"] == {"user": "Hi"}
    assert "Exported 1 records of 'barkeep' to stdout." in exported.stderr

    mind = tmp_path / "mind.jsonl"
    mind.write_text(exported.stdout, encoding="utf-8")
    done = cli("import", str(mind), "--db", str(target))
    assert done.returncode == 0, done.stderr
    assert "Imported assistant 'barkeep' (1 records" in done.stdout

    refused = cli("import", str(mind), "--db", str(target))
    assert refused.returncode == 1
    assert refused.stderr.startswith("error: An assistant 'barkeep' already exists")
    assert "--replace" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1

    piped = cli("import", "-", "--db", str(target), "--as", "copy", "--json", stdin=exported.stdout)
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout)["counts"] == {"doc": 1}
    written = cli("export", "--db", str(target), "-a", "copy", "-o", str(tmp_path / "c.jsonl"))
    assert written.returncode == 0, written.stderr
    assert (tmp_path / "c.jsonl").read_text(encoding="utf-8").splitlines()[1:] == lines[1:]


def test_export_o_follows_a_symlink_and_refuses_a_directory(cli: Cli, tmp_path: Path) -> None:
    source = tmp_path / "a.db"
    _source(source)
    real = tmp_path / "real.jsonl"
    link = tmp_path / "null"  # as `-o /dev/null` would be, but a link made here
    link.symlink_to(real)

    written = cli("export", "--db", str(source), "-a", "barkeep", "-o", str(link))
    refused = cli("export", "--db", str(source), "-a", "barkeep", "-o", str(tmp_path))

    assert written.returncode == 0, written.stderr
    assert link.is_symlink()
    assert json.loads(real.read_text().splitlines()[0])["format"]
    assert refused.returncode == 1
    assert refused.stderr.startswith("error: ")
    assert "is a directory; export to a regular file" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_a_bad_file_exits_1_naming_the_line(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "mindspace-export", "version": 1}\n', encoding="utf-8")
    done = cli("import", str(bad), "--db", str(tmp_path / "b.db"))
    assert done.returncode == 1
    assert done.stderr.startswith("error: line 1:")
    assert "schema version" in done.stderr
