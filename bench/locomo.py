"""LoCoMo retrieval benchmark: the product's memory against BM25 and dense references.

Usage::

    python bench/locomo.py --data ../shared/data/locomo/locomo_dev.json [--output OUT.json] [--json]

The same as ``mindspace bench locomo``; see ``mindspace.evaluation.locomo``.
"""

from __future__ import annotations

import sys

from mindspace.hosts.cli.bench import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
