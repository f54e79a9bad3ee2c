"""Export and import speed and memory for a large assistant (``mindspace export``/``import``).

Builds an assistant with N memories (384-d float32 vectors, as MiniLM writes) and N/4
journal entries in a SQLite file, exports it, imports the file into a fresh SQLite file
(and into PostgreSQL with ``--postgres``, on a private server), and prints JSON: the
seconds of each step, the file size, and the peak resident memory of the process that
ran it (each step runs in a fresh process; ``idle_process`` is the baseline of one that
only loads mindspace). The streaming claim: the peak stays flat as N grows.

    PYTHONPATH=src python bench/transfer.py --memories 100000 [--postgres]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from mindspace.state import Change
from mindspace.storage import SqlStore
from mindspace.transfer import export_assistant, import_assistant


def _memory(n: int, vector: bytes) -> dict[str, Any]:
    return {
        "id": f"mem_{n}",
        "content": f"Memory {n}: Mira said the north gate needs {n % 97} new planks.",
        "source": "explicit",
        "entry_id": None,
        "tags": ["gate"],
        "source_type": "direct",
        "source_trust": 1.0,
        "source_entity": "Mira",
        "importance": 5,
        "importance_method": "heuristic",
        "created_at": "2025-12-06T10:00:00Z",
        "occurred_at": "2025-12-06T10:00:00Z",
        "ref": None,
        "context": None,
        "embedder": "minilm",
        "embedding": vector,
    }


def _entry(n: int) -> dict[str, Any]:
    return {
        "key": f"e{n}",
        "id": n,
        "timestamp": "2025-12-06T10:00:00Z",
        "content": f"Entry {n}: a quiet evening at the bar.",
        "source_type": "environmental",
        "source_trust": 0.3,
        "source_entity": None,
        "importance": 3,
        "importance_method": "heuristic",
        "tags": [],
        "related_projects": [],
        "consolidated": False,
        "consolidated_at": None,
        "evidence_ids": [],
        "scoring_attempts": 0,
    }


def _build(url: str, memories: int) -> None:
    store = SqlStore(url)
    rng = np.random.default_rng(7)
    try:
        aid = store.open_assistant("big", create=True).id
        revision = 0
        for start in range(0, memories, 2000):
            changes = []
            for n in range(start, min(start + 2000, memories)):
                vector = rng.standard_normal(384).astype(np.float32).tobytes()
                changes.append(Change("memory", f"mem_{n}", _memory(n, vector), new=True))
                if n % 4 == 0:
                    changes.append(Change("journal_entry", f"e{n}", _entry(n), new=True))
            revision = store.commit(aid, revision, changes)
    finally:
        store.close()


def _export(source: str, mind: Path) -> int:
    store = SqlStore(source)
    try:
        with mind.open("w", encoding="utf-8") as out:
            return export_assistant(store, "big", out).records
    finally:
        store.close()


def _import(url: str, mind: Path) -> int:
    store = SqlStore(url)
    try:
        return import_assistant(store, mind).records
    finally:
        store.close()


def _child(work: Any, args: tuple[Any, ...], answers: Any) -> None:
    started = time.perf_counter()
    value = work(*args) if work is not None else None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    answers.put((value, time.perf_counter() - started, peak))


def _step(name: str, results: dict[str, Any], work: Any, *args: Any) -> Any:
    """Run ``work`` in a fresh process: its seconds and its peak resident memory."""
    context = multiprocessing.get_context("spawn")
    answers = context.Queue()
    process = context.Process(target=_child, args=(work, args, answers))
    process.start()
    value, seconds, peak = answers.get()
    process.join()
    results[f"{name}_s"] = round(seconds, 2)
    results[f"{name}_peak_rss_mb"] = round(peak, 1)
    return value


def main() -> None:
    """Run the benchmark and print its figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=20_000)
    parser.add_argument("--postgres", action="store_true")
    options = parser.parse_args()
    results: dict[str, Any] = {"memories": options.memories}
    with tempfile.TemporaryDirectory(prefix="mindspace-transfer-") as scratch:
        root = Path(scratch)
        source = f"sqlite:///{root / 'source.db'}"
        started = time.perf_counter()
        _build(source, options.memories)
        results["build_s"] = round(time.perf_counter() - started, 2)
        mind = root / "mind.jsonl"

        _step("idle_process", results, None)  # the baseline: a process that only imports
        results["records"] = _step("export", results, _export, source, mind)
        results["file_mb"] = round(mind.stat().st_size / 1e6, 1)
        _step("import_sqlite", results, _import, f"sqlite:///{root / 'copy.db'}", mind)
        if options.postgres:
            from mindspace.testing.postgres import LocalPostgres

            server = LocalPostgres(root / "pg")
            try:
                url = server.new_database("transfer")
                _step("import_postgres", results, _import, url, mind)
            finally:
                server.stop()
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
