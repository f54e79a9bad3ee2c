"""Compacting a long journal: sleep ticks and their bookkeeping cost at 1k / 10k entries.

For each size E, E journal entries are written straight through one unit of work into a
real SQLite file (heuristic importance, not consolidated: all pending, as the journal
tool leaves them; one in 50 is a ``[SYNTHESIS]`` entry, which is scored by hand and never
consolidated). The assistant is put to sleep and sleep ticks run until the compacting
phase is over (every entry scored and moved to semantic memory).

The model is a :class:`~mindspace.llm.FunctionLLM` stub that answers a batch scoring
prompt with a JSON list of scores, a single scoring prompt with one score and anything
else with ``[]``, instantly; the embedder is the hashing embedder. Time spent inside the
stub and the embedder is measured and subtracted: what is left is mindspace's
bookkeeping (finding the work, prompts, parsing, the SQLite commit). Per-tick
bookkeeping is reported for the first and the last 10% of ticks: it must not grow
with E.

Run:  PYTHONPATH=src .venv/bin/python bench/compact_journal.py [--entries 1000 10000]
      [--profile]
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import os
import platform
import pstats
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from mindspace import Assistant, ManualClock, Settings
from mindspace.clock import format_time
from mindspace.embeddings import HashingEmbedder
from mindspace.embeddings.port import Vectors
from mindspace.journal import JournalEntry, JournalMeta
from mindspace.journal.importance import BATCH_IMPORTANCE_HEAD, IMPORTANCE_PROMPT
from mindspace.llm import FunctionLLM
from mindspace.llm.port import Message, ToolSchema
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on

NOW = datetime(2025, 12, 6, 10, 0, tzinfo=UTC)
WORDS = ("Alice", "Bob", "guard", "merchant", "tavern", "ale", "ring", "well", "map", "rain")
_EVENT = re.compile(r"^Event \d+:", re.M)
_SINGLE_HEAD = IMPORTANCE_PROMPT.split("\n", 1)[0]


class Stopwatch:
    """Accumulated seconds spent inside a stub."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0


