"""What the query-side rerank costs ``recall_memories``, on memories shaped like conversations.

``bench/memory_search.py``'s corpus has no questions and no dates, so the rerank there
only reads the candidates' records. Here every memory is a journal turn of a two-person
exchange (consecutive entry ids, the neighbouring turns as context, every third turn a
question, one exchange a day over three years), and the queries are questions, half of
them naming a date ("on 3 May, 2023") and a quarter asking when, every one naming a
speaker: every rule of :mod:`mindspace.memory.query` runs, including the reads of a
question's neighbours and of the best hits' turns two on and two back.
Each size is searched with the rerank off and on, query by query in turn. Usage::

    python bench/recall_rerank.py [--sizes 1000 10000] [--queries 200]

Prints JSON. The corpus is embedded with the hashing embedder (384 dims), as in
``bench/memory_search.py``; the MiniLM query embedding is timed separately and reported
beside it (``minilm_query_embedding_ms``), since it is the same with the rerank on or off.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from mindspace import Assistant, ManualClock, Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.memory.semantic import MemoryDraft, SemanticMemory
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on

WORDS = [
    "garden",
    "kitten",
    "painting",
    "tournament",
    "pottery",
    "concert",
    "hike",
    "lake",
    "recipe",
    "violin",
    "turtle",
    "festival",
    "camping",
    "novel",
    "studio",
    "puppy",
    "market",
    "museum",
    "beach",
    "workshop",
    "guitar",
    "bakery",
    "marathon",
    "library",
    "canoe",
    "sunset",
    "bicycle",
    "theatre",
    "orchard",
    "harbour",
]
START = datetime(2021, 1, 1, 18, 0, tzinfo=UTC)


def _drafts(n: int, rng: random.Random) -> list[MemoryDraft]:
    turns = []
    for i in range(n):
        day = START + timedelta(days=i // 6, seconds=30 * (i % 6))
        topic = rng.sample(WORDS, 3)
        if i % 3 == 1:
            text = f"Wow, how was the {topic[0]} and the {topic[1]}?"
        else:
            text = f"I went to the {topic[0]} with my {topic[1]} {rng.choice(WORDS)} last week"
        turns.append((("Ana", "Ben")[i % 2], text, day))
    drafts = []
    for i, (speaker, text, day) in enumerate(turns):
        around = [
            f"{s}: {t}"
            for j in (i - 1, i + 1)
            if 0 <= j < n and j // 6 == i // 6
            for s, t, _ in [turns[j]]
        ]
        drafts.append(
            MemoryDraft(
                content=text,
                source_entity=speaker,
                source="journal",
                entry_id=i + 1,
                occurred_at=day.strftime("%Y-%m-%dT%H:%M:%SZ"),
                context="\n".join(around) or None,
                verbatim=True,  # a journal turn word for word, as consolidation keeps it
            )
        )
    return drafts


def _queries(count: int, rng: random.Random) -> list[str]:
    asked = []
    for i in range(count):
        a, b = rng.sample(WORDS, 2)
        day = START + timedelta(days=rng.randrange(3 * 365))
        if i % 4 == 0:
            asked.append(f"When did Ana go to the {a} with her {b}?")
        elif i % 2 == 1:
            asked.append(f"What did Ben do at the {a} on {day.day} {day:%B}, {day.year}?")
        else:
            asked.append(f"What did Ana think of the {a} and the {b}?")
    return asked


def _open(store: SqlStore, key: str, on: bool) -> Assistant:
    off = {
        "memory_recall_time_boost": 0.0,
        "memory_recall_question_penalty": 0.0,
        "memory_recall_reply_discount": -1.0,
        "memory_recall_speaker_boost": 0.0,
        "memory_recall_continuation_discount": -1.0,
        "memory_recall_session_boost": 0.0,
    }
    return assistant_on(
        store,
        key,
        llm=OfflineLLM(announce=False),
        clock=ManualClock(START + timedelta(days=4 * 365)),
        settings=Settings() if on else Settings(**off),  # type: ignore[arg-type]
        embedder=HashingEmbedder(384),
    )


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(1000 * statistics.median(ordered), 2),
        "p95_ms": round(1000 * ordered[int(0.95 * (len(ordered) - 1))], 2),
    }


async def _run_size(size: int, queries: int, workdir: Path) -> dict[str, Any]:
    rng = random.Random(size)
    drafts = _drafts(size, rng)
    assistants = {}
    for on in (False, True):
        store = SqlStore.from_path(workdir / f"rerank-{size}-{on}.db")
        assistant = _open(store, f"rerank-{size}", on)
        for start in range(0, size, 2_000):
            with assistant._core.transaction() as unit:
                SemanticMemory(
                    unit,
                    assistant.clock,
                    assistant.settings,
                    assistant.embedder,
                    assistant._core.memory_index,
                ).store_many(drafts[start : start + 2_000])
        assistant._core.memory_index.count()  # build the index before timing
        assistants[on] = assistant
    times: dict[bool, list[float]] = {False: [], True: []}
    for question in _queries(queries, rng):
        for on in (False, True):
            t0 = time.perf_counter()
            result = await assistants[on].call_tool(
                "recall_memories", {"query": question, "limit": 10}
            )
            times[on].append(time.perf_counter() - t0)
            assert result["success"], result
    return {
        "memories": size,
        "recall_memories_rerank_off": _percentiles(times[False]),
        "recall_memories_rerank_on": _percentiles(times[True]),
    }


def _minilm_query_ms(repeats: int = 50) -> float | None:
    from mindspace.runtime import build_embedder

    embedder = build_embedder(Settings())
    if embedder is None:
        return None
    embedder.embed(["warm up"])
    samples = []
    for n in range(repeats):
        t0 = time.perf_counter()
        embedder.embed([f"When did Ana go to the garden with her kitten, time {n}?"])
        samples.append(time.perf_counter() - t0)
    return round(1000 * statistics.median(samples), 2)


def main() -> None:
    """Run the benchmark and print its JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sizes = [asyncio.run(_run_size(size, args.queries, Path(tmp))) for size in args.sizes]
    print(
        json.dumps(
            {
                "benchmark": "recall_rerank",
                "queries_per_size": args.queries,
                "sizes": sizes,
                "minilm_query_embedding_ms": _minilm_query_ms(),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
