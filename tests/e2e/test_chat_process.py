"""``mindspace chat`` as one process with one event loop: keep-alive servers and Ctrl+C.

Ollama, llama.cpp's server, vLLM and OpenAI all keep a connection alive between
requests. A chat that ran each message on a new event loop crashed on the second one
(``RuntimeError: Event loop is closed``) because the client's pooled connection belonged
to the first loop. The server here is the shared test server with an HTTP/1.1 handler,
and it notes which client socket carried each request, so the test can check that the
connection really was kept and reused.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import select
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing import ChatCompletionsServer, Step
from mindspace.testing.assistants import assistant_on

TURNS = 10


class KeepAliveServer(ChatCompletionsServer):
    """The scripted server speaking HTTP/1.1: connections stay open between requests."""

    def __init__(self) -> None:
        self.sockets: list[tuple[str, int]] = []  # the client address of every POST
        self._sockets_lock = threading.Lock()
        super().__init__()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        base = super()._handler()
        server = self

        class KeepAlive(base):  # type: ignore[misc,valid-type]
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                with server._sockets_lock:
                    server.sockets.append(self.client_address)
                super().do_POST()

        return KeepAlive


def _post(conn: http.client.HTTPConnection, path: str) -> dict[str, object]:
    body = json.dumps({"model": "scripted", "messages": [{"role": "user", "content": "hi"}]})
    conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    payload: dict[str, object] = json.loads(response.read())
    assert response.status == 200, payload
    assert response.getheader("Connection", "").lower() != "close"
    return payload


def test_the_test_server_really_keeps_the_connection_open() -> None:
    with KeepAliveServer() as server:
        server.reply("first")
        server.reply("second")
        url = urlsplit(server.url)
        conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=10)
        try:
            _post(conn, f"{url.path}/chat/completions")
            first_socket = conn.sock
            _post(conn, f"{url.path}/chat/completions")
            # http.client reconnects silently when the server closed; it did not.
            assert conn.sock is first_socket
        finally:
            conn.close()
        assert len(server.sockets) == 2
        assert server.sockets[0] == server.sockets[1]


def _chat(
    tmp_path: Path, lines: str, server: ChatCompletionsServer
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MINDSPACE_")}
    env.update(
        {
            "MINDSPACE_DATA_DIR": str(tmp_path),
            "MINDSPACE_LLM_BASE_URL": server.url,
            "MINDSPACE_LLM_MODEL": "scripted",
            "MINDSPACE_LLM_API_KEY": "test-key",
            "COLUMNS": "200",
            "PYTHONIOENCODING": "utf-8",
        }
    )
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mindspace.hosts.cli.app",
            "chat",
            "--as",
            "Alice",
            "--db",
            str(tmp_path / "chat.db"),
            "--assistant",
            "barkeep",
        ],
        input=lines,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=180,
        env=env,
        check=False,
    )


def test_chat_holds_a_ten_turn_conversation_on_one_kept_alive_connection(
    tmp_path: Path,
) -> None:
    replies = [f"Reply number {n}: noted, Alice." for n in range(1, TURNS + 1)]
    with KeepAliveServer() as server:
        for reply in replies:
            server.reply(reply)
        lines = "".join(f"Message number {n} from Alice.\n" for n in range(1, TURNS + 1))
        done = _chat(tmp_path, lines + "/quit\n", server)
        sockets = list(server.sockets)
        requests = list(server.requests)

    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert "Event loop is closed" not in done.stderr + done.stdout
    said = "barkeep says to Alice: "
    # Piped input echoes no newline, so a reply shares its line with the next "you> " prompt.
    printed = [line[line.index(said) :] for line in done.stdout.splitlines() if said in line]
    assert printed == [f"barkeep says to Alice: {reply}" for reply in replies]
    # Every turn reached the model, each with its own message, over one kept connection.
    assert len(requests) == TURNS
    for n, body in enumerate(requests, 1):
        assert body["messages"][-1]["content"].endswith(f"Message number {n} from Alice.")
    assert len(sockets) == TURNS
    assert len(set(sockets)) == 1, f"expected one connection, the client used {set(sockets)}"
    with sqlite3.connect(tmp_path / "chat.db") as db:
        statuses = db.execute("SELECT status, count(*) FROM events GROUP BY status").fetchall()
    assert statuses == [("done", TURNS)]


def _read_until(process: subprocess.Popen[bytes], marker: bytes, count: int) -> bytes:
    """Read the process's stdout until ``marker`` appeared ``count`` times (60 s at most)."""
    assert process.stdout is not None
    seen = b""
    deadline = time.monotonic() + 60
    while seen.count(marker) < count:
        assert time.monotonic() < deadline, f"no {marker!r} x{count} in {seen!r}"
        ready, _, _ = select.select([process.stdout], [], [], 1.0)
        if ready:
            chunk = os.read(process.stdout.fileno(), 4096)
            assert chunk, f"the chat ended early: {seen!r}"
            seen += chunk
    return seen