def scoring_stub(watch: Stopwatch) -> FunctionLLM:
    """Answers scoring prompts instantly (a list for a batch); anything else gets ``[]``."""

    def answer(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> str:
        started = time.perf_counter()
        prompt = messages[-1].content or ""
        if prompt.startswith(BATCH_IMPORTANCE_HEAD):
            reply = json.dumps([(n % 9) + 1 for n in range(len(_EVENT.findall(prompt)))])
        elif prompt.startswith(_SINGLE_HEAD):
            reply = "6"
        else:
            reply = "[]"
        watch.seconds += time.perf_counter() - started
        watch.calls += 1
        return reply

    return FunctionLLM(answer, model="stub")


class TimedEmbedder:
    """The hashing embedder, timed."""

    def __init__(self, watch: Stopwatch, dim: int = 256) -> None:
        self.inner = HashingEmbedder(dim)
        self.name = self.inner.name
        self.dim = dim
        self.watch = watch

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed through the hashing embedder, adding the time to the stopwatch."""
        started = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.watch.seconds += time.perf_counter() - started
            self.watch.calls += 1


def seed(assistant: Assistant, count: int) -> None:
    """``count`` pending entries, two minutes apart, in one commit."""
    with assistant._core.transaction() as unit:
        start = NOW - timedelta(minutes=2 * count)
        for n in range(1, count + 1):
            words = [WORDS[(n * 7 + k * 3) % len(WORDS)] for k in range(6 + n % 12)]
            synthesis = n % 50 == 0
            unit.put(
                JournalEntry(
                    id=n,
                    timestamp=format_time(start + timedelta(minutes=2 * n)),
                    content=("[SYNTHESIS] " if synthesis else "") + " ".join(words) + ".",
                    source_entity=WORDS[n % 2],
                    importance=8 if synthesis else 5,
                    importance_method="manual" if synthesis else "heuristic",
                )
            )
        meta = unit.doc(JournalMeta)
        unit.put_doc(meta.model_copy(update={"entry_count": count, "max_entries": count + 100}))


async def run_size(count: int, workdir: Path, profile: bool) -> dict[str, Any]:
    store = SqlStore.from_path(workdir / f"compact_{count}.db")
    clock = ManualClock(NOW)
    settings = Settings(data_dir=workdir, embedder="hashing")
    llm_watch, embed_watch = Stopwatch(), Stopwatch()
    assistant = assistant_on(
        store,
        "bench",
        llm=scoring_stub(llm_watch),
        clock=clock,
        settings=settings,
        embedder=TimedEmbedder(embed_watch),
    )
    profiler = cProfile.Profile() if profile else None
    try:
        seed(assistant, count)
        await assistant.sleep("bench")
        ticks: list[float] = []
        cpu_ticks: list[float] = []  # CPU time: less disturbed by other processes
        wall0, cpu0 = time.perf_counter(), time.process_time()
        last = {"scoring": -1, "consolidation": -1}
        while True:
            spent = llm_watch.seconds + embed_watch.seconds
            started, cpu_started = time.perf_counter(), time.process_time()
            if profiler:
                profiler.enable()
            result = await assistant.tick()
            if profiler:
                profiler.disable()
            outside = llm_watch.seconds + embed_watch.seconds - spent
            ticks.append(time.perf_counter() - started - outside)
            cpu_ticks.append(time.process_time() - cpu_started - outside)
            clock.advance(minutes=1)
            sleep = result.sleep
            if sleep is None or sleep.phase != "compacting":
                raise RuntimeError(f"left compacting unexpectedly: {result!r}")
            ops = sleep.operations
            last = {
                "scoring": ops["score_pending_entries"]["remaining"],
                "consolidation": ops["run_sleep_consolidation"]["remaining"],
            }
            if sleep.phase_after != "compacting":
                break
        wall = time.perf_counter() - wall0
        cpu = time.process_time() - cpu0
        unit = assistant._core.read()
        entries = unit.all(JournalEntry)
        done = all(
            e.is_synthesis or (e.consolidated and e.importance_method == "llm") for e in entries
        )
    finally:
        store.close()
    tenth = max(1, len(ticks) // 10)
    outside = llm_watch.seconds + embed_watch.seconds
    report: dict[str, Any] = {
        "entries": count,
        "ticks": len(ticks),
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "llm_stub_s": round(llm_watch.seconds, 3),
        "llm_calls": llm_watch.calls,
        "embedder_s": round(embed_watch.seconds, 3),
        "embed_calls": embed_watch.calls,
        "bookkeeping_s": round(wall - outside, 3),
        "per_tick_ms_first_10pct": round(1000 * statistics.median(ticks[:tenth]), 2),
        "per_tick_ms_last_10pct": round(1000 * statistics.median(ticks[-tenth:]), 2),
        "per_tick_ms_median": round(1000 * statistics.median(ticks), 2),
        "first_tick_ms": round(1000 * ticks[0], 2),
        "slowest_tick_ms": round(1000 * max(ticks), 2),
        "ticks_total_s": round(sum(ticks), 3),
        "per_tick_ms_median_by_decile": [
            round(1000 * statistics.median(ticks[d * tenth : (d + 1) * tenth] or ticks[-1:]), 2)
            for d in range(10)
        ],
        "per_tick_cpu_ms_median_by_decile": [
            round(1000 * statistics.median(cpu_ticks[d * tenth : (d + 1) * tenth] or ticks[-1:]), 2)
            for d in range(10)
        ],
        "remaining_at_end": last,
        "all_scored_and_consolidated": done,
    }
    if profiler:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(30)
        report["profile"] = out.getvalue().splitlines()
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--entries", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--profile", action="store_true", help="add a cProfile of the ticks")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        results = [asyncio.run(run_size(n, Path(tmp), args.profile)) for n in args.entries]
    report = {
        "benchmark": "compacting a journal: sleep ticks, stub LLM, hashing embedder, SQLite",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "loadavg": Path("/proc/loadavg").read_text().split()[:3]
        if Path("/proc/loadavg").exists()
        else None,
        "results": results,
    }
    print(json.dumps(report, indent=2))
    return 0 if all(r["all_scored_and_consolidated"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
