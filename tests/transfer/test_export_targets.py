"""Exporting to a path never replaces what the path is.

A regular file is replaced atomically (a failed export leaves the old one and no partial
file); a symlink is followed and kept; a FIFO (a stand-in for ``/dev/null``-like
targets, made in tmp: the real ``/dev/null`` is never touched) is written through and
stays a FIFO; a directory is refused with a message saying what to do.
"""

from __future__ import annotations

import json
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from mindspace.storage import SqlStore
from mindspace.transfer import TransferError, export_to_path


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqlStore]:
    """A store holding the assistant 'barkeep' (nothing else is needed to export it)."""
    opened = SqlStore(f"sqlite:///{tmp_path / 'm.db'}")
    opened.open_assistant("barkeep", create=True)
    yield opened
    opened.close()


def _is_export(text: str) -> bool:
    lines = text.splitlines()
    return json.loads(lines[0])["assistant"] == "barkeep" and "end" in json.loads(lines[-1])


def test_a_regular_file_is_replaced_whole_and_keeps_its_mode(
    store: SqlStore, tmp_path: Path
) -> None:
    target = tmp_path / "mind.jsonl"
    target.write_text("old\n")
    target.chmod(0o600)

    export_to_path(store, "barkeep", target)

    assert _is_export(target.read_text())
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir() if "mind" in p.name) == ["mind.jsonl"]


def test_a_failed_export_leaves_the_old_file_and_no_partial_one(
    store: SqlStore, tmp_path: Path
) -> None:
    target = tmp_path / "mind.jsonl"
    target.write_text("old\n")

    with pytest.raises(TransferError, match="nobody"):
        export_to_path(store, "nobody", target)

    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir() if "mind" in p.name] == ["mind.jsonl"]


def test_a_symlink_is_followed_and_stays_a_link(store: SqlStore, tmp_path: Path) -> None:
    real = tmp_path / "real.jsonl"
    real.write_text("old\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    dangling = tmp_path / "dangling.jsonl"
    dangling.symlink_to(tmp_path / "not-yet.jsonl")

    export_to_path(store, "barkeep", link)
    export_to_path(store, "barkeep", dangling)

    assert link.is_symlink()
    assert os.readlink(link) == str(real)
    assert _is_export(real.read_text())
    assert dangling.is_symlink()
    assert _is_export((tmp_path / "not-yet.jsonl").read_text())


@pytest.mark.parametrize("through_link", [False, True])
def test_a_fifo_is_written_through_and_stays_a_fifo(
    store: SqlStore, tmp_path: Path, through_link: bool
) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    target = fifo
    if through_link:
        target = tmp_path / "null"
        target.symlink_to(fifo)
    received: list[bytes] = []

    def read() -> None:
        with fifo.open("rb") as pipe:
            received.append(pipe.read())

    reader = threading.Thread(target=read)
    reader.start()
    export_to_path(store, "barkeep", target)
    reader.join(timeout=30)

    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert _is_export(received[0].decode())
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


def test_a_directory_is_refused_and_left_alone(store: SqlStore, tmp_path: Path) -> None:
    folder = tmp_path / "out"
    folder.mkdir()

    with pytest.raises(TransferError, match="is a directory; export to a regular file"):
        export_to_path(store, "barkeep", folder)

    assert folder.is_dir()
    assert list(folder.iterdir()) == []
