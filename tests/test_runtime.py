"""The composition root: one Runtime opens assistants, owns the store, chooses adapters."""

from __future__ import annotations

from pathlib import Path

import pytest

from mindspace.clock import ManualClock
from mindspace.config import Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.errors import AssistantNotFoundError, ConfigError
from mindspace.offline import OfflineLLM
from mindspace.runtime import Runtime
from mindspace.storage import SqlStore


def _settings(tmp_path: Path, **overrides: object) -> Settings:
    chosen: dict[str, object] = {"data_dir": tmp_path, "embedder": "hashing", **overrides}
    return Settings.model_validate(chosen)


async def test_an_assistant_opened_by_the_root_is_there_when_the_root_reopens(
    tmp_path: Path,
) -> None:
    db = tmp_path / "tavern.db"
    first = Runtime.from_settings(_settings(tmp_path), db, llm=OfflineLLM(announce=False))
    barkeep = first.open("barkeep")
    added = await barkeep.call_tool("add_goal", {"description": "Restock the cellar"})
    assert added["success"] is True
    await first.aclose()

    again = Runtime.from_settings(_settings(tmp_path), db, create=False)
    try:
        assert again.keys() == ["barkeep"]
        reopened = again.open("barkeep", create=False)
        assert [g.description for g in reopened.views.goals().all()] == ["Restock the cellar"]
        with pytest.raises(AssistantNotFoundError):
            again.open("nobody", create=False)
    finally:
        again.close()


async def test_listing_and_exporting_build_no_model(tmp_path: Path) -> None:
    # A model whose settings are incomplete: only opening an assistant needs it, so
    # `mindspace export` and the assistant listing work while it is being configured.
    db = tmp_path / "tavern.db"
    seeded = Runtime.from_settings(_settings(tmp_path), db, llm=OfflineLLM(announce=False))
    await seeded.open("barkeep").call_tool("add_goal", {"description": "Sweep the porch"})
    seeded.close()
    broken = _settings(tmp_path, llm_provider="openai")
    runtime = Runtime.from_settings(broken, db, create=False)
    try:
        assert runtime.keys() == ["barkeep"]
        summary = runtime.export_assistant("barkeep", tmp_path / "barkeep.jsonl")
        assert summary.counts["goal"] == 1
        with pytest.raises(ConfigError, match="MINDSPACE_LLM_BASE_URL"):
            runtime.open("barkeep")
    finally:
        runtime.close()


def test_prepare_reports_a_bad_setting_before_any_assistant_opens(tmp_path: Path) -> None:
    # A server builds its model and embedder at start: a bad setting stops it there.
    settings = _settings(tmp_path, embedder="openai")
    runtime = Runtime.from_settings(settings, tmp_path / "tavern.db", llm=OfflineLLM())
    with pytest.raises(ConfigError, match="MINDSPACE_EMBEDDING_BASE_URL"):
        runtime.prepare()
    assert runtime.keys() == []


def test_an_export_imports_under_another_key_through_the_root(tmp_path: Path) -> None:
    source = Runtime.from_settings(_settings(tmp_path), tmp_path / "a.db", llm=OfflineLLM())
    source.open("barkeep")
    export = tmp_path / "barkeep.jsonl"
    source.export_assistant("barkeep", export)
    source.close()
    target = Runtime.from_settings(_settings(tmp_path), tmp_path / "b.db", llm=OfflineLLM())
    try:
        summary = target.import_assistant(export, key="innkeeper")
        assert (summary.assistant, summary.source) == ("innkeeper", "barkeep")
        assert target.keys() == ["innkeeper"]
    finally:
        target.close()


async def test_an_assistant_with_its_own_settings_shares_the_store(tmp_path: Path) -> None:
    # Evennia's case: each character has its own mindspace_* settings, one database.
    db = tmp_path / "game.db"
    root = Runtime.from_settings(_settings(tmp_path), db, llm=OfflineLLM(announce=False))
    try:
        own = _settings(tmp_path, tick_rate_awake=2.0, llm_provider="offline")
        guard = root.open("guard", settings=own, self_names=("Guard",))
        barkeep = root.open("barkeep")
        assert guard.settings.tick_rate_awake == 2.0
        assert barkeep.settings.tick_rate_awake == Settings().tick_rate_awake
        assert root.keys() == ["barkeep", "guard"]
        wrong = _settings(tmp_path, llm_provider="openai")
        with pytest.raises(ConfigError, match="MINDSPACE_LLM_BASE_URL"):
            root.open("cook", settings=wrong)
    finally:
        await root.aclose()


async def test_the_root_gives_assistants_the_stores_own_memory_search(backend_url: str) -> None:
    # The facade does not choose: on PostgreSQL the root passes pgvector's search, on
    # SQLite the embedded index; either way a stored memory is recalled.
    store = SqlStore(backend_url)
    runtime = Runtime(
        Settings(),
        store,
        llm=OfflineLLM(announce=False),
        embedder=HashingEmbedder(256),
        clock=ManualClock(),
    )
    try:
        keeper = runtime.open("keeper")
        stored = await keeper.call_tool(
            "store_memory", {"content": "The cellar key hangs behind the bar"}
        )
        assert stored["success"] is True
        memory = keeper.views.semantic_memory()
        found = memory.recall("Where is the cellar key?", limit=3)
        assert [r.memory.id for r in found][:1] == [stored["memory_id"]]
        index = type(memory.index).__module__
        expected = "mindspace.storage" if store.postgres else "mindspace.memory"
        assert index.startswith(expected), index
    finally:
        runtime.close()
