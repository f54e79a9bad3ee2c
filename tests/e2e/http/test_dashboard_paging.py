"""The Journal tab pages through a long journal, in headless Chromium: older and newer
move by a page of 20 and stop at either end.
"""

from __future__ import annotations

from playwright.sync_api import Page, expect


def test_the_journal_pages_older_and_newer(barkeep_url: str, page: Page) -> None:
    tools = f"{barkeep_url}/v1/assistants/barkeep/tools/add_journal_entry"
    for n in range(25):
        added = page.request.post(tools, data={"content": f"Served guest number {n}"})
        assert added.ok, added.text()
    page.goto(f"{barkeep_url}/dashboard/#/journal?assistant=barkeep")
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
