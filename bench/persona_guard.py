"""The persona guard's precision and recall on the labelled set, and its speed.

The labelled set (tests/workspace/persona_labelled.json) holds self-references of many
shapes and world facts that look like them (roman numerals, initials, quoted speech,
players' lines). A self-reference the guard rejects is a true positive; a world fact it
rejects is a false positive. The speed is the mean time of one ``find`` over the whole
set, repeated.

Run:  .venv/bin/python bench/persona_guard.py [--repeat 200]
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from mindspace.workspace.persona import PersonaGuard, guard_figures

SET = Path(__file__).resolve().parent.parent / "tests" / "workspace" / "persona_labelled.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200, help="passes over the set to time")
    args = parser.parse_args()
    data = json.loads(SET.read_text(encoding="utf-8"))
    labelled = [(row["text"], bool(row["self_reference"])) for row in data["sentences"]]
    guard = PersonaGuard(data["self_names"])
    figures = guard_figures(guard, labelled)
    by_kind: dict[str, dict[str, int]] = {}
    for row in data["sentences"]:
        kind = by_kind.setdefault(row["kind"], {"sentences": 0, "misjudged": 0})
        kind["sentences"] += 1
        kind["misjudged"] += (not guard.is_clean(row["text"])) != row["self_reference"]
    started = time.perf_counter()
    for _ in range(args.repeat):
        for sentence, _ in labelled:
            guard.find(sentence)
    elapsed = time.perf_counter() - started
    print(
        json.dumps(
            {
                **figures,
                "by_kind": by_kind,
                "microseconds_per_sentence": round(
                    elapsed / (args.repeat * len(labelled)) * 1e6, 2
                ),
                "python": platform.python_version(),
                "loadavg": os.getloadavg()[0],
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
