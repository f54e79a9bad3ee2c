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
``--embedder minilm --texts LOCOMO.json`` fills the store with the default embedder's
vectors of real sentences instead (the dialog turns, observations and summaries of a
LoCoMo file, split into sentences, then pairs of them until there are enough), to check
that the cells were not tuned to one distribution; ``--cells-from`` lowers the size from
which the index searches its cells (``MemoryIndex.cells_from``), so that a store of that
kind small enough to embed on a laptop goes through them.

Usage::

    python bench/link_store.py [--memories 100000] [--per-tick 5 32] [--workdir DIR]
                               [--embedder hashing|minilm --texts LOCOMO.json]
                               [--cells-from ROWS]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
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
from mindspace.embeddings.port import Embedder
from mindspace.memory.linking import UnlinkedMemories, run_dreaming_tick
from mindspace.memory.records import Memory, MemoryLinks
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on

sys.path.insert(0, str(Path(__file__).parent))
from memory_resident import EMBED_DIM, _fill  # the same corpus as the resident bench


def _embedder(name: str) -> Embedder:
    if name == "minilm":
        from mindspace.embeddings.minilm import MiniLMEmbedder

        return MiniLMEmbedder()
    return HashingEmbedder(EMBED_DIM)


def _sentences(path: Path, size: int) -> list[str]:
    """``size`` distinct texts from a LoCoMo file: its sentences, then pairs of them."""
    found: dict[str, None] = {}
    for sample in json.loads(path.read_text(encoding="utf-8")):
        parts: list[str] = []
        for name, session in sample["conversation"].items():
            if name.startswith("session_") and isinstance(session, list):
                parts.extend(turn["text"] for turn in session)
        for field in ("observation", "session_summary", "event_summary"):
            parts.extend(str(v) for v in _leaves(sample.get(field)))
        for part in parts:
            for sentence in re.split(r"(?<=[.!?])\s+", part):
                if len(sentence.split()) >= 4:
                    found.setdefault(sentence.strip(), None)
    texts = list(found)
    rng = random.Random(size)
    while len(found) < size:
        found.setdefault(f"{rng.choice(texts)} {rng.choice(texts)}", None)
    return list(found)[:size]


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value] if isinstance(value, str) else []


def _recall(core: Any, threshold: float, sample: int) -> dict[str, Any]:
    """The night's links of ``sample`` random memories against an exact pass.

    ``link_recall_ties`` also counts a link whose score equals the exact pass's last
    (k-th) one: int8 scores tie often (about one memory in fourteen has a tie at the
    fifth place here), and the exact pass breaks such ties in no particular order.
    """
    from mindspace.memory.index import MemoryIndex

    exact = MemoryIndex(core.state, core.memory_index.embedder, cells_from=2**62)
    unit = core.read()
    keys = random.Random(7).sample(list(core.memory_index.keys), sample)
    memories = unit.get_many(Memory, keys)
    made = unit.get_many(MemoryLinks, keys)
    found = tied = wanted = same = 0
    for start in range(0, len(keys), 32):
        chunk = [memories[k] for k in keys[start : start + 32]]
        vectors = np.stack([m.vector() for m in chunk])
        truth = exact.nearest(vectors, k=5, threshold=threshold, exclude=[m.id for m in chunk])
        for memory, near in zip(chunk, truth, strict=True):
            expected = {n.key for n in near}
            links = made[memory.id].linked_to
            got = {link.id for link in links}
            wanted += len(expected)
            found += len(expected & got)
            same += expected == got
            last = near[-1].score if len(near) == 5 else None
            ties = sum(link.id not in expected and link.score == last for link in links)
            tied += min(len(expected), len(expected & got) + ties)
    return {
        "checked": len(keys),
        "exact_links": wanted,
        "link_recall": round(found / wanted, 4) if wanted else 1.0,
        "link_recall_ties": round(tied / wanted, 4) if wanted else 1.0,
        "same_links": same,
    }


def _cell_sizes(cells: Any) -> dict[str, Any]:
    """How the rows are spread over the cells (read from the index's private cells)."""
    if cells is None or not hasattr(cells, "sizes"):  # none built, or older code
        return {}
    sizes = np.array(cells.sizes())
    return {
        "cells": cells.cells,
        "probes": cells.probes,
        "cell_size_median": int(np.median(sizes)),
        "cell_size_p90": int(np.percentile(sizes, 90)),
        "cell_size_max": int(sizes.max()),
        "cells_mb": round(cells.nbytes / 2**20, 1),
    }


def _link(
    path: Path, per_tick: int, check: int, max_ticks: int | None, args: argparse.Namespace
) -> dict[str, Any]:
    store = SqlStore.from_path(path, create=False)
    assistant = assistant_on(
        store,
        "resident",
        llm=OfflineLLM(announce=False),
        clock=ManualClock(),
        embedder=_embedder(args.embedder),
    )
    core = assistant._core
    if args.cells_from is not None:
        core.memory_index.cells_from = args.cells_from
    unlinked = UnlinkedMemories(core.state)
    threshold = core.settings.memory_link_threshold
    build_cpu = time.process_time()
    build_wall = time.perf_counter()
    core.memory_index.count()  # the index, built once per process (reported apart)
    remaining = len(unlinked)
    build = (time.process_time() - build_cpu, time.perf_counter() - build_wall)
    ticks: list[float] = []
    links = 0
    cells = None
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
        # Kept before the last tick releases them, for their sizes (diagnostics only).
        cells = cells or getattr(core.memory_index, "_cells", None)
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
        "cpu_ms_per_tick_mean": round(statistics.fmean(ticks) * 1000, 2),
        **_cell_sizes(cells),
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
    parser.add_argument("--embedder", choices=["hashing", "minilm"], default="hashing")
    parser.add_argument("--texts", type=Path, default=None, help="LoCoMo JSON (minilm)")
    parser.add_argument("--cells-from", type=int, default=None, help="cells from this many rows")
    args = parser.parse_args()
    if args.embedder == "minilm" and args.texts is None:
        parser.error("--embedder minilm needs --texts LOCOMO.json (real sentences to embed)")
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="link-"))
    workdir.mkdir(parents=True, exist_ok=True)
    suffix = "" if args.embedder == "hashing" else f"-{args.embedder}"
    corpus = workdir / f"resident-{args.memories}{suffix}.db"
    if not corpus.exists():
        texts = _sentences(args.texts, args.memories) if args.texts else None
        _fill(corpus, args.memories, texts, _embedder(args.embedder))
    runs = []
    for per_tick in args.per_tick:
        copy = workdir / f"link-{args.memories}-{per_tick}-{os.getpid()}.db"
        shutil.copyfile(corpus, copy)
        runs.append(_link(copy, per_tick, args.check, args.max_ticks, args))
        copy.unlink()
    print(
        json.dumps(
            {
                "benchmark": "link_store",
                "memories": args.memories,
                "embedder": args.embedder,
                "cells_from": args.cells_from,
                "load": os.getloadavg(),
                "runs": runs,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
