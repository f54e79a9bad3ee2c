"""A sleep night scoring importance through the real openai client over real HTTP.

``mindspace sleep --ticks 1`` runs in a subprocess against the scripted chat-completions
server: a loose answer is repaired once, two loose answers fall back, and the night report
and the stored entries say which was which.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from mindspace import Assistant, Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.journal import score_importance_heuristic
from mindspace.journal.records import JournalEntry
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing import ChatCompletionsServer
from mindspace.testing.assistants import assistant_on


def _open(db: Path, tmp_path: Path) -> tuple[SqlStore, Assistant]:
    store = SqlStore.from_path(db)
    assistant = assistant_on(
        store,
        "default",
        llm=OfflineLLM(announce=False),
        settings=Settings(data_dir=tmp_path, embedder="hashing"),
        embedder=HashingEmbedder(),
    )
    return store, assistant


def _seed(db: Path, tmp_path: Path) -> None:
    store, assistant = _open(db, tmp_path)

    async def write() -> None:
        for content in ("Alice lost her ring in the well", "Bob swept the floor"):
            result = await assistant.call_tool("add_journal_entry", {"content": content})
            assert result["success"] is True, result

    try:
        asyncio.run(write())
    finally:
        store.close()


def test_a_night_repairs_one_loose_score_and_keeps_the_heuristic_for_another(
    tmp_path: Path,
) -> None:
    db = tmp_path / "night.db"
    _seed(db, tmp_path)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MINDSPACE_") and k not in ("FORCE_COLOR", "COLUMNS", "LINES")
    }
    env.update(
        MINDSPACE_DATA_DIR=str(tmp_path),
        MINDSPACE_EMBEDDER="hashing",
        # One entry per call: this night exercises the single prompt's repair over HTTP
        # (test_importance_batch.py covers batches and their fallback).
        MINDSPACE_SCORING_BATCH_SIZE="1",
        PYTHONIOENCODING="utf-8",
        COLUMNS="200",
    )
    with ChatCompletionsServer() as server:
        server.reply("the first 2 digits may not match")  # entry 1: refused
        server.reply("8")  # entry 1: the repair
        server.reply("I'd say 3 out of 10.")  # entry 2: refused
        server.reply("Three.")  # entry 2: the repair, refused too -> heuristic stays
        # Entry 1, scored, is consolidated in the sleep_consolidate context (issue 13).
        server.reply(
            tool_calls=[
                {
                    "name": "store_memory",
                    "arguments": {"content": "Alice lost her ring in the well", "entry_id": 1},
                },
                {"name": "noop", "arguments": {}},
            ]
        )
        env.update(
            MINDSPACE_LLM_BASE_URL=server.url,
            MINDSPACE_LLM_MODEL="scripted",
            MINDSPACE_LLM_API_KEY="test-key",
        )
        command = ["sleep", "--ticks", "1", "--db", str(db)]
        done = subprocess.run(
            [sys.executable, "-m", "mindspace.hosts.cli.app", *command],
            env=env,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=120,
            check=False,
        )
        requests = list(server.requests)
        left = server.pending

    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert left == 0
    # One question and one repair per entry, then one consolidation request, nothing more.
    assert len(requests) == 5
    assert "Consolidate these journal entries" in requests[4]["messages"][-1]["content"]
    first_repair = requests[1]["messages"]
    assert first_repair[-2] == {
        "role": "assistant",
        "content": "the first 2 digits may not match",
    }
    assert "could not be used" in first_repair[-1]["content"]
    assert "1 entry scored by the LLM (1 after a repair)" in done.stdout
    assert "1 kept the heuristic score (no usable answer)" in done.stdout

    store, assistant = _open(db, tmp_path)
    try:
        entries = {e.id: e for e in assistant._core.read().all(JournalEntry)}
    finally:
        store.close()
    assert (entries[1].importance, entries[1].importance_method) == (8, "llm")
    assert entries[2].importance_method == "heuristic"
    # The heuristic score stands (the stray "2" and "3" in the answers never became one).
    assert entries[2].importance == score_importance_heuristic(
        entries[2].content, entries[2].source_type
    )
    assert entries[2].importance not in (2, 3)
    assert entries[2].scoring_attempts == 1
