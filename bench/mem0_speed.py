"""Write and search latency of the Mem0 tier beside the embedded index (SQLite store).

Commits ``--memories`` memories (hashing-embedder vectors, ``--batch`` per commit), then
runs ``--queries`` hybrid searches, on the embedded index and on Mem0 (in-memory Qdrant).
Usage::

    python bench/mem0_speed.py --memories 2000 --queries 200
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from mindspace.config import Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.memory.records import Memory
from mindspace.state.semantic import SearchRequest
from mindspace.state.unit import StateCache
from mindspace.storage import SqlStore
from mindspace.storage.mem0_semantic import mem0_semantic
from mindspace.storage.mem0_setup import import_mem0
from mindspace.storage.sql import SemanticFactory

WHEN = "2025-12-06T10:00:00Z"
WORDS = [
    "alice",
    "bob",
    "carol",
    "bees",
    "clocks",
    "honey",
    "market",
    "cellar",
    "storm",
    "lighthouse",
    "rope",
    "maps",
]


def text(n: int) -> str:
    """A short sentence of corpus words, different for each ``n``."""
    return " ".join(WORDS[(n * k + k) % len(WORDS)] for k in range(1, 7)) + f" item{n}"


def run(url: str, semantic: SemanticFactory | None, args: argparse.Namespace) -> dict[str, Any]:
    """Time the writes and the searches on one backend."""
    embedder = HashingEmbedder(384)
    store = SqlStore(url, semantic=semantic)
    info = store.open_assistant("bench", create=True)
    cache = StateCache(store, info.id, info.revision)
    started = time.perf_counter()
    index = store.semantic_index(cache, embedder.name)
    index.count()  # built before the timed writes (Mem0 opens on the first vector)
    opened = time.perf_counter() - started
    texts = [text(n) for n in range(args.memories)]
    vectors = embedder.embed(texts)
    started = time.perf_counter()
    for start in range(0, len(texts), args.batch):
        unit = cache.begin()
        for n in range(start, min(start + args.batch, len(texts))):
            unit.put(
                Memory(
                    id=f"mem_{n}",
                    content=texts[n],
                    created_at=WHEN,
                    occurred_at=WHEN,
                    embedder=embedder.name,
                    embedding=vectors[n].tobytes(),
                )
            )
        cache.commit(unit)
    written = time.perf_counter() - started
    queries = [text(n * 7 + 3) for n in range(args.queries)]
    query_vectors = embedder.embed(queries)
    started = time.perf_counter()
    for n, query in enumerate(queries):
        index.search(SearchRequest(query, query_vectors[n]), limit=10)
    searched = time.perf_counter() - started
    store.close()
    return {
        "open_s": round(opened, 2),
        "write_ms_per_memory": round(1000 * written / args.memories, 3),
        "search_ms": round(1000 * searched / args.queries, 2),
    }


def main() -> None:
    """Print the JSON for both backends."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    started = time.perf_counter()
    import_mem0()  # timed apart: once per process
    imported = round(time.perf_counter() - started, 2)
    with tempfile.TemporaryDirectory(prefix="mindspace-mem0-speed-") as tmp:
        embedded = run(f"sqlite:///{Path(tmp) / 'embedded.db'}", None, args)
        mem0 = run(f"sqlite:///{Path(tmp) / 'mem0.db'}", mem0_semantic(Settings()), args)
    print(
        json.dumps(
            {
                "benchmark": "mem0_speed",
                **vars(args),
                "mem0_import_s": imported,
                "embedded": embedded,
                "mem0": mem0,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
