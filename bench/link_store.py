"""Link a whole store of M memories (a night's A-MEM dreaming), CPU time. Prints JSON.

The store is filled once (hashing-embedder vectors, 384 dims, 12-word Zipf texts; see
``bench/memory_resident.py``), then the night's linking runs exactly as a dreaming tick
runs it: ``run_dreaming_tick`` in its own unit of work, committed, until no memory is
left unlinked. Reported: the wall and CPU time of the whole pass, the ticks, and the CPU
per tick at the start and at the end (it must not grow as the store fills with links).
Then the links of ``--check`` memories drawn at random are compared with an exact pass
(a second index that never uses cells): ``link_recall`` is the share of the exact links
that the night made, ``same_links`` how many of those memories got exactly the exact
ones.
``--per-tick`` is ``MINDSPACE_SLEEP_LINKS_PER_TICK`` (the spec's 5 by default).

Usage::

    python bench/link_store.py [--memories 100000] [--per-tick 5 32] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from mindspace import ManualClock
from mindspace.embeddings import HashingEmbedder
from mindspace.memory.linking import UnlinkedMemories, run_dreaming_tick
from mindspace.memory.records import Memory, MemoryLinks
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on

sys.path.insert(0, str(Path(__file__).parent))
from memory_resident import _fill  # the same corpus as the resident bench


def _recall(core: Any, threshold: float, sample: int) -> dict[str, Any]:
    """The night's links of ``sample`` random memories against an exact pass."""
    from mindspace.memory.index import MemoryIndex

    exact = MemoryIndex(core.state, core.memory_index.embedder, cells_from=2**62)
    unit = core.read()
    keys = random.Random(7).sample(list(core.memory_index.keys), sample)
    memories = unit.get_many(Memory, keys)
    made = unit.get_many(MemoryLinks, keys)
    found = wanted = same = 0
    for start in range(0, len(keys), 32):
        chunk = [memories[k] for k in keys[start : start + 32]]
        vectors = np.stack([m.vector() for m in chunk])
        truth = exact.nearest(vectors, k=5, threshold=threshold, exclude=[m.id for m in chunk])
        for memory, near in zip(chunk, truth, strict=True):
            expected = {n.key for n in near}
            got = {link.id for link in made[memory.id].linked_to}
            wanted += len(expected)
            found += len(expected & got)
            same += expected == got
    return {
        "checked": len(keys),
        "exact_links": wanted,
        "link_recall": round(found / wanted, 4) if wanted else 1.0,
        "same_links": same,
    }


def _link(path: Path, per_tick: int, check: int, max_ticks: int | None) -> dict[str, Any]:
    store = SqlStore.from_path(path, create=False)
    assistant = assistant_on(
        store,
        "resident",
        llm=OfflineLLM(announce=False),
        clock=ManualClock(),
        embedder=HashingEmbedder(384),
    )
    core = assistant._core
    unlinked = UnlinkedMemories(core.state)
    threshold = core.settings.memory_link_threshold
    build_cpu = time.process_time()
    build_wall = time.perf_counter()
    core.memory_index.count()  # the index, built once per process (reported apart)
    remaining = len(unlinked)
    build = (time.process_time() - build_cpu, time.perf_counter() - build_wall)
    ticks: list[float] = []
    links = 0
    cpu0, wall0 = time.process_time(), time.perf_counter()
    while remaining and (max_ticks is None or len(ticks) < max_ticks):
        start = time.process_time()
        with core.transaction() as unit:
            result = run_dreaming_tick(
                unit, core.clock, core.memory_index, threshold, unlinked, per_tick
            )
        ticks.append(time.process_time() - start)
        links += result["links_created"]
        remaining = result["remaining"]
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    checked = min(check, len(core.memory_index.keys))
    recall = _recall(core, threshold, checked) if checked and not remaining else {}
    store.close()
    tenth = max(1, len(ticks) // 10)
    return {
        "per_tick": per_tick,
        "ticks": len(ticks),
        "left_unlinked": remaining,
        "links_created": links,
        "cpu_seconds": round(cpu, 1),
        "wall_seconds": round(wall, 1),
        "index_build_cpu_seconds": round(build[0], 2),
        "cpu_ms_per_tick_first_tenth": round(statistics.median(ticks[:tenth]) * 1000, 2),
        "cpu_ms_per_tick_last_tenth": round(statistics.median(ticks[-tenth:]) * 1000, 2),
        "cpu_ms_per_tick_median": round(statistics.median(ticks) * 1000, 2),
        **recall,
    }


def main() -> None:
    """Run the benchmark and print its JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--per-tick", type=int, nargs="+", default=[5, 32])
    parser.add_argument(
        "--max-ticks", type=int, default=None, help="stop after this many ticks (a partial run)"
    )
    parser.add_argument("--check", type=int, default=1000, help="memories checked vs exact")
    parser.add_argument("--workdir", type=Path, default=None, help="keep the corpus here")
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="link-"))
    workdir.mkdir(parents=True, exist_ok=True)
    corpus = workdir / f"resident-{args.memories}.db"
    if not corpus.exists():
        _fill(corpus, args.memories)
    runs = []
    for per_tick in args.per_tick:
        copy = workdir / f"link-{args.memories}-{per_tick}-{os.getpid()}.db"
        shutil.copyfile(corpus, copy)
        runs.append(_link(copy, per_tick, args.check, args.max_ticks))
        copy.unlink()
    print(
        json.dumps(
            {
                "benchmark": "link_store",
                "memories": args.memories,
                "load": os.getloadavg(),
                "runs": runs,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
