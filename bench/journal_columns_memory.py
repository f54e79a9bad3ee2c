"""Bytes per entry of the embedded journal index's filter columns (``EntryColumns``).

Files N synthetic entries (the bench's 60-day spread; with ``--tags`` each also carries
two of 50 tags and one of 10 projects) and reports what ``tracemalloc`` sees allocated
by the columns (arrays, key map, postings, per-row tuples), per entry. The vectors
themselves are ``4 * dim`` bytes an entry on top (1,024 at 256 dimensions).

Run:  .venv/bin/python bench/journal_columns_memory.py [--sizes 10000 100000]
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tracemalloc

from journal_search import make_entries
from mindspace.journal.columns import EntryColumns


def measure(count: int, tagged: bool) -> dict[str, float]:
    rng = random.Random(count)
    entries = make_entries(count, rng)
    if tagged:
        entries = [
            e.model_copy(
                update={
                    "tags": tuple(rng.sample([f"tag{i}" for i in range(50)], 2)),
                    "related_projects": (f"project{rng.randrange(10)}",),
                }
            )
            for e in entries
        ]
    keys = [e.record_key() for e in entries]  # the cache holds these already
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    columns = EntryColumns()
    for key, entry in zip(keys, entries, strict=True):
        columns.put(key, entry)
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return {
        "entries": count,
        "tags": tagged,
        "bytes_per_entry": round((after - before) / count, 1),
        "array_bytes_per_entry": round(columns.nbytes / count, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    args = parser.parse_args(argv)
    results = [measure(n, tagged) for n in args.sizes for tagged in (False, True)]
    print(json.dumps({"benchmark": "journal index columns memory", "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
