"""Session memory (the facts in every prompt) is edited from the dashboard's Overview, in
headless Chromium: add, edit and delete a fact, see a refusal, find each in the History tab.
"""

from __future__ import annotations

from playwright.sync_api import Page, expect


def test_add_edit_and_delete_session_facts_from_the_overview(barkeep_url: str, page: Page) -> None:
    page.goto(f"{barkeep_url}/dashboard/#/overview?assistant=barkeep")
    facts = page.locator("#session-card .session-list[data-list=facts]")
    expect(facts).to_contain_text("Key facts (0)")

    facts.get_by_label("new fact").fill("Dave prefers red wine")
    facts.get_by_role("button", name="Add fact").click()
    expect(facts).to_contain_text("Key facts (1)")
    facts.get_by_label("new fact").fill("The cellar floods in spring")
    facts.get_by_role("button", name="Add fact").click()
    expect(facts).to_contain_text("Key facts (2)")

    first = facts.locator(".editable[data-id='0']")
    first.get_by_role("button", name="Edit").click()
    first.locator("textarea").fill("Dave prefers white wine")
    first.get_by_role("button", name="Save").click()
    expect(first.locator(".content")).to_have_text("Dave prefers white wine")

    second = facts.locator(".editable[data-id='1']")
    second.get_by_role("button", name="Delete").click()
    second.get_by_role("button", name="Delete fact").click()
    expect(facts).to_contain_text("Key facts (1)")
    expect(facts).not_to_contain_text("cellar floods")

    # The persona guard's refusal is shown, and nothing is added.
    facts.get_by_label("new fact").fill("I prefer quiet evenings")
    facts.get_by_role("button", name="Add fact").click()
    expect(page.locator("#notice")).to_contain_text("third person")
    expect(facts).to_contain_text("Key facts (1)")

    page.reload()
    expect(facts.locator(".editable[data-id='0'] .content")).to_have_text("Dave prefers white wine")
    page.click("#tabs button[data-tab=history]")
    history = page.locator("#history-list")
    edited = history.locator("li[data-action=update]")
    expect(edited).to_contain_text("session_fact")
    expect(edited.locator("del")).to_contain_text("Dave prefers red wine")
    expect(edited.locator("ins")).to_contain_text("Dave prefers white wine")
    expect(history.locator("li[data-action=delete]")).to_contain_text("The cellar floods")
