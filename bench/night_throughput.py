"""Does a night keep up with its day? Ticks, LLM calls and CPU for N new entries a day.

For each size N, a day of N journal entries (what people said and what the assistant
noted, heuristic scores, spread over the day as the journal tool leaves them) is written
to a real SQLite file; then the assistant sleeps with the default settings (a 4-hour
sleep, a tick every 60 s of the ManualClock: 240 ticks) and ticks until it wakes by
itself. With ``--days D`` the next day adds N more entries and another night runs: what
one night leaves is the next one's first work.

The model is the offline model (scoring batches, one ``sleep_consolidate`` session per
batch of entries that stores each entry's facts, reflection), counted per kind of call;
the embedder is the hashing embedder. Reported per night: the ticks (when compacting
ended, when the last memory was linked), the LLM calls (and per 1,000 entries), CPU
seconds of the ticks, and what was left at the wake (entries unscored / unconsolidated,
memories unlinked), counted from the records so the script runs on older trees too.

Run:  PYTHONPATH=src .venv/bin/python bench/night_throughput.py [--entries 500 2000 10000]
      [--days 1]
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from mindspace import Assistant, ManualClock, Settings
from mindspace.clock import format_time
from mindspace.embeddings import HashingEmbedder
from mindspace.engine.modes import OperatingMode
from mindspace.journal import JournalEntry, JournalMeta
from mindspace.journal.importance import BATCH_IMPORTANCE_HEAD, score_importance_heuristic
from mindspace.journal.reflection_state import update_reflection_state
from mindspace.llm import FunctionLLM
from mindspace.llm.port import LLMResponse, Message, ToolSchema
from mindspace.memory.records import Memory, MemoryLinks
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on

DAY_START = datetime(2025, 12, 6, 8, 0, tzinfo=UTC)
PEOPLE = ("Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi")
THINGS = ("dark ale", "the old map", "a silver ring", "the north gate", "rye bread", "the well")
PLACES = ("Berlin", "the harbour", "the mill", "Paris", "the market", "the tower")
SAID = (
    "{who} said they like {thing}.",
    "{who} moved to {place} last spring.",
    "{who} is looking for {thing} near {place}.",
    "{who} told me the merchant sold {thing} for {n} coins.",
    "{who} works at {place} on weekdays.",
    "I helped {who} carry {thing} to {place}.",
)


class CountingLLM:
    """The offline model, its calls counted by kind and timed (``llm`` is the port)."""

    def __init__(self) -> None:
        self.offline = OfflineLLM(announce=False)
        self.calls: Counter[str] = Counter()
        self.seconds = 0.0
        self.llm = FunctionLLM(self._answer, model="offline")

    async def _answer(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> LLMResponse:
        text = "\n".join(m.content or "" for m in messages)
        if BATCH_IMPORTANCE_HEAD in text:
            kind = "scoring_batch"
        elif "Rate the significance of this event" in text:
            kind = "scoring_single"
        elif "Consolidate these journal entries" in text:
            kind = "consolidation"
        else:
            kind = "other"
        self.calls[kind] += 1
        started = time.process_time()
        try:
            return await self.offline.complete(messages, tools)
        finally:
            self.seconds += time.process_time() - started


def write_day(assistant: Assistant, day: int, count: int) -> None:
    """``count`` entries over the day's 12 hours, in commits of 500 (as a busy day's)."""
    start = DAY_START + timedelta(days=day)
    step = timedelta(hours=12) / max(1, count)
    with assistant._core.transaction() as unit:
        first = unit.doc(JournalMeta).entry_count + 1
    for chunk in range(0, count, 500):
        with assistant._core.transaction() as unit:
            for n in range(chunk, min(count, chunk + 500)):
                entry_id = first + n
                who = PEOPLE[n % len(PEOPLE)]
                text = SAID[n % len(SAID)].format(
                    who=who,
                    thing=THINGS[(n // 3) % len(THINGS)],
                    place=PLACES[(n // 7) % len(PLACES)],
                    n=n % 97,
                )
                direct = n % 3 == 0 and not text.startswith("I ")
                source = "direct" if direct else "observation"
                score = score_importance_heuristic(text, source)
                unit.put(
                    JournalEntry(
                        id=entry_id,
                        timestamp=format_time(start + step * n),
                        content=text,
                        source_type=source,
                        source_trust=0.9 if direct else 0.8,
                        source_entity=who,
                        importance=score,
                        importance_method="heuristic",
                    )
                )
                update_reflection_state(unit, score, entry_id)
            meta = unit.doc(JournalMeta)
            last = min(count, chunk + 500) + first - 1
            unit.put_doc(meta.model_copy(update={"entry_count": last}))


def backlog(assistant: Assistant) -> dict[str, int]:
    """What is left of the night's work, counted from the records."""
    unit = assistant._core.read()
    entries = [e for e in unit.all(JournalEntry) if not e.is_synthesis]
    memory_ids = [
        str(r["id"])
        for r in assistant._core.store.scan(
            assistant._core.state.assistant_id, Memory.kind, ("id",)
        )
    ]
    linked = {
        str(r["memory_id"])
        for r in assistant._core.store.scan(
            assistant._core.state.assistant_id, MemoryLinks.kind, ("memory_id",)
        )
    }
    return {
        "unscored": sum(1 for e in entries if e.importance_method == "heuristic"),
        "unconsolidated": sum(1 for e in entries if not e.consolidated),
        "unlinked": sum(1 for key in memory_ids if key not in linked),
        "memories": len(memory_ids),
    }


