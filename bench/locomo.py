"""LoCoMo retrieval benchmark: the product's memory against BM25 and dense references.

Usage::

    python bench/locomo.py --data ../shared/data/locomo/locomo_dev.json [--output OUT.json] [--json]

The same as ``mindspace bench locomo``; see ``mindspace.evaluation.locomo``.
"""

from __future__ import annotations

import sys

from mindspace.hosts.cli.bench import main


def _compatible(argv: list[str]) -> list[str]:
    """``--json FILE`` as recorded in bench/RESULTS.md means ``--output FILE`` now."""
    out = list(argv)
    for i, arg in enumerate(out[:-1]):
        if arg == "--json" and not out[i + 1].startswith("-"):
            out[i] = "--output"
    return out


if __name__ == "__main__":
    sys.exit(main(_compatible(sys.argv[1:])))
