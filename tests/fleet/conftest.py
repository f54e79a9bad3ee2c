"""Fleet fixtures: a real PostgreSQL database, a stand-in model over HTTP, worker processes.

Workers are real ``mindspace worker`` processes (they import this worktree's
sources through the inherited ``PYTHONPATH``); the only stand-in is the model: a
:class:`~mindspace.testing.ChatCompletionsServer` whose responder answers every request
after a short latency and records, per assistant, when each request started and ended.
Every event's text starts with ``[key]`` so the stand-in knows whose tick it serves.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pytest

from mindspace import Settings
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing import ChatCompletionsServer
from mindspace.testing.assistants import assistant_on
from mindspace.testing.chat_server import Step
from mindspace.testing.postgres import LocalPostgres

_KEY = re.compile(r"\[([a-z0-9_-]+)\]")


@dataclass
class StandIn:
    """The model: answers after ``latency`` seconds; ``holds`` keeps a key's first request."""

    latency: float = 0.05
    calls: dict[str, list[tuple[float, float]]] = field(default_factory=lambda: defaultdict(list))
    seen: list[str] = field(default_factory=list)
    holds: dict[str, threading.Event] = field(default_factory=dict)
    arrived: dict[str, threading.Event] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ChatCompletionsServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return self.server.url

    def hold(self, key: str) -> tuple[threading.Event, threading.Event]:
        """Hold the next request of ``key`` until the returned gate is set."""
        gate, arrived = threading.Event(), threading.Event()
        self.holds[key], self.arrived[key] = gate, arrived
        return gate, arrived

    def respond(self, body: dict[str, Any]) -> Step:
        users = [m["content"] for m in body["messages"] if m["role"] == "user"]
        text = users[-1] if users else ""
        found = _KEY.search(text)
        key = found.group(1) if found else "?"
        start = time.monotonic()
        with self.lock:
            self.seen.append(text)
            gate = self.holds.pop(key, None)
        if gate is not None:
            self.arrived[key].set()
            gate.wait(60)
            return Step(status=503)
        time.sleep(self.latency)
        with self.lock:
            self.calls[key].append((start, time.monotonic()))
        return Step(content=f"Answer to {text.splitlines()[-1]}")

    def overlapping(self) -> dict[str, list[tuple[float, float]]]:
        """Assistants whose requests (hence ticks) overlapped in time."""
        bad = {}
        with self.lock:
            for key, spans in self.calls.items():
                ordered = sorted(spans)
                if any(b[0] < a[1] for a, b in itertools.pairwise(ordered)):
                    bad[key] = ordered
        return bad


@pytest.fixture
def stand_in() -> Iterator[StandIn]:
    """The stand-in model over HTTP."""
    model = StandIn()
    server = ChatCompletionsServer(respond=model.respond)
    model.server = server
    with server:
        yield model
    for gate in model.holds.values():
        gate.set()


def worker_env(model: StandIn, tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of a fleet process: this worktree's sources, the stand-in model."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MINDSPACE_")}
    env.update(
        MINDSPACE_LLM_BASE_URL=model.url,
        MINDSPACE_LLM_MODEL="scripted",
        MINDSPACE_LLM_MAX_RETRIES="0",
        MINDSPACE_EMBEDDER="none",
        MINDSPACE_DATA_DIR=str(tmp_path),
        PYTHONUNBUFFERED="1",
        **extra,
    )
    return env


@dataclass
class Proc:
    """A fleet process; its stderr goes to a file the test can read."""

    popen: subprocess.Popen[bytes]
    log: Path

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20) -> int:
        if self.popen.poll() is None:
            self.popen.send_signal(sig)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(5)
        return self.popen.returncode


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Callable[..., Proc]]:
    """Start ``python -m mindspace.hosts.cli ARGS...`` (the ``mindspace`` command).

    Every process is stopped after the test.
    """
    procs: list[Proc] = []

    def start(*args: str, env: dict[str, str]) -> Proc:
        log = tmp_path / f"proc{len(procs)}.log"
        with log.open("wb") as out:
            popen = subprocess.Popen(
                [sys.executable, "-m", "mindspace.hosts.cli", *args],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
            )
        proc = Proc(popen, log)
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        proc.stop(signal.SIGKILL if proc.popen.poll() is None else signal.SIGTERM, 5)


def worker_args(url: str, *more: str) -> list[str]:
    """``worker`` with fast heartbeats, so dead workers are noticed within seconds."""
    return ["worker", "--db", url, "--heartbeat", "0.5", "--stall-after", "3", *more]


def seed(url: str, settings: Settings, events: dict[str, int]) -> dict[str, list[str]]:
    """Create assistants with ``events[key]`` messages each; returns their event ids."""
    store = SqlStore(url)
    try:
        ids: dict[str, list[str]] = {}
        for key, count in events.items():
            assistant = assistant_on(store, key, llm=OfflineLLM(announce=False), settings=settings)
            ids[key] = [
                assistant.enqueue_event(f"[{key}] message {n}", source_entity="Bob").id
                for n in range(count)
            ]
        return ids
    finally:
        store.close()


def add_goal(url: str, settings: Settings, key: str) -> None:
    """Give ``key`` an active goal (so it is not idle)."""
    store = SqlStore(url)
    try:
        assistant = assistant_on(store, key, llm=OfflineLLM(announce=False), settings=settings)
        asyncio.run(assistant.call_tool("add_goal", {"description": "Keep the fire going"}))
    finally:
        store.close()


def wait_for(check: Callable[[], Any], timeout: float, what: str, step: float = 0.2) -> Any:
    """Poll ``check`` until it returns something truthy, or fail after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(step)


def query(postgres: LocalPostgres, url: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """Rows of ``sql`` on the test database of ``url``."""
    database = url.rsplit("/", 1)[1].split("?", 1)[0]
    with psycopg.connect(postgres.conninfo(database), autocommit=True) as conn:
        return list(conn.execute(sql, params).fetchall())


def event_rows(postgres: LocalPostgres, url: str) -> dict[str, tuple[str, str | None]]:
    """Every event's (status, reply) by id."""
    rows = query(postgres, url, "SELECT id, status, reply FROM events")
    return {event_id: (status, reply) for event_id, status, reply in rows}


def message_counts(postgres: LocalPostgres, url: str) -> dict[tuple[str, str], int]:
    """Stored conversation messages by (assistant, role)."""
    rows = query(
        postgres,
        url,
        "SELECT a.key, m.role, count(*) FROM messages m JOIN assistants a "
        "ON a.id = m.assistant_id GROUP BY a.key, m.role",
    )
    return {(key, role): count for key, role, count in rows}
