"""Importance scoring in batches: LLM calls and wall time to score N journal entries.

For each batch size, N entries (heuristic scores, as the journal tool writes them) are
stored in a real SQLite file through an assistant, then one
``mindspace.journal.score_pending_entries(unit, llm, max_per_tick=N, batch_size=B)`` run
rates them all with the offline model, counting every ``complete`` call. Batch size 1 is
the previous behaviour (one call per entry). The run checks that every entry ended with
an LLM score equal to the offline model's single-entry answer (the heuristic without a
source modifier), so a batch never changes the scores.

The offline model answers in microseconds, so its wall time is mindspace's own overhead
(prompts, strict parsing, the SQLite commit). ``--latency-ms`` adds a fixed wait to each
call, standing in for a remote model's round trip.

Run:  .venv/bin/python bench/score_batches.py [--entries 1000] [--batch-sizes 1 10]
      [--latency-ms 0]
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mindspace import ManualClock, Settings
from mindspace.journal import JournalBook, JournalEntry, score_pending_entries
from mindspace.journal.importance import score_importance_heuristic
from mindspace.llm.port import LLM, LLMResponse, Message, ToolSchema
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on

NOW = datetime(2025, 12, 6, 10, 0, tzinfo=UTC)
WORDS = (
    "Alice",
    "Bob",
    "guard",
    "merchant",
    "tavern",
    "ale",
    "ring",
    "well",
    "floor",
    "quest",
    "secret",
    "treasure",
    "player",
    "routine",
    "walked",
    "market",
    "door",
    "night",
    "rain",
    "song",
    "fight",
    "friend",
    "letter",
    "map",
    "danger",
    "stranger",
)


class CountingLLM:
    """Passes every call to ``inner`` (after ``latency_s``) and counts them."""

    def __init__(self, inner: LLM, latency_s: float = 0.0) -> None:
        self.inner = inner
        self.latency_s = latency_s
        self.calls = 0

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema] = (),
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> LLMResponse:
        self.calls += 1
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        return await self.inner.complete(
            messages, tools, max_tokens=max_tokens, temperature=temperature
        )


def make_contents(count: int, rng: random.Random) -> list[str]:
    """Synthetic events of 6-30 words, some with "!" or "?"."""
    texts = []
    for _ in range(count):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 30)))
        texts.append(text + rng.choice((".", ".", "!", "?")))
    return texts


async def run_size(count: int, batch_size: int, workdir: Path, latency_s: float) -> dict[str, Any]:
    contents = make_contents(count, random.Random(count))
    store = SqlStore.from_path(workdir / f"score_{count}_{batch_size}.db")
    clock = ManualClock(NOW)
    settings = Settings(data_dir=workdir)
    llm = CountingLLM(OfflineLLM(announce=False), latency_s)
    assistant = assistant_on(store, "bench", llm=llm, clock=clock, settings=settings)
    try:
        with assistant._core.transaction() as unit:
            book = JournalBook(unit, clock, settings)
            book.set_max_entries(count + 100)
            for text in contents:
                book.add(text)
        started = time.perf_counter()
        with assistant._core.transaction() as unit:
            outcome = await score_pending_entries(
                unit, llm, max_per_tick=count, batch_size=batch_size
            )
        wall_s = time.perf_counter() - started
        entries = sorted(assistant._core.read().all(JournalEntry), key=lambda e: e.id)
    finally:
        store.close()
    scores_match = all(
        e.importance_method == "llm"
        and e.importance == score_importance_heuristic(e.content, "", [])
        for e in entries
    )
    return {
        "entries": count,
        "batch_size": batch_size,
        "llm_calls": llm.calls,
        "llm_calls_reported": outcome.llm_calls,
        "llm_scored": outcome.llm_scored,
        "batch_fallbacks": len(outcome.batch_fallbacks),
        "remaining": outcome.remaining,
        "wall_s": round(wall_s, 3),
        "scores_match_single_answers": scores_match,
    }


async def run(
    count: int, batch_sizes: list[int], workdir: Path, latency_s: float
) -> list[dict[str, Any]]:
    return [await run_size(count, b, workdir, latency_s) for b in batch_sizes]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--entries", type=int, default=1_000)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--latency-ms", type=float, default=0.0, help="added wait per call")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        results = asyncio.run(
            run(args.entries, args.batch_sizes, Path(tmp), args.latency_ms / 1000)
        )
    report = {
        "benchmark": "importance scoring, offline model, SQLite",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "latency_ms_per_call": args.latency_ms,
        "results": results,
    }
    print(json.dumps(report, indent=2))
    ok = all(r["scores_match_single_answers"] and r["remaining"] == 0 for r in results)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
