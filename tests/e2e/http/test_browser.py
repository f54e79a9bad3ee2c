"""The dashboard in headless Chromium (Debian's /usr/bin/chromium through Playwright).

A real uvicorn server on 127.0.0.1 runs the background ticker; the browser sends a chat
message, gets the reply, and sees the goal tree update. Screenshots are kept in
``test-artifacts/`` at the repository root. The ``browser`` and ``page`` fixtures are in
conftest.py (test_dashboard_manage.py uses them too).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from playwright.sync_api import Page, expect

from mindspace import Settings
from mindspace.hosts.http import AssistantHub, create_app

ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts"


@pytest.fixture
def dashboard(
    make_hub: Callable[..., AssistantHub],
    settings: Settings,
    live_server: Callable[[FastAPI], Any],
    server_settings: Callable[..., Any],
) -> str:
    """The dashboard URL of a server whose ticker ticks every 0.2 s."""
    hub = make_hub(settings_=settings.model_copy(update={"tick_rate_awake": 0.2}))
    hub.create("barkeep")
    server = live_server(create_app(hub, server=server_settings()))
    return f"{server.url}/dashboard/#assistant=barkeep"


def test_chat_gets_a_reply_and_the_goal_tree_updates(dashboard: str, page: Page) -> None:
    # (the page is closed before the server stops: fixtures end in reverse order)
    ARTIFACTS.mkdir(exist_ok=True)
    page.goto(dashboard)
    expect(page.locator("#mode-badge")).to_have_text("awake")
    expect(page.locator("#live")).to_have_text("● live")
    expect(page.locator("#goals-card")).to_contain_text("No goals yet")

    page.fill("#chat-as", "Alice")
    page.fill("#chat-text", "Can you build a tavern with a bar, a kitchen and rooms?")
    page.click("#chat-form button[type=submit]")
    reply = page.locator(".msg.theirs").last
    expect(reply).to_contain_text("I'll see to it, Alice.", timeout=20_000)
    expect(reply).not_to_have_class("waiting")

    tree = page.locator("#goals-card")
    expect(tree).to_contain_text("Build a tavern with a bar, a kitchen and rooms", timeout=20_000)
    expect(tree.locator("li.goal")).to_have_count(6)
    expect(page.locator("#metrics-card")).to_contain_text("tool calls")
    expect(page.locator("#tool-use")).to_contain_text("valid,", timeout=20_000)
    expect(page.locator("#night-backlog")).to_contain_text("night work left:")
    expect(page.locator("#gauge-card")).to_contain_text("NORMAL")
    page.screenshot(path=str(ARTIFACTS / "dashboard.png"), full_page=True)

    page.click("#tabs button[data-tab=context]")
    event_tick = page.locator("#tick-list li", has_text="decompose_goal").first
    event_tick.locator("button").click()
    expect(event_tick).to_have_class("selected")
    # The tick's own components (a side session's are nested in its own section).
    components = page.locator("#tick-detail > div.components > details.component")
    expect(components).to_have_count(9)
    expect(page.locator("#tick-detail > table.pattern")).to_contain_text("source layer")
    expect(page.locator("#tick-detail > .toolcalls")).to_contain_text("decompose_goal")
    page.locator(
        "#tick-detail > div.components > details.component[data-component=pending_event] summary"
    ).click()
    expect(page.locator("#tick-detail")).to_contain_text("Can you build a tavern")
    # decompose_goal asked in the goal_decompose context: a side session of the tick.
    side = page.locator("#tick-detail details.side-session[data-context=goal_decompose]")
    expect(side).to_have_count(1)
    side.locator("summary").first.click()
    expect(side.locator("details.component")).to_have_count(3)
    expect(side.locator("table.pattern")).to_contain_text("single_action")
    page.screenshot(path=str(ARTIFACTS / "dashboard-context.png"), full_page=True)


def test_a_secured_dashboard_asks_for_the_token(
    hub: AssistantHub,
    live_server: Callable[[FastAPI], Any],
    server_settings: Callable[..., Any],
    page: Page,
) -> None:
    token = "browser-token-0123456789abcdef"
    hub.create("barkeep")
    server = live_server(create_app(hub, server=server_settings(api_token=token)))
    page.goto(f"{server.url}/dashboard/")
    expect(page.locator("#token-form")).to_be_visible()
    expect(page.locator("#notice")).to_contain_text("needs an API token")
    page.fill("#token", token)
    page.click("#token-form button")
    expect(page.locator("#assistant")).to_have_value("barkeep")
    expect(page.locator("#mode-badge")).to_have_text("awake")
    expect(page.locator("#token-form")).to_be_hidden()
