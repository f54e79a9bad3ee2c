"""How many redone attempts a write needs when several processes write to one assistant.

Spawns ``--writers`` Python processes that each make ``--calls`` tool calls
(``add_goal`` and ``add_journal_entry`` in turn) on one assistant at the same moment,
as tests/e2e/test_six_writers.py does, and counts for every call how many times it lost
the optimistic-concurrency race and was redone (``EngineCore.retrying``). Prints one
JSON object per backend: calls, failures (a ConcurrencyError reached the caller), the
attempts' percentiles and maximum, and the retry limit in force
(``MINDSPACE_CONFLICT_RETRIES``).

    python bench/conflict_retries.py --writers 6 --calls 40
    python bench/conflict_retries.py --backends sqlite --retries 20
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mindspace.runtime import open_assistant
from mindspace.testing.postgres import LocalPostgres

_WRITER = """
import asyncio, json, sys, time
from pathlib import Path
from mindspace.engine.core import EngineCore
from mindspace.runtime import open_assistant

db, name, go, calls = sys.argv[1], sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])
lost = [0]
pause = EngineCore._conflict_pause

def counting(self, attempt):
    lost[0] += 1
    return pause(self, attempt)

EngineCore._conflict_pause = counting

async def main():
    assistant = open_assistant("barkeep", db=db, create=False)
    (go.parent / f"ready-{name}").touch()
    while not go.exists():
        await asyncio.sleep(0.005)
    rows = []
    for i in range(calls):
        lost[0] = 0
        tool, args = (("add_journal_entry", {"content": f"{name} {i}", "importance": 5})
                      if i % 2 else ("add_goal", {"description": f"{name} {i}"}))
        try:
            ok = bool((await assistant.call_tool(tool, args)).get("success"))
        except Exception as exc:
            ok = False
        rows.append({"lost": lost[0], "ok": ok})
    print(json.dumps(rows))

asyncio.run(main())
"""


def _percentile(values: list[int], q: float) -> int:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(db: str, writers: int, calls: int, retries: int, workdir: Path) -> dict[str, Any]:
    """One round of ``writers`` processes on ``db``; the attempts they needed."""
    open_assistant("barkeep", db=db)
    go = workdir / f"go-{time.monotonic_ns()}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MINDSPACE_")}
    env.update(
        {
            "MINDSPACE_DATA_DIR": str(workdir),
            "MINDSPACE_EMBEDDER": "hashing",
            "MINDSPACE_LLM_PROVIDER": "offline",
            "MINDSPACE_CONFLICT_RETRIES": str(retries),
        }
    )
    names = [f"w{n}" for n in range(writers)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, db, name, str(go), str(calls)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in names
    ]
    while not all((workdir / f"ready-{name}").exists() for name in names):
        time.sleep(0.02)
    started = time.monotonic()
    go.touch()
    rows: list[dict[str, Any]] = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        if proc.returncode != 0:
            raise SystemExit(err[-2000:])
        rows += json.loads(out.strip().splitlines()[-1])
    for name in names:
        (workdir / f"ready-{name}").unlink()
    lost = [r["lost"] for r in rows]
    return {
        "backend": db.split(":")[0].split("+")[0],
        "writers": writers,
        "calls": len(rows),
        "retry_limit": retries,
        "failures": sum(not r["ok"] for r in rows),
        "lost_races_p50": _percentile(lost, 0.5),
        "lost_races_p99": _percentile(lost, 0.99),
        "lost_races_max": max(lost),
        "calls_redone_over_10_times": sum(n > 10 for n in lost),
        "seconds": round(time.monotonic() - started, 1),
    }


def main() -> None:
    """Run the rounds and print one JSON line per backend."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--writers", type=int, default=6)
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--retries", type=int, default=None, help="default: the setting's")
    parser.add_argument("--backends", nargs="+", default=["sqlite", "postgresql"])
    args = parser.parse_args()
    from mindspace.config import Settings

    retries = args.retries if args.retries is not None else Settings().conflict_retries
    with tempfile.TemporaryDirectory(prefix="mindspace-conflicts-") as scratch:
        workdir = Path(scratch)
        if "sqlite" in args.backends:
            db = f"sqlite:///{workdir / 'shared.db'}"
            print(json.dumps(run(db, args.writers, args.calls, retries, workdir)), flush=True)
        if "postgresql" in args.backends:
            with LocalPostgres(workdir / "pg") as pg:
                db = pg.new_database("conflicts")
                print(json.dumps(run(db, args.writers, args.calls, retries, workdir)), flush=True)


if __name__ == "__main__":
    main()