async def night(assistant: Assistant, clock: ManualClock, llm: CountingLLM) -> dict[str, Any]:
    """Sleep at 22:00 with the defaults and tick until the assistant wakes by itself."""
    clock.set(clock.now().replace(hour=22, minute=0, second=0))
    calls_before, llm_cpu_before = Counter(llm.calls), llm.seconds
    await assistant.sleep("night")
    rate = assistant.views.tick_rate()
    ticks = compacting_ticks = 0
    linked_at: int | None = None
    cpu = 0.0
    while True:
        started = time.process_time()
        result = await assistant.tick()
        cpu += time.process_time() - started
        ticks += 1
        sleep = result.sleep
        if sleep is None or sleep.woke:
            break
        if sleep.phase == "compacting":
            compacting_ticks = ticks
        dreaming = sleep.operations.get("run_dreaming_tick")
        if linked_at is None and dreaming is not None and dreaming["remaining"] == 0:
            linked_at = ticks
        clock.advance(seconds=rate)
        if ticks > 100_000:
            raise RuntimeError("the night never ended")
    calls = llm.calls - calls_before
    state = assistant._core.read().doc(OperatingMode)
    return {
        "ticks": ticks,
        "compacting_ticks": compacting_ticks,
        "all_linked_at_tick": linked_at,
        "llm_calls": sum(calls.values()),
        "llm_calls_by_kind": dict(sorted(calls.items())),
        "cpu_s": round(cpu, 3),
        "cpu_s_outside_model": round(cpu - (llm.seconds - llm_cpu_before), 3),
        "woke": state.reason,
        "left_at_wake": backlog(assistant),
    }


async def run_size(count: int, days: int, workdir: Path, factor: int | None) -> dict[str, Any]:
    """``days`` days of ``count`` entries, each followed by a night."""
    store = SqlStore.from_path(workdir / f"night_{count}.db")
    clock = ManualClock(DAY_START)
    settings = Settings(data_dir=workdir, embedder="hashing")
    if factor is not None:  # an older tree has no such setting: it is ignored there
        settings = Settings(data_dir=workdir, embedder="hashing", sleep_catch_up_factor=factor)
    llm = CountingLLM()
    assistant = assistant_on(
        store, "bench", llm=llm.llm, clock=clock, settings=settings, embedder=HashingEmbedder(256)
    )
    nights = []
    try:
        with assistant._core.transaction() as unit:
            meta = unit.doc(JournalMeta)
            unit.put_doc(meta.model_copy(update={"max_entries": 10 * count * days + 1_000}))
        for day in range(days):
            clock.set(DAY_START + timedelta(days=day))
            write_day(assistant, day, count)
            report = await night(assistant, clock, llm)
            report["llm_calls_per_1000_entries"] = round(1000 * report["llm_calls"] / count, 1)
            nights.append(report)
    finally:
        store.close()
    return {"entries_a_day": count, "days": days, "catch_up_factor": factor, "nights": nights}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--entries", type=int, nargs="+", default=[500, 2_000, 10_000])
    parser.add_argument("--days", type=int, default=1, help="days (each then a night) per size")
    parser.add_argument(
        "--catch-up-factor", type=int, default=None, help="MINDSPACE_SLEEP_CATCH_UP_FACTOR"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        results = [
            asyncio.run(run_size(n, args.days, Path(tmp), args.catch_up_factor))
            for n in args.entries
        ]
    report = {
        "benchmark": "a day of N journal entries, then a default night: offline model, "
        "hashing embedder, SQLite",
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "loadavg": Path("/proc/loadavg").read_text().split()[:3]
        if Path("/proc/loadavg").exists()
        else None,
        "results": results,
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
