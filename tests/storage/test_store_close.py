"""Store.close and Store.aclose: the port has both, and SqlStore releases its pool either way."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from mindspace.state.port import Store
from mindspace.storage import SqlStore


def test_sql_store_is_a_store_with_close_and_aclose(tmp_path: Path) -> None:
    store = SqlStore.from_path(tmp_path / "a.db")
    assert isinstance(store, Store)
    store.open_assistant("alice", create=True)
    store.close()
    store.close()  # closing twice is harmless


async def test_aclose_disposes_the_engine_off_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SqlStore.from_path(tmp_path / "a.db")
    store.open_assistant("alice", create=True)
    disposed_on: list[int] = []
    dispose = store.engine.dispose

    def record() -> None:
        disposed_on.append(threading.get_ident())
        dispose()

    monkeypatch.setattr(store.engine, "dispose", record)
    await store.aclose()
    assert disposed_on
    assert disposed_on[0] != threading.get_ident()
    assert store.engine.pool.checkedout() == 0
