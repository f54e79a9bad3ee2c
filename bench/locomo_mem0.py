"""LoCoMo retrieval with Mem0 as the semantic tier, beside the embedded index.

The same run as ``bench/locomo.py`` on a slice of the conversations (``--samples``,
first ones first), twice: once on SQLite with the embedded index (the default), once on
SQLite with ``MINDSPACE_SEMANTIC_BACKEND=mem0`` semantics (vectors in Mem0's in-memory
Qdrant, see docs/mem0.md). Prints both reports and the product's differences in points.
Usage::

    python bench/locomo_mem0.py --data ../shared/data/locomo/locomo_dev.json --samples 1
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

from mindspace.config import Settings
from mindspace.evaluation.locomo import run_locomo
from mindspace.runtime import build_embedder
from mindspace.storage import SqlStore
from mindspace.storage.mem0_semantic import mem0_semantic


def main() -> None:
    """Run LoCoMo on both semantic backends and print the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--samples", type=int, default=1, help="conversations to run")
    args = parser.parse_args()
    embedder = build_embedder(Settings())
    if embedder is None:
        raise SystemExit("The benchmark needs an embedder; unset MINDSPACE_EMBEDDER=none.")
    samples = json.loads(args.data.read_text())[: args.samples]
    with tempfile.TemporaryDirectory(prefix="mindspace-locomo-mem0-") as tmp:
        data = Path(tmp) / "slice.json"
        data.write_text(json.dumps(samples))
        semantic = mem0_semantic(Settings(mem0_path=None), lambda: embedder)

        def on_mem0(sample_id: str) -> SqlStore:
            return SqlStore(f"sqlite:///{Path(tmp) / sample_id}-mem0.db", semantic=semantic)

        embedded = asyncio.run(run_locomo(data, embedder=embedder))
        mem0 = asyncio.run(run_locomo(data, embedder=embedder, store_factory=on_mem0))
    difference: dict[str, Any] = {
        overall: {
            metric: round(mem0["product"][overall][metric] - value, 2)
            for metric, value in embedded["product"][overall].items()
        }
        for overall in ("overall_1_4", "overall_1_5")
    }
    print(
        json.dumps(
            {
                "benchmark": "locomo_mem0",
                "embedder": embedder.name,
                "samples": [s.get("sample_id") for s in samples],
                "embedded": embedded,
                "mem0": mem0,
                "product_points_mem0_minus_embedded": difference,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
