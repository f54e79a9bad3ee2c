"""``serve --ticks queue`` hands events to the workers; clear errors for unusable databases."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from mindspace import Settings
from mindspace.testing.postgres import LocalPostgres

from .conftest import Proc, StandIn, seed, wait_for, worker_args, worker_env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_serve_with_queue_ticks_hands_a_posted_event_to_a_worker_promptly(
    postgres: LocalPostgres,
    pg_url: str,
    settings: Settings,
    stand_in: StandIn,
    spawn: Callable[..., Proc],
    tmp_path: Path,
) -> None:
    seed(pg_url, settings, {"host": 0})
    env = worker_env(stand_in, tmp_path)
    port = free_port()
    server = spawn("serve", "--db", pg_url, "--ticks", "queue", "--port", str(port), env=env)
    worker = spawn(*worker_args(pg_url), env=env)
    base = f"http://127.0.0.1:{port}/v1/assistants/host"
    wait_for(lambda: "need ticks" in worker.text(), 30, "the worker to start")
    wait_for(lambda: "Dashboard" in server.text(), 30, "the server to start")
    assert "enqueued for `mindspace worker`" in server.text()

    with httpx.Client(timeout=10) as client:
        # the idle assistant is not ticked; the posted event wakes it through the queue
        posted = client.post(f"{base}/events", json={"content": "[host] a pint, please"})
        assert posted.status_code == 202, posted.text
        event_id = posted.json()["event_id"]

        def answered() -> dict[str, object] | None:
            event = client.get(f"{base}/events/{event_id}").json()["event"]
            return event if event["status"] == "done" else None

        event = wait_for(answered, 5, "the worker to answer the posted event", step=0.1)
    assert event["reply"] == "Answer to [host] a pint, please"
    assert "host: event tick done" in worker.text()
    assert worker.stop() == 0
    server.stop()
    assert "Traceback" not in server.text(), server.text()


def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mindspace.hosts.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("command", [["worker"], ["serve", "--ticks", "queue"]])
def test_sqlite_is_refused_with_a_pointer_to_serve(
    command: list[str], stand_in: StandIn, tmp_path: Path
) -> None:
    db = tmp_path / "here.db"
    done = _run(*command, "--db", f"sqlite:///{db}", env=worker_env(stand_in, tmp_path))
    assert done.returncode == 1
    assert done.stderr.startswith(
        "error: the worker fleet needs PostgreSQL; SQLite runs ticks in-process: "
        "use `mindspace serve`"
    ), done.stderr
    assert "Traceback" not in done.stderr
    assert not db.exists()  # nothing was created


def test_an_unreachable_database_is_one_clear_line(stand_in: StandIn, tmp_path: Path) -> None:
    url = "postgresql+psycopg://mind:secret@127.0.0.1:9/nowhere"
    done = _run("worker", "--db", url, env=worker_env(stand_in, tmp_path))
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(
        "error: Cannot reach the database 'postgresql+psycopg://mind:***@127.0.0.1:9/nowhere'"
    ), done.stderr
    assert "Check that PostgreSQL is running" in lines[0]
    assert "secret" not in done.stderr
