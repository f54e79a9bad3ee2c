"""HTTP fixtures: the application on a real SQLite store, as ASGI or as a real uvicorn server.

The only stand-in is the model (the offline model, or the scripted chat-completions
server over HTTP); the store, the engine, the app and uvicorn are real.
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from playwright.sync_api import Browser, Page, sync_playwright

from mindspace import ManualClock, Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.hosts.http import AssistantHub, ServerSettings, create_app
from mindspace.llm.port import LLM
from mindspace.offline import OfflineLLM
from mindspace.runtime import Runtime
from mindspace.storage import SqlStore
from mindspace.tools.registry import ToolRegistry

TOKEN_ALL = "all-assistants-token-0123456789"
TOKEN_ALICE = "alice-only-token-0123456789abc"


def _server_settings(**values: Any) -> ServerSettings:
    """Server settings that ignore the environment's MINDSPACE_API_* values."""
    defaults: dict[str, Any] = {
        "api_token": None,
        "api_tokens": None,
        "api_max_body_bytes": 1_048_576,
        "api_tick_history": 20,
        "api_max_streams": 8,
        "api_stream_heartbeat": 15.0,
    }
    defaults.update(values)
    return ServerSettings(**defaults)


@pytest.fixture
def server_settings() -> Callable[..., ServerSettings]:
    """Make server settings that ignore the environment's MINDSPACE_API_* values."""
    return _server_settings


@dataclass(frozen=True)
class Tokens:
    """The test tokens: one for every assistant, one for 'alice' only."""

    all: str = TOKEN_ALL
    alice: str = TOKEN_ALICE


@pytest.fixture
def tokens() -> Tokens:
    """The test tokens."""
    return Tokens()


@pytest.fixture
def make_hub(
    store: SqlStore, clock: ManualClock, settings: Settings
) -> Callable[..., AssistantHub]:
    """A hub on the test store, clock and settings (offline model, hashing embedder)."""

    def make(
        llm: LLM | None = None,
        settings_: Settings | None = None,
        tools: ToolRegistry | None = None,
    ) -> AssistantHub:
        return AssistantHub(
            Runtime(
                settings_ or settings,
                store,
                llm=llm or OfflineLLM(announce=False),
                clock=clock,
                embedder=HashingEmbedder(256),
                tools=tools,
                owns_store=False,
            )
        )

    return make


@pytest.fixture
def hub(make_hub: Callable[..., AssistantHub]) -> AssistantHub:
    """The default hub."""
    return make_hub()


@pytest.fixture
def app(hub: AssistantHub) -> FastAPI:
    """An open app (no tokens) without the background ticker."""
    return create_app(hub, server=_server_settings(), background_ticks=False)


@pytest.fixture
def secured_app(hub: AssistantHub) -> FastAPI:
    """An app with a token for every assistant and one for 'alice' only."""
    server = _server_settings(api_token=TOKEN_ALL, api_tokens=f"{TOKEN_ALICE}=alice")
    return create_app(hub, server=server, background_ticks=False)


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """httpx against the app in process."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
        yield c


@pytest.fixture
async def secured(secured_app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """httpx against the secured app, with no token set."""
    transport = httpx.ASGITransport(app=secured_app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
        yield c


class LiveServer:
    """A real uvicorn server on 127.0.0.1 (a free port) in a background thread."""

    def __init__(self, app: FastAPI) -> None:
        config = uvicorn.Config(
            app, host="127.0.0.1", port=0, log_level="warning", timeout_graceful_shutdown=5
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:  # wait for the socket, bounded
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        return self

    @property
    def url(self) -> str:
        """The base URL, e.g. http://127.0.0.1:54321."""
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


@pytest.fixture(scope="session")
def live_server_type() -> type[LiveServer]:
    """The LiveServer class, for fixtures of a wider scope."""
    return LiveServer


@pytest.fixture
def live_server() -> Iterator[Callable[[FastAPI], LiveServer]]:
    """Start apps under real uvicorn servers; all are stopped after the test."""
    started: list[LiveServer] = []

    def start(app: FastAPI) -> LiveServer:
        server = LiveServer(app).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def barkeep_url(hub: AssistantHub, live_server: Callable[[FastAPI], LiveServer]) -> str:
    """The base URL of a live, open server (no ticker) whose hub holds ``barkeep``."""
    hub.create("barkeep")
    return live_server(create_app(hub, server=_server_settings(), background_ticks=False)).url


# -- the browser (test_browser.py, test_dashboard_manage.py) ---------------------------------
CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's Chromium, headless (never a downloaded browser)."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: apt-get install -y chromium chromium-driver "
            "(make test installs it)."
        )
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A page that records script errors."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    yield opened
    context.close()
    assert errors == [], f"script errors on the page: {errors}"
