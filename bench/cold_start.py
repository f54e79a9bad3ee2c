"""Cold start: wall and CPU time of ``mindspace --help`` and ``python -c "import mindspace"``.

Each command runs as a fresh process N times (after one warm-up run that fills the OS
page cache); for each we report the median and minimum wall time, and the median and
minimum user+sys CPU time of the child (from ``resource.getrusage(RUSAGE_CHILDREN)``
deltas), which is less sensitive to other processes on a busy machine than wall time.
It also lists which heavy packages each command imported (checked in a separate run).

Run:  .venv/bin/python bench/cold_start.py [--runs 10]
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

HEAVY = ("openai", "fastapi", "uvicorn", "evennia", "sqlalchemy", "tokenizers", "safetensors")

COMMANDS: dict[str, list[str]] = {
    "mindspace --help": [sys.executable, "-m", "mindspace.hosts.cli.app", "--help"],
    "import mindspace": [sys.executable, "-c", "import mindspace"],
}

# Runs the same code as the command, then reports which heavy packages it loaded.
PROBES: dict[str, str] = {
    "mindspace --help": (
        "import sys\n"
        "from mindspace.hosts.cli.app import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
    ),
    "import mindspace": "import sys\nimport mindspace\n",
}


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _time_once(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    cpu_before = _child_cpu()
    started = time.perf_counter()
    subprocess.run(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
    )
    return time.perf_counter() - started, _child_cpu() - cpu_before


def _loaded(name: str, env: dict[str, str]) -> list[str]:
    code = PROBES[name] + (
        f"heavy = {HEAVY!r}\n"
        "import json\n"
        "print(json.dumps(sorted(h for h in heavy if h in sys.modules)), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=True,
    )
    loaded: list[str] = json.loads(done.stderr.strip().splitlines()[-1])
    return loaded


def measure(runs: int) -> dict[str, Any]:
    """Time every command ``runs`` times after one warm-up; medians and minimums."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MINDSPACE_")}
    results: dict[str, Any] = {}
    for name, command in COMMANDS.items():
        _time_once(command, env)  # warm-up: page cache, .pyc files
        walls, cpus = [], []
        for _ in range(runs):
            wall, cpu = _time_once(command, env)
            walls.append(wall)
            cpus.append(cpu)
        results[name] = {
            "wall_median_s": round(statistics.median(walls), 3),
            "wall_min_s": round(min(walls), 3),
            "cpu_median_s": round(statistics.median(cpus), 3),
            "cpu_min_s": round(min(cpus), 3),
            "heavy_modules_loaded": _loaded(name, env),
        }
    return results


def main() -> None:
    """Parse arguments, measure, print JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=10, help="timed runs per command")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error(f"--runs must be at least 1, not {args.runs!r}")
    load_before = os.getloadavg()
    results = measure(args.runs)
    print(
        json.dumps(
            {
                "runs": args.runs,
                "python": platform.python_version(),
                "cpus": os.cpu_count(),
                "loadavg_before": [round(x, 2) for x in load_before],
                "loadavg_after": [round(x, 2) for x in os.getloadavg()],
                "commands": results,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
