"""Recall through the cells against the exact pass, on one store. Prints JSON.

From ``CELLS_FROM`` memories (32,768) an embedded index holding cells (built by
``nearest``: a memory write's reconcile, as in every awake tick that forms a memory, or
the night's linking) scores a recall's dense side on the rows of the cells the query
probes and on the best rows by BM25 (:func:`mindspace.memory.scoring.from_cells`)
instead of every row. This opens a store
(by default the 100k one ``bench/awake_tick.py`` builds), puts an exact index
(``cells_from`` out of reach) beside the default one over the same memories, and asks
both the same recalls: the overlap of the top 10 (the page ``recall`` returns; and the
index's own blended top 10), and the CPU of one search (``rankings``) and of one whole
``recall`` either way. ``--db`` is the ``awake-100000-10000-minilm.db`` that
``bench/awake_tick.py --workdir DIR`` leaves in DIR (default: ``awake/`` here).

Two kinds of queries, with vectors from the hashing embedder the store's vectors were
made by (so that dense similarity means something):

- ``random``: new texts from the store's own Zipf vocabulary (as ``awake_tick``'s
  messages);
- ``paraphrase``: a stored memory's text with a third of its words replaced, so that
  one memory is the clear answer; ``found_first`` counts how often it comes first.

Usage::

    python bench/awake_tick.py --memories 100000 --embedder minilm --workdir awake
    python bench/recall_cells.py [--db awake/awake-100000-10000-minilm.db] [--queries 200]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from mindspace import ManualClock, Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.memory.index import CELLS_FROM, MemoryIndex
from mindspace.memory.semantic import SemanticMemory
from mindspace.state.semantic import SearchRequest
from mindspace.state.unit import StateCache, Unit
from mindspace.storage import SqlStore

DEFAULT_DB = Path("awake/awake-100000-10000-minilm.db")


def _vocabulary_texts(n: int, seed: int) -> list[str]:
    """``awake_tick``'s texts: 12 words of a 5,000-word Zipf vocabulary."""
    rng = np.random.default_rng(seed)
    vocabulary = [f"w{k}" for k in range(5_000)]
    ranks = np.minimum(rng.zipf(1.3, size=(n, 12)) - 1, len(vocabulary) - 1)
    return [" ".join(vocabulary[int(r)] for r in row) for row in ranks]


def _paraphrases(unit: Unit, index: MemoryIndex, n: int, seed: int) -> list[tuple[str, str]]:
    """(memory id, its text with a third of the words replaced) for ``n`` memories."""
    from mindspace.memory.records import Memory

    rng = np.random.default_rng(seed)
    keys = [index.keys[int(r)] for r in rng.choice(len(index.keys), size=n, replace=False)]
    found = unit.get_many(Memory, keys)
    out = []
    for key in keys:
        words = found[key].content.split()
        for at in rng.choice(len(words), size=max(1, len(words) // 3), replace=False):
            words[int(at)] = f"w{int(rng.integers(0, 5_000))}"
        out.append((key, " ".join(words)))
    return out


def _compare(
    unit: Unit, cached: MemoryIndex, exact: MemoryIndex, queries: list[str], settings: Settings
) -> dict[str, Any]:
    """Each index's pages and CPU for ``queries``: one index at a time, every query."""
    embedder = HashingEmbedder(384)
    vectors = embedder.embed(queries)
    clock = ManualClock()
    found: dict[str, list[tuple[list[str], list[str]]]] = {}
    search_cpu: dict[str, list[float]] = {}
    recall_cpu: dict[str, list[float]] = {}
    for name, index in (("cells", cached), ("exact", exact)):
        memory = SemanticMemory(unit, clock, settings, embedder, index)
        found[name], search_cpu[name], recall_cpu[name] = [], [], []
        for query, vector in zip(queries, vectors, strict=True):
            start = time.process_time()
            ranked = index.rankings(SearchRequest(query, vector, min_trust=0.5), limit=60, depth=20)
            search_cpu[name].append(time.process_time() - start)
            start = time.process_time()
            recalled = memory.recall(query, limit=10, min_source_trust=0.5, vector=vector)
            recall_cpu[name].append(time.process_time() - start)
            found[name].append(
                ([r.memory.id for r in recalled], [h.key for h in ranked.blended[:10]])
            )
    pages = [(c[0], e[0]) for c, e in zip(found["cells"], found["exact"], strict=True)]
    page_overlap = [_overlap(c, e) for c, e in pages]
    index_overlap = [
        _overlap(c[1], e[1]) for c, e in zip(found["cells"], found["exact"], strict=True)
    ]
    return {
        "queries": len(queries),
        "recall_top10_overlap": round(statistics.mean(page_overlap), 4),
        "recall_top10_identical": round(sum(o == 1.0 for o in page_overlap) / len(queries), 4),
        "index_top10_overlap": round(statistics.mean(index_overlap), 4),
        "search_cpu_ms_p50": _p50(search_cpu),
        # The whole recall (search, rules, fusion, records, page), the cells index first:
        # its queries read their records from the store, the exact index's from the cache.
        "recall_cpu_ms_p50": _p50(recall_cpu),
        "pages": pages,
    }


def _p50(samples: dict[str, list[float]]) -> dict[str, float]:
    return {name: round(statistics.median(values) * 1000, 2) for name, values in samples.items()}


def _overlap(found: list[str], truth: list[str]) -> float:
    return len(set(found) & set(truth)) / max(1, len(truth))


def main() -> None:
    """Run the comparison and print its JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--db", type=Path, default=DEFAULT_DB)
    parser.add_argument("--assistant", default="old")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    store = SqlStore.from_path(args.db, create=False)
    info = store.open_assistant(args.assistant, create=False)
    cache = StateCache(store, info.id, info.revision)
    settings = Settings()
    cached = MemoryIndex(cache, None)
    exact = MemoryIndex(cache, None, cells_from=2**62)
    start = time.process_time()
    cached.ensure()
    exact.ensure()
    # What a memory write's reconcile does first: the cells are built.
    cached.nearest(np.zeros((1, 384), dtype=np.float32), k=1, threshold=1.0, exclude=[""])
    built = time.process_time() - start
    unit = cache.begin()
    results: dict[str, Any] = {}
    random_queries = _vocabulary_texts(args.queries, seed=7)
    results["random"] = _compare(unit, cached, exact, random_queries, settings)
    paraphrased = _paraphrases(unit, exact, args.queries, seed=8)
    results["paraphrase"] = _compare(unit, cached, exact, [t for _, t in paraphrased], settings)
    pages = results["paraphrase"]["pages"]
    for name, side in (("cells", 0), ("exact", 1)):
        first = sum(
            page[side][:1] == [key] for page, (key, _) in zip(pages, paraphrased, strict=True)
        )
        results["paraphrase"][f"found_first_{name}"] = round(first / len(pages), 4)
    for kind in results.values():
        del kind["pages"]
    print(
        json.dumps(
            {
                "benchmark": "recall_cells",
                "db": str(args.db),
                "memories": len(exact),
                "cells_from": CELLS_FROM,
                "cells": cached._cells.cells if cached._cells is not None else 0,
                "probes": cached._cells.probes if cached._cells is not None else 0,
                "cells_mb": round(cached.cells_nbytes / 2**20, 1),
                "index_build_cpu_s": round(built, 1),
                "load": os.getloadavg(),
                **results,
            },
            indent=2,
        )
    )
    store.close()


if __name__ == "__main__":
    main()
