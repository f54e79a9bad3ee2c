"""The Journal tab pages through a long journal, in headless Chromium: older and newer
move by a page of 20 and stop at either end.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from playwright.sync_api import Page, expect

from mindspace.hosts.http import AssistantHub, create_app


def test_the_journal_pages_older_and_newer(
    hub: AssistantHub,
    live_server: Callable[[FastAPI], Any],
    server_settings: Callable[..., Any],
    page: Page,
) -> None:
    hub.create("barkeep")
    server = live_server(create_app(hub, server=server_settings(), background_ticks=False))
    tools = f"{server.url}/v1/assistants/barkeep/tools/add_journal_entry"
    for n in range(25):
        added = page.request.post(tools, data={"content": f"Served guest number {n}"})
        assert added.ok, added.text()
    page.goto(f"{server.url}/dashboard/#/journal?assistant=barkeep")
    entries, older, newer = page.locator("#journal-list > li"), "#journal-next", "#journal-prev"
    expect(page.locator("#journal-range")).to_have_text("1–20 of 25")
    expect(entries).to_have_count(20)
    expect(page.locator(newer)).to_be_disabled()

    page.click(older)
    expect(page.locator("#journal-range")).to_have_text("21–25 of 25")
    expect(entries).to_have_count(5)
    expect(page.locator(older)).to_be_disabled()
    expect(entries.first).to_contain_text("Served guest number 4")

    page.click(newer)
    expect(page.locator("#journal-range")).to_have_text("1–20 of 25")
    expect(entries.first).to_contain_text("Served guest number 24")
