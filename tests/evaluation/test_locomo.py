"""The LoCoMo harness: evidence clean-up, scoring, and a run on a conversation of our own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mindspace.config import Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.evaluation.locomo import run_locomo
from mindspace.evaluation.locomo_data import (
    load_samples,
    normalize_evidence,
    parse_session_time,
    score_ranking,
)
from mindspace.memory.records import Memory, MemoryLinks
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on

KNOWN = {"D1:1", "D1:2", "D8:6", "D9:17", "D11:26"}


@pytest.mark.parametrize(
    ("raw", "kept", "dropped"),
    [
        (["D8:6; D9:17"], ["D8:6", "D9:17"], 0),
        (["D:11:26"], ["D11:26"], 0),
        (["D"], [], 1),
        (["D10:19"], [], 1),  # no such turn
        (["D1:1", "D1:1"], ["D1:1"], 0),
        ([], [], 0),
    ],
)
def test_malformed_evidence_is_normalised_and_the_rest_counted(
    raw: list[str], kept: list[str], dropped: int
) -> None:
    assert normalize_evidence(raw, KNOWN) == (kept, dropped)


def test_session_times_parse() -> None:
    when = parse_session_time("1:56 pm on 8 May, 2023")
    assert (when.year, when.month, when.day, when.hour, when.minute) == (2023, 5, 8, 13, 56)
    with pytest.raises(ValueError, match="Unrecognised session time"):
        parse_session_time("yesterday")


def test_scores_per_question() -> None:
    ranked = ["D1:1", "D2:2", "D3:3", "D4:4", "D5:5", "D6:6", "D1:9"]
    assert score_ranking(ranked, ["D6:6", "D1:9"]) == {
        "hit@5": 0.0,
        "recall@5": 0.0,
        "hit@10": 1.0,
        "recall@10": 1.0,
    }
    assert score_ranking(ranked, ["D2:2", "D9:9"])["recall@5"] == 0.5


def _conversation() -> list[dict[str, Any]]:
    """A small conversation in LoCoMo's format, written for this test."""
    turns_1 = [
        ("Ana", "I adopted a grey kitten named Pebble last weekend!"),
        ("Ben", "Congratulations! What does Pebble like to eat?"),
        ("Ana", "Mostly salmon treats, she is very picky."),
        ("Ben", "I started rowing lessons on the river this month."),
    ]
    turns_2 = [
        ("Ana", "Pebble knocked my lighthouse painting off the wall."),
        ("Ben", "Oh no! I finished my first rowing race in third place."),
        ("Ana", "Third place is great, well done."),
    ]
    return [
        {
            "sample_id": "conv-test",
            "conversation": {
                "speaker_a": "Ana",
                "speaker_b": "Ben",
                "session_1_date_time": "10:00 am on 3 March, 2024",
                "session_1": [
                    {"speaker": s, "dia_id": f"D1:{i + 1}", "text": t}
                    for i, (s, t) in enumerate(turns_1)
                ],
                "session_2_date_time": "6:30 pm on 20 March, 2024",
                "session_2": [
                    {"speaker": s, "dia_id": f"D2:{i + 1}", "text": t}
                    for i, (s, t) in enumerate(turns_2)
                ],
                "session_3_date_time": "9:00 am on 1 April, 2024",
            },
            "qa": [
                {
                    "question": "What is the name of Ana's kitten?",
                    "answer": "Pebble",
                    "evidence": ["D1:1"],
                    "category": 4,
                },
                {
                    "question": "What does Pebble eat?",
                    "answer": "salmon treats",
                    "evidence": ["D1:3"],
                    "category": 4,
                },
                {
                    "question": "How did Ben do in his rowing race?",
                    "answer": "third",
                    "evidence": ["D2:2; D1:4"],
                    "category": 1,
                },
                {
                    "question": "What did the kitten break?",
                    "adversarial_answer": "x",
                    "evidence": ["D:2:1"],
                    "category": 5,
                },
                {
                    "question": "Is there anything else?",
                    "answer": "",
                    "evidence": [],
                    "category": 3,
                },
                {"question": "Broken evidence", "answer": "", "evidence": ["D"], "category": 2},
            ],
        }
    ]


async def test_the_same_code_runs_on_any_conversation_in_the_format(tmp_path: Path) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(_conversation()))
    samples = load_samples(path)
    assert [s.number for s in samples[0].sessions] == [1, 2]  # session 3 has no turns
    stages: list[str] = []

    result = await run_locomo(
        path,
        embedder=HashingEmbedder(256),
        progress=lambda stage, done, total: stages.append(stage),
    )

    assert result["questions"] == 4  # two have no usable evidence
    assert result["evidence_dropped"] == 1  # the bare "D"
    assert set(result) >= {"product", "bm25", "dense", "questions", "evidence_dropped", "seconds"}
    for name in ("product", "bm25", "dense"):
        board = result[name]
        assert set(board) == {"overall_1_4", "overall_1_5", "by_category"}
        assert set(board["by_category"]) == {"1", "2", "3", "4", "5"}
        assert set(board["overall_1_4"]) == {"hit@5", "hit@10", "recall@5", "recall@10"}
    product = result["product"]
    assert product["by_category"]["4"]["hit@5"] == 100.0  # both single-hop answers found
    assert product["by_category"]["1"]["recall@10"] == 100.0  # both rowing turns
    assert "conv-test: ingesting" in stages
    assert "conv-test: asking" in stages
    # Each session's night ran to its end (through dreaming) well inside the bound.
    nights = result["night_ticks"]
    assert nights["nights"] == 2
    assert nights["at_bound"] == 0
    assert 1 < nights["max"] < nights["bound"]


