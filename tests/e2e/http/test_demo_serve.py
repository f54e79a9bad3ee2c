"""``mindspace demo --serve`` serves the demo's database on the demo's clock (issue 15).

The demo writes its story on a scripted clock in December 2025. The server it starts
goes on from the story's last minute at real speed, so what happens after the demo (a
message from the dashboard, the ticker's ticks) is dated right after the story, never
today: old and new dates do not mix.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from rich.console import Console

from mindspace import ManualClock, Settings
from mindspace.clock import ResumedClock, parse_time
from mindspace.hosts.cli.demo import DEMO_START, DemoReport, run_demo
from mindspace.hosts.cli.serve import serve_demo
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on

ENDED = datetime(2025, 12, 7, 8, 30, tzinfo=UTC)  # when the demo's story stops
BASE = "/v1/assistants/barkeep"


def test_demo_serve_goes_on_from_the_demo_clock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("MINDSPACE_API_TOKEN", "MINDSPACE_API_TOKENS"):
        monkeypatch.delenv(name, raising=False)
    db = tmp_path / "demo.db"
    settings = Settings(data_dir=tmp_path, embedder="hashing")
    store = SqlStore.from_path(db)  # the database as the demo leaves it
    assistant_on(
        store,
        "barkeep",
        llm=OfflineLLM(announce=False),
        clock=ManualClock(ENDED),
        settings=settings,
    )
    store.close()
    seen: dict[str, Any] = {}

    def run_server(app: FastAPI, host: str, port: int, server: Any, **options: Any) -> None:
        options["on_start"](f"http://{host}:{port}")
        with TestClient(app) as client:  # the app's lifespan runs: its ticker too
            sent = client.post(
                f"{BASE}/events",
                json={"content": "Back again!", "source_entity": "Alice", "type": "say"},
            )
            assert sent.status_code in (200, 201, 202), sent.text
            assert client.post(f"{BASE}/tick").status_code == 200
            seen["event"] = client.get(f"{BASE}/events/{sent.json()['event_id']}").json()
            seen["ticks"] = client.get(f"{BASE}/ticks").json()["ticks"]
            seen["mode"] = client.get(f"{BASE}/mode").json()

    monkeypatch.setattr("mindspace.hosts.http.server.run_server", run_server)
    serve_demo(settings, str(db), DemoReport("barkeep", str(db), ended_at=ENDED), "127.0.0.1", 8765)

    event = seen["event"]["event"]
    assert event["status"] == "done", event
    for stamp in (event["created_at"], event["updated_at"], *(t["at"] for t in seen["ticks"])):
        # within minutes after the story's end (real seconds pass), not in today's year
        assert ENDED <= parse_time(stamp) < ENDED + timedelta(minutes=10), stamp
    out = capsys.readouterr().out
    assert "Clock: the demo's, going on from 2025-12-07 08:30 UTC at real speed" in out
    assert "/dashboard/#/overview?assistant=barkeep" in out


def test_the_resumed_clock_runs_forward_from_its_start() -> None:
    clock = ResumedClock(ENDED.replace(tzinfo=None))  # naive: taken as UTC
    first = clock.now()
    second = clock.now()
    assert ENDED <= first <= second < ENDED + timedelta(seconds=5)
    assert first.tzinfo is not None


def test_the_demo_reports_when_its_story_ends(tmp_path: Path) -> None:
    """``run_demo`` hands ``serve`` the story's last minute, inside the scripted December."""
    settings = Settings(data_dir=tmp_path, embedder="hashing")
    report = run_demo(
        settings, f"sqlite:///{tmp_path / 'demo.db'}", "barkeep", Console(file=io.StringIO())
    )
    assert report.ended_at is not None
    assert DEMO_START < report.ended_at < DEMO_START + timedelta(days=7)
