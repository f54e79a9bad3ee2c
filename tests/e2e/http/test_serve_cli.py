"""``mindspace serve`` as a real process: it refuses an open API off loopback, and serves."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MINDSPACE_")}
    env.update({"MINDSPACE_DATA_DIR": str(tmp_path), "MINDSPACE_EMBEDDER": "hashing", **extra})
    return env


def _serve(tmp_path: Path, *args: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "mindspace.hosts.cli.app", "serve", *args],
        env=_env(tmp_path, **env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_open_api_is_refused_off_loopback(tmp_path: Path) -> None:
    process = _serve(tmp_path, "--host", "0.0.0.0", "--port", str(_free_port()))
    _, err = process.communicate(timeout=60)
    assert process.returncode == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: Refusing to listen on '0.0.0.0' without a token")
    assert "MINDSPACE_API_TOKEN" in lines[0]


def test_a_bad_token_list_is_one_error_line(tmp_path: Path) -> None:
    process = _serve(tmp_path, MINDSPACE_API_TOKENS="short=alice")
    _, err = process.communicate(timeout=60)
    assert process.returncode == 1
    assert "MINDSPACE_API_TOKENS entry 1" in err
    assert "short" not in err.replace("shorter", "")  # the token itself is never printed


def test_serve_answers_on_loopback(tmp_path: Path) -> None:
    port = _free_port()
    db = tmp_path / "served.db"
    process = _serve(tmp_path, "--port", str(port), "--db", str(db))
    try:
        deadline = time.monotonic() + 60
        url = f"http://127.0.0.1:{port}"
        while True:  # wait for the socket (bounded)
            try:
                health = httpx.get(f"{url}/v1/health", timeout=2)
                break
            except httpx.TransportError:
                assert process.poll() is None, process.stderr.read() if process.stderr else ""
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.1)
        assert health.json()["status"] == "ok"
        created = httpx.post(f"{url}/v1/assistants", json={"key": "barkeep"}, timeout=10)
        assert created.status_code == 201
        assert httpx.get(f"{url}/dashboard/", timeout=10).status_code == 200
    finally:
        process.terminate()
        out, _ = process.communicate(timeout=30)
    assert f"Dashboard: http://127.0.0.1:{port}/dashboard/" in out
    assert db.is_file()
