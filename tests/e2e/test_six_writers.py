"""Six writer processes on one assistant (CLI, HTTP and Python together) all succeed.

Each writer makes 20 calls that each add one record; the optimistic-concurrency races
between them are retried inside the engine, so no call fails and every record is stored
exactly once.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import httpx

from mindspace.runtime import open_assistant

CALLS = 20

# A writer: says it is ready, waits for the go file (so the writers start together, after
# their imports),
# then makes CALLS calls one after another; prints one JSON line per failed call.
_WRITER = """
import json, os, sys, time
from pathlib import Path

mode, name, db = sys.argv[1:4]
go, calls = Path(sys.argv[4]), int(sys.argv[5])

def args_for(i):
    if i % 2:
        return "add_journal_entry", {"content": f"{name} entry {i}", "importance": 5}
    return "add_goal", {"description": f"{name} goal {i}"}

if mode == "python":
    import asyncio
    from mindspace.runtime import open_assistant

    async def main():
        assistant = open_assistant("barkeep", db=db, create=False)
        (go.parent / f"ready-{name}").touch()
        while not go.exists():
            await asyncio.sleep(0.01)
        for i in range(calls):
            tool, args = args_for(i)
            try:
                result = await assistant.call_tool(tool, args)
            except Exception as exc:
                result = {"success": False, "error": repr(exc)}
            if not result.get("success"):
                print(json.dumps({"call": i, "result": result}), flush=True)

    asyncio.run(main())
elif mode == "http":
    import httpx
    (go.parent / f"ready-{name}").touch()
    while not go.exists():
        time.sleep(0.01)
    with httpx.Client(base_url=db, timeout=30) as client:
        for i in range(calls):
            tool, args = args_for(i)
            response = client.post(f"/v1/assistants/barkeep/tools/{tool}", json=args)
            if response.status_code != 200 or not response.json().get("success"):
                print(json.dumps({"call": i, "status": response.status_code,
                                  "body": response.text}), flush=True)
else:  # cli
    import subprocess
    (go.parent / f"ready-{name}").touch()
    while not go.exists():
        time.sleep(0.01)
    for i in range(calls):
        tool, args = args_for(i)
        process = subprocess.run(
            [sys.executable, "-m", "mindspace.hosts.cli.app", "tool", tool,
             "--args", json.dumps(args), "--db", db, "--assistant", "barkeep"],
            capture_output=True, text=True, encoding="utf-8", timeout=120, check=False,
        )
        ok = process.returncode == 0 and json.loads(process.stdout).get("success")
        if not ok:
            print(json.dumps({"call": i, "code": process.returncode,
                              "stderr": process.stderr[-500:]}), flush=True)
"""


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MINDSPACE_")}
    env.update(
        {
            "MINDSPACE_DATA_DIR": str(tmp_path),
            "MINDSPACE_EMBEDDER": "hashing",
            "MINDSPACE_LLM_PROVIDER": "offline",
            # No autonomous ticks in the server: only the writers' records are counted.
            "MINDSPACE_AUTONOMOUS_INTERVAL": "86400",
            "PYTHONIOENCODING": "utf-8",
        }
    )
    return env


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for(url: str, server: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while True:  # wait for the socket (bounded)
        try:
            httpx.get(f"{url}/v1/health", timeout=2)
            return
        except httpx.TransportError:
            assert server.poll() is None, server.stderr.read() if server.stderr else ""
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)


def test_six_writers_on_one_assistant_lose_nothing(tmp_path: Path) -> None:
    _six_writers(tmp_path, str(tmp_path / "shared.db"))


def test_six_writers_on_postgresql_lose_nothing(tmp_path: Path, pg_url: str) -> None:
    _six_writers(tmp_path, pg_url)


def _six_writers(tmp_path: Path, db: str) -> None:
    env = _env(tmp_path)
    go = tmp_path / "go"
    open_assistant("barkeep", db=db)  # the writers open it without creating it
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    serve = ["serve", "--port", str(port), "--db", db]
    server = subprocess.Popen(
        [sys.executable, "-m", "mindspace.hosts.cli.app", *serve],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    writers: list[subprocess.Popen[str]] = []
    try:
        plan = [("python", f"py{n}", db) for n in range(4)]
        plan += [("http", "http", url), ("cli", "cli", db)]
        for mode, name, target in plan:
            command = [sys.executable, "-c", _WRITER, mode, name, target, str(go), str(CALLS)]
            writers.append(
                subprocess.Popen(
                    command,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                    encoding="utf-8",
                )
            )
        _wait_for(url, server)
        deadline = time.monotonic() + 120
        while not all((tmp_path / f"ready-{name}").exists() for _, name, _ in plan):
            assert time.monotonic() < deadline, "the writers did not start"
            time.sleep(0.05)
        go.touch()
        failures = []
        for (_, name, _), writer in zip(plan, writers, strict=True):
            out, err = writer.communicate(timeout=240)
            assert writer.returncode == 0, f"{name}: {err[-2000:]}"
            failures += [f"{name}: {line}" for line in out.splitlines()]
    finally:
        for writer in writers:
            if writer.poll() is None:
                writer.kill()
        server.terminate()
        server.communicate(timeout=30)

    assert failures == []
    assistant = open_assistant("barkeep", db=db, create=False)
    goals = [g.description for g in assistant.views.goals().all()]
    entries = [e.content for e in assistant.views.journal_entries()]
    names = [name for _, name, _ in plan]
    expected = sorted(
        f"{name} {'entry' if i % 2 else 'goal'} {i}" for name in names for i in range(CALLS)
    )
    # Exactly the 120 records the calls made: none lost, none stored twice.
    assert len(goals) + len(entries) == len(names) * CALLS == 120
    assert sorted(goals + entries) == expected
    assert Counter(goals + entries).most_common(1)[0][1] == 1
