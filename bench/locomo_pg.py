"""LoCoMo retrieval on PostgreSQL (pgvector + BM25 postings) beside SQLite (embedded index).

The same run as ``bench/locomo.py`` twice: once on SQLite files (the default), once with
each conversation in its own PostgreSQL database on a local server
(:class:`mindspace.testing.postgres.LocalPostgres`). Prints both reports and the
product's differences in points. Usage::

    python bench/locomo_pg.py --data ../shared/data/locomo/locomo_dev.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from mindspace.config import Settings
from mindspace.evaluation.locomo import run_locomo
from mindspace.runtime import build_embedder
from mindspace.storage import SqlStore
from mindspace.testing.postgres import LocalPostgres


def main() -> None:
    """Run LoCoMo on both backends and print the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, required=True)
    args = parser.parse_args()
    embedder = build_embedder(Settings())
    if embedder is None:
        raise SystemExit("The benchmark needs an embedder; unset MINDSPACE_EMBEDDER=none.")
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)  # the server runs as its own user and needs to enter it
        with LocalPostgres(Path(tmp) / "pg") as pg:

            def on_postgres(sample_id: str) -> SqlStore:
                name = "locomo_" + re.sub(r"[^a-z0-9_]", "_", sample_id.lower())
                return SqlStore(pg.new_database(name))

            sqlite = asyncio.run(run_locomo(args.data, embedder=embedder))
            postgres = asyncio.run(
                run_locomo(args.data, embedder=embedder, store_factory=on_postgres)
            )
    difference: dict[str, Any] = {
        overall: {
            metric: round(postgres["product"][overall][metric] - value, 2)
            for metric, value in sqlite["product"][overall].items()
        }
        for overall in ("overall_1_4", "overall_1_5")
    }
    print(
        json.dumps(
            {
                "benchmark": "locomo_pg",
                "embedder": embedder.name,
                "sqlite": sqlite,
                "postgresql": postgres,
                "product_points_pg_minus_sqlite": difference,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
