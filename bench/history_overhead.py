"""What recording tool writes in the history adds to one tool call. Prints JSON.

Inside one unit of work already holding W buffered writes (a busy tick), a tool call's
savepoint writes one entity profile; ``record_tool_writes`` then appends its history
entry before the savepoint merges (all in memory). This times savepoint, write, record
and merge together, median and p95 over many calls; no store query is in the timed part.

Usage::

    python bench/history_overhead.py [--writes 50 500 5000] [--calls 2000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from mindspace import ManualClock
from mindspace.clock import format_time
from mindspace.engine.history import Actor, record_tool_writes
from mindspace.journal.records import JournalEntry
from mindspace.memory.records import EntityProfile
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on


def measure(writes: int, calls: int, workdir: Path) -> dict[str, float]:
    store = SqlStore.from_path(workdir / f"bench_{writes}.db")
    clock = ManualClock()
    assistant = assistant_on(store, "bench", llm=OfflineLLM(announce=False), clock=clock)
    now = format_time(clock.now())
    unit = assistant._core.read()
    unit.all(EntityProfile)  # the kind is loaded, as after any entity tool
    for i in range(writes):  # the tick's earlier writes
        unit.put(JournalEntry(id=i + 1, timestamp=now, content=f"entry {i}", importance=5))
    actor = Actor("model", "bench")
    timings: list[float] = []
    for i in range(calls):
        start = time.perf_counter()
        savepoint = unit.child()  # what the tool runner opens for a call
        savepoint.put(EntityProfile(entity_id=f"npc_{i}", first_seen=now, last_seen=now))
        record_tool_writes(savepoint, clock, actor, "update_entity_observation")
        savepoint.merge()
        timings.append((time.perf_counter() - start) * 1e6)
    store.close()
    timings.sort()
    return {
        "buffered_writes": writes,
        "p50_us": round(statistics.median(timings), 1),
        "p95_us": round(timings[int(len(timings) * 0.95)], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, nargs="+", default=[50, 500, 5000])
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = [measure(w, args.calls, Path(tmp)) for w in args.writes]
    print(json.dumps({"calls": args.calls, "results": results}, indent=2))


if __name__ == "__main__":
    main()
