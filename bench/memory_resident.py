"""Resident memory of one assistant with N memories, embedded (SQLite). Prints JSON.

For each size a database is filled once (memories committed straight through the store:
hashing-embedder vectors, 384 dims, 12-word texts from a 5,000-word Zipf vocabulary so the
BM25 postings look like real text), then a fresh child process opens the assistant and
reports its resident set (``VmRSS``, split into ``RssAnon``, private to the process, and
``RssFile``, shared file pages) at three points: after opening, after the first
``recall_memories`` (which builds the search index), and after 20 more recalls and a
garbage collection (the idle figure). The assistant's own share is the idle figure minus
the same process's figure with 0 memories.

Usage::

    python bench/memory_resident.py [--sizes 0 1000 10000 100000] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

EMBED_DIM = 384


def _status() -> dict[str, float]:
    fields = {}
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
                fields[name] = round(int(value.split()[0]) / 1024, 1)
    return fields


def _texts(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    vocabulary = [f"w{k}" for k in range(5_000)]
    ranks = np.minimum(rng.zipf(1.3, size=(n, 12)) - 1, len(vocabulary) - 1)
    return [" ".join(vocabulary[int(r)] for r in row) for row in ranks]


def _fill(path: Path, size: int, texts: list[str] | None = None, embedder: Any = None) -> None:
    """Commit ``size`` memories (default: Zipf texts, hashing-embedder vectors)."""
    from mindspace.clock import format_time
    from mindspace.embeddings import HashingEmbedder
    from mindspace.memory.records import Memory
    from mindspace.state import Change
    from mindspace.storage import SqlStore

    store = SqlStore.from_path(path)
    info = store.open_assistant("resident", create=True)
    embedder = embedder or HashingEmbedder(EMBED_DIM)
    texts = texts or _texts(size, seed=size)
    now = format_time(datetime(2025, 12, 6, 10, 0, tzinfo=UTC))
    revision = info.revision
    for start in range(0, size, 5_000):
        chunk = texts[start : start + 5_000]
        vectors = embedder.embed(chunk)
        changes = []
        for offset, (text, vector) in enumerate(zip(chunk, vectors, strict=True)):
            memory = Memory(
                id=f"mem_{start + offset + 1}",
                content=text,
                created_at=now,
                occurred_at=now,
                embedder=embedder.name,
                embedding=vector.astype(np.float32).tobytes(),
            )
            changes.append(Change("memory", memory.id, memory.to_stored(), new=True))
        revision = store.commit(info.id, revision, changes)
    store.commit(
        info.id,
        revision,
        [Change("doc", "memory_state", {"name": "memory_state", "value": {"next_id": size}})],
    )
    store.close()


async def _child(path: Path) -> dict[str, Any]:
    from mindspace import ManualClock
    from mindspace.embeddings import HashingEmbedder
    from mindspace.offline import OfflineLLM
    from mindspace.storage import SqlStore
    from mindspace.testing.assistants import assistant_on

    store = SqlStore.from_path(path, create=False)
    assistant = assistant_on(
        store,
        "resident",
        llm=OfflineLLM(announce=False),
        clock=ManualClock(),
        embedder=HashingEmbedder(EMBED_DIM),
    )
    gc.collect()
    opened = _status()
    start = time.perf_counter()
    first = await assistant.call_tool("recall_memories", {"query": "w1 w7 w300", "limit": 10})
    first_seconds = time.perf_counter() - start
    assert first["success"], first
    built = _status()
    times = []
    for k in range(20):
        t0 = time.perf_counter()
        await assistant.call_tool("recall_memories", {"query": f"w{k} w{k * 13 % 5000}"})
        times.append(time.perf_counter() - t0)
    gc.collect()
    idle = _status()
    store.close()
    return {
        "after_open": opened,
        "after_first_recall": built,
        "idle": idle,
        "first_recall_seconds": round(first_seconds, 3),
        "recall_p50_ms": round(statistics.median(times) * 1000, 2),
    }


def main() -> None:
    """Run the benchmark and print its JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", type=int, nargs="+", default=[0, 1_000, 10_000, 100_000])
    parser.add_argument("--workdir", type=Path, default=None, help="keep databases here")
    parser.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(asyncio.run(_child(args.child))))
        return
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="resident-"))
    workdir.mkdir(parents=True, exist_ok=True)
    rows = []
    for size in args.sizes:
        path = workdir / f"resident-{size}.db"
        if not path.exists():
            _fill(path, size)
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(path)],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
        rows.append({"memories": size, **json.loads(done.stdout.strip().splitlines()[-1])})
    base = next((r for r in rows if r["memories"] == 0), None)
    for row in rows:
        if base is not None:
            row["assistant_share_mb"] = round(row["idle"]["VmRSS"] - base["idle"]["VmRSS"], 1)
            row["assistant_share_anon_mb"] = round(
                row["idle"]["RssAnon"] - base["idle"]["RssAnon"], 1
            )
    print(
        json.dumps(
            {"benchmark": "memory_resident", "load": os.getloadavg(), "sizes": rows}, indent=2
        )
    )


if __name__ == "__main__":
    main()