def test_the_cli_prints_the_table_and_writes_exactly_the_json_shape(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(_conversation()))
    out = tmp_path / "result.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MINDSPACE_")}
    env.update({"MINDSPACE_EMBEDDER": "hashing", "MINDSPACE_DATA_DIR": str(tmp_path)})
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mindspace.hosts.cli.app",
            "bench",
            "locomo",
            "--data",
            str(data),
            "--output",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "product" in done.stdout
    assert "bm25" in done.stdout
    assert "dense" in done.stdout
    result = json.loads(out.read_text())
    assert list(result) == [
        "product",
        "bm25",
        "dense",
        "questions",
        "evidence_dropped",
        "seconds",
        "rankings",
    ]
    assert result["questions"] == 4
    # every question's ranking is kept for diagnosing misses
    assert len(result["rankings"]) == 4
    asked = {r["question"]: r for r in result["rankings"]}
    rowing = asked["How did Ben do in his rowing race?"]
    assert rowing["category"] == 1
    assert sorted(rowing["evidence"]) == ["D1:4", "D2:2"]
    assert set(rowing["evidence"]) <= set(rowing["product"])
    # not on a terminal: one progress line per conversation and stage on stderr
    assert "conv-test: ingesting" in done.stderr
    assert "conv-test: asking" in done.stderr
    missing = subprocess.run(
        [
            sys.executable,
            "-m",
            "mindspace.hosts.cli.app",
            "bench",
            "locomo",
            "--data",
            str(tmp_path / "nope.json"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert missing.returncode == 2
    assert missing.stderr.startswith("error: No LoCoMo file")
    assert "https://github.com/snap-research/locomo" in missing.stderr


def test_the_cli_json_goes_to_stdout_and_no_data_says_where_to_get_it(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(_conversation()))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MINDSPACE_")}
    env.update({"MINDSPACE_EMBEDDER": "hashing", "MINDSPACE_DATA_DIR": str(tmp_path)})

    def bench(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "mindspace.hosts.cli.app", "bench", "locomo", *args]
        return subprocess.run(
            command, capture_output=True, text=True, timeout=300, env=env, check=False
        )

    done = bench("--data", str(data), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["questions"] == 4  # only JSON on stdout
    no_data = bench()
    assert no_data.returncode == 2
    [line] = no_data.stderr.splitlines()
    assert line.startswith("error: No --data given.")
    assert "https://github.com/snap-research/locomo" in line
    assert no_data.stdout == ""


async def test_a_cache_dir_reuses_an_ingestion_only_while_its_key_matches(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(_conversation()))
    cache = tmp_path / "cache"
    embedder = HashingEmbedder(256)
    stages: list[str] = []

    def note(stage: str, done: int, total: int) -> None:
        stages.append(stage)

    first = await run_locomo(path, embedder=embedder, workdir=cache, progress=note)
    assert first["cache"] == {"conv-test": "ingested"}
    # The night dreamt: every memory of the ingested conversation has its A-MEM links record.
    [db] = cache.glob("conv-test-*.db")
    store = SqlStore.from_path(db)
    try:
        assistant = assistant_on(store, "conv-test", llm=OfflineLLM(announce=False))
        reader = assistant._core.read()
        ids = [f"mem_{n}" for n in range(1, 6)]
        assert set(reader.get_many(Memory, ids)) == set(reader.get_many(MemoryLinks, ids))
        assert reader.get_many(MemoryLinks, ids)
    finally:
        store.close()
    stages.clear()
    again = await run_locomo(path, embedder=embedder, workdir=cache, progress=note)
    assert again["cache"] == {"conv-test": "reused"}
    assert "conv-test: ingesting" not in stages  # no turn went in again
    assert again["product"] == first["product"]
    # A setting ingestion reads changes the key: that run ingests afresh.
    other = Settings(max_memory_chars=3_000)
    changed = await run_locomo(path, embedder=embedder, workdir=cache, settings=other)
    assert changed["cache"] == {"conv-test": "ingested"}
    # A query-side setting does not: the ingestion is reused and the search changes.
    query_side = Settings(memory_recall_question_penalty=0.0)
    reused = await run_locomo(path, embedder=embedder, workdir=cache, settings=query_side)
    assert reused["cache"] == {"conv-test": "reused"}


async def test_the_smoke_run_scores_the_same_on_postgresql(tmp_path: Path, pg_url: str) -> None:
    from mindspace.storage.sql import SqlStore

    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(_conversation()))
    on_sqlite = await run_locomo(path, embedder=HashingEmbedder(256))
    on_postgres = await run_locomo(
        path, embedder=HashingEmbedder(256), store_factory=lambda _sample: SqlStore(pg_url)
    )

    assert on_postgres["questions"] == on_sqlite["questions"] == 4
    product = on_postgres["product"]
    assert product["by_category"]["4"]["hit@5"] == 100.0
    assert product["by_category"]["1"]["recall@10"] == 100.0
    # The bar is "within 2 points"; on four questions any miss costs 25, so the
    # product's scores must be equal.
    for overall in ("overall_1_4", "overall_1_5"):
        for metric, value in on_sqlite["product"][overall].items():
            assert abs(product[overall][metric] - value) <= 2.0, (overall, metric)
