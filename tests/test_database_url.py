"""One path-or-URL to SQLAlchemy URL rule for every place that takes a database."""

from __future__ import annotations

from pathlib import Path

import pytest

from mindspace.config import Settings, database_url
from mindspace.errors import ConfigError
from mindspace.runtime import open_store
from mindspace.storage.sql import SqlStore


def test_urls_pass_through_unchanged() -> None:
    assert database_url("sqlite:///x.db") == "sqlite:///x.db"
    assert database_url("postgresql://u:p@db.example/m") == "postgresql://u:p@db.example/m"


def test_paths_become_absolute_sqlite_urls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert database_url("data/m.db") == f"sqlite:///{tmp_path / 'data' / 'm.db'}"
    assert database_url(Path("m.db")) == f"sqlite:///{tmp_path / 'm.db'}"
    assert database_url("~/m.db") == f"sqlite:///{tmp_path / 'home' / 'm.db'}"


def test_a_blank_database_says_what_to_give() -> None:
    with pytest.raises(ConfigError, match="SQLite file path or a SQLAlchemy URL"):
        database_url("  ")


def test_settings_store_and_runtime_agree_on_a_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = Settings(database_url=None, data_dir=tmp_path)
    assert settings.resolved_database_url() == f"sqlite:///{tmp_path / 'mindspace.db'}"
    assert Settings(database_url="mindspace.db").resolved_database_url() == (
        settings.resolved_database_url()
    )
    for store in (SqlStore.from_path("mindspace.db"), open_store(settings, "mindspace.db")):
        try:
            assert store.engine.url.database == str(tmp_path / "mindspace.db")
        finally:
            store.close()