def test_ctrl_c_at_the_prompt_ends_the_chat_cleanly(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MINDSPACE_")}
    env.update({"MINDSPACE_DATA_DIR": str(tmp_path), "COLUMNS": "200"})
    command = [sys.executable, "-m", "mindspace.hosts.cli.app", "chat", "--as", "Alice"]
    command += ["--db", str(tmp_path / "chat.db"), "--assistant", "barkeep"]
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    try:
        assert process.stdin is not None
        process.stdin.write(b"I prefer formal address.\n")
        process.stdin.flush()
        # The second prompt: the reply is printed and the chat waits for the keyboard.
        seen = _read_until(process, b"you> ", 2)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert b"barkeep says to Alice: I'll remember that, Alice." in seen
    assert process.returncode == 0, err.decode()
    assert b"Traceback" not in out + err
    assert b"Aborted" not in err
    with sqlite3.connect(tmp_path / "chat.db") as db:
        statuses = db.execute("SELECT status, count(*) FROM events GROUP BY status").fetchall()
    assert statuses == [("done", 1)]


class AnsweringServer(KeepAliveServer):
    """The keep-alive server answering "7" whenever nothing else is queued."""

    def _next(self, body: dict[str, Any]) -> Step | None:
        return super()._next(body) or Step("7")


SLEEP_RUN = (sys.executable, "-m", "mindspace.hosts.cli.app", "sleep", "--run")


def test_sleep_run_spends_the_night_on_one_kept_alive_connection(tmp_path: Path) -> None:
    db = tmp_path / "night.db"
    store = SqlStore.from_path(db)
    assistant = assistant_on(store, "barkeep", llm=OfflineLLM(announce=False))
    texts = [f"Alice traded {n} bolts of cloth for salt at the north gate" for n in range(6)]

    async def write() -> None:
        for text in texts:
            result = await assistant.call_tool("add_journal_entry", {"content": text})
            assert result["success"] is True, result

    asyncio.run(write())
    store.close()
    with AnsweringServer() as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MINDSPACE_")}
        env.update(
            {
                "MINDSPACE_DATA_DIR": str(tmp_path),
                "MINDSPACE_EMBEDDER": "hashing",
                "MINDSPACE_LLM_BASE_URL": server.url,
                "MINDSPACE_LLM_MODEL": "scripted",
                "COLUMNS": "200",
                "PYTHONIOENCODING": "utf-8",
            }
        )
        done = subprocess.run(
            [*SLEEP_RUN, "--db", str(db), "--assistant", "barkeep"],
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=300,
            env=env,
            check=False,
        )
        sockets = list(server.sockets)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert "The night is done" in done.stdout
    # The night asked the model several times, always over the same connection.
    assert len(sockets) >= 2, sockets
    assert len(set(sockets)) == 1, f"expected one connection, the client used {set(sockets)}"
