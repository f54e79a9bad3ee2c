"""The dashboard corrects the assistant's mind, in headless Chromium (issue 15).

A user edits a memory and sees the new text after a reload, forgets an entity after
reading the dry run and finds the forgetting in the History tab, links tabs by URL (back,
forward, reload), reads the link graph's hover labels and legend, creates the first
assistant of an empty database, reads "offline" in a colour that is not green, and uses
the page at 400 px without sideways scrolling. Screenshots go to ``test-artifacts/``.

Each test runs a real uvicorn server without the background ticker (nothing changes the
data behind the browser's back); the browser and the page come from conftest.py.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from playwright.sync_api import Page, expect

from mindspace import Assistant
from mindspace.hosts.http import AssistantHub, create_app
from mindspace.memory.records import Memory, MemoryLink, MemoryLinks

ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts"
TABS = ["overview", "goals", "projects", "journal", "memories", "entities", "links"]
TABS += ["context", "approvals", "history"]


async def teach(assistant: Assistant) -> dict[str, str]:
    """Memories, journal entries and observations about Alice and Bob, two clusters of
    linked memories and an unlinked one, and a goal; returns the ids by name."""
    call = assistant.call_tool
    ids: dict[str, str] = {}
    for name, who, text in (
        ("alice", "Alice", "Alice likes dark ale from the northern hills"),
        ("alice2", "Alice", "Alice pays her tab every Friday"),
        ("bob", "Bob", "Bob sings old ballads at night"),
        ("cellar", None, "The cellar floods in spring"),
        ("roof", None, "The roof leaks above room three"),
        ("bard", None, "A bard plays on Sundays"),
    ):
        args: dict[str, Any] = {"content": text}
        if who:
            args["source_entity"] = who
        ids[name] = (await call("store_memory", args))["memory_id"]
    for who in ("Alice", "Bob"):
        entry = await call(
            "add_journal_entry", {"content": f"{who} came by.", "source_entity": who}
        )
        ids[f"entry_{who}"] = str(entry["entry_id"])
        await call("update_entity_observation", {"entity_id": who, "observation": f"{who} came"})
    goal = await call("add_goal", {"description": "Fix the leaking roof", "priority": "high"})
    ids["goal"] = goal["goal_id"]
    with assistant._core.transaction() as unit:
        now = assistant._core.now()
        for source, targets in (("alice", ("alice2", "bob")), ("cellar", ("roof",))):
            links = tuple(MemoryLink(id=ids[t], score=0.8) for t in targets)
            unit.put(MemoryLinks(memory_id=ids[source], linked_to=links, processed_at=now))
    return ids


@pytest.fixture
def serve(
    live_server: Callable[[FastAPI], Any], server_settings: Callable[..., Any]
) -> Callable[[AssistantHub], str]:
    """Serve a hub without the background ticker; returns the dashboard's base URL."""

    def start(hub: AssistantHub) -> str:
        server = live_server(create_app(hub, server=server_settings(), background_ticks=False))
        return f"{server.url}/dashboard/"

    return start


@pytest.fixture
def taught(hub: AssistantHub, serve: Callable[[AssistantHub], str]) -> tuple[str, dict[str, str]]:
    """The dashboard of 'barkeep', who knows Alice and Bob; and the ids of what it knows."""
    hub.create("barkeep")
    # Playwright's sync API runs an event loop in this thread: teach in another one.
    with ThreadPoolExecutor(1) as pool:
        ids = pool.submit(asyncio.run, teach(hub.get("barkeep"))).result()
    return serve(hub), ids


def shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)


def test_edit_a_memory_and_see_the_new_text_after_a_reload(
    taught: tuple[str, dict[str, str]], page: Page
) -> None:
    url, ids = taught
    page.goto(f"{url}#/memories?assistant=barkeep")
    item = page.locator(f"li[data-memory='{ids['alice']}']")
    expect(item).to_contain_text("Alice likes dark ale")
    item.get_by_role("button", name="Edit").click()
    item.locator("textarea").fill("Alice likes pale ale, not dark")
    shot(page, "dashboard-memory-editing.png")
    item.get_by_role("button", name="Save").click()
    expect(item.locator(".content")).to_have_text("Alice likes pale ale, not dark")

    page.reload()
    expect(page.locator("#tab-memories")).to_be_visible()
    expect(item.locator(".content")).to_have_text("Alice likes pale ale, not dark")
    expect(page.locator("#memory-list")).not_to_contain_text("dark ale from the northern")

    # Deleting asks first; Cancel keeps the memory.
    cellar = page.locator(f"li[data-memory='{ids['cellar']}']")
    cellar.get_by_role("button", name="Delete").click()
    expect(cellar.locator(".confirm")).to_contain_text("Delete this memory?")
    cellar.get_by_role("button", name="Cancel").click()
    expect(cellar.locator(".content")).to_have_text("The cellar floods in spring")
    cellar.get_by_role("button", name="Delete").click()
    cellar.get_by_role("button", name="Delete memory").click()
    expect(page.locator("#memory-list")).not_to_contain_text("cellar floods", timeout=5_000)

    # A goal's description is edited the same way, in the Goals tab.
    page.click("#tabs button[data-tab=goals]")
    goal = page.locator(f"#tab-goals .editable[data-id='{ids['goal']}']")
    goal.get_by_role("button", name="Edit").click()
    goal.locator("textarea").fill("Fix the leaking roof before winter")
    goal.get_by_role("button", name="Save").click()
    expect(goal).to_contain_text("Fix the leaking roof before winter")

    page.click("#tabs button[data-tab=history]")
    history = page.locator("#history-list")
    edited = history.locator(f"li[data-action=update][data-target='{ids['alice']}']")
    expect(edited).to_contain_text("user: dashboard")
    expect(edited.locator("del")).to_contain_text("Alice likes dark ale")
    expect(edited.locator("ins")).to_contain_text("Alice likes pale ale, not dark")
    expect(
        history.locator(f"li[data-action=delete][data-target='{ids['cellar']}']")
    ).to_contain_text("The cellar floods in spring")
    shot(page, "dashboard-history-edits.png")


def test_forget_an_entity_after_the_dry_run_and_see_the_history_entry(
    taught: tuple[str, dict[str, str]], page: Page
) -> None:
    url, ids = taught
    page.goto(f"{url}#/entities?assistant=barkeep")
    alice = page.locator("article.entity[data-entity=Alice]")
    alice.get_by_role("button", name="Forget…").click()
    panel = alice.locator(".forget-panel")
    expect(panel).to_contain_text("Forgetting Alice removes:")
    expect(panel.locator(".forget-counts")).to_contain_text("2 memories")
    expect(panel.locator(".forget-counts")).to_contain_text("1 journal entries")
    expect(panel.locator(".forget-ids")).to_contain_text(ids["alice"])
    expect(panel.locator(".forget-ids")).to_contain_text(ids["alice2"])
    expect(panel.locator(".forget-ids")).to_contain_text("Alice pays her tab every Friday")
    # The tool calls' history records of her memories lose their words too.
    expect(panel.locator(".forget-redacted")).to_contain_text("history (")
    shot(page, "dashboard-forget-dry-run.png")
    # The dry run wrote nothing: Alice's memory is still listed.
    listed = page.request.get(url.replace("/dashboard/", "/v1/assistants/barkeep/memories"))
    assert "Alice likes dark ale" in listed.text()

    panel.get_by_role("button", name="Forget Alice").click()
    expect(page.locator("#notice")).to_contain_text("Forgot Alice: 1 entity profile")
    expect(page.locator("article.entity[data-entity=Alice]")).to_have_count(0)
    expect(page.locator("article.entity[data-entity=Bob]")).to_have_count(1)

    page.click("#tabs button[data-tab=memories]")
    expect(page.locator("#memory-list")).to_contain_text("Bob sings old ballads")
    expect(page.locator("#memory-list")).not_to_contain_text("Alice")

    page.click("#tabs button[data-tab=history]")
    entry = page.locator("#history-list li[data-action=forget][data-target=Alice]")
    expect(entry).to_contain_text("forgot everything about Alice: 1 entity profile")
    expect(entry).to_contain_text("2 memories")
    expect(entry).to_contain_text("user: dashboard")
    shot(page, "dashboard-history-forget.png")


def test_tabs_are_routes_in_the_url_and_the_graph_shows_clusters(
    taught: tuple[str, dict[str, str]], page: Page
) -> None:
    url, ids = taught
    page.goto(f"{url}#assistant=barkeep")  # the older link form still opens the overview
    expect(page).to_have_url(f"{url}#/overview?assistant=barkeep")
    page.click("#tabs button[data-tab=journal]")
    expect(page).to_have_url(f"{url}#/journal?assistant=barkeep")
    entry = page.locator(f"#journal-list .editable[data-id='{ids['entry_Bob']}']")
    expect(entry).to_contain_text("Bob came by.")
    entry.get_by_role("button", name="Edit").click()
    entry.locator("textarea").fill("Bob came by at noon.")
    entry.get_by_role("button", name="Save").click()
    expect(entry.locator(".content")).to_have_text("Bob came by at noon.")
    page.click("#tabs button[data-tab=links]")
    expect(page).to_have_url(f"{url}#/links?assistant=barkeep")

    page.go_back()
    expect(page.locator("#tab-journal")).to_be_visible()
    expect(page.locator("#tabs button.active")).to_have_text("Journal")
    page.go_forward()
    expect(page.locator("#tab-links")).to_be_visible()
    page.reload()
    expect(page.locator("#tab-links")).to_be_visible()
    expect(page.locator("#tabs button.active")).to_have_text("Link graph")

    graph = page.locator("#graph")
    expect(graph).to_contain_text("6 memories in 2 clusters")
    expect(graph.locator("svg")).to_contain_text("not linked yet")  # the bard's row
    expect(graph.locator(".legend")).to_contain_text("not linked yet")
    expect(graph.locator(".legend")).to_contain_text("cluster")
    expect(graph.locator("g.cluster")).to_have_count(2)
    label = graph.locator(".hover-label")
    expect(label).to_have_attribute("visibility", "hidden")
    graph.locator(f"circle[data-memory='{ids['bob']}']").hover()
    expect(label).to_have_attribute("visibility", "visible")
    expect(label).to_have_text("Bob sings old ballads at night")
    # Linked memories sit together: Alice's two are closer to each other than to the roof.
    where = {
        name: graph.locator(f"circle[data-memory='{ids[name]}']").bounding_box()
        for name in ("alice", "alice2", "roof")
    }

    def distance(a: str, b: str) -> float:
        one, two = where[a], where[b]
        assert one is not None
        assert two is not None
        return float(((one["x"] - two["x"]) ** 2 + (one["y"] - two["y"]) ** 2) ** 0.5)

    assert distance("alice", "alice2") < distance("alice", "roof")
    shot(page, "dashboard-link-graph.png")


def test_an_empty_database_offers_a_form_that_creates_an_assistant(
    hub: AssistantHub, serve: Callable[[AssistantHub], str], page: Page
) -> None:
    url = serve(hub)
    page.goto(url)
    empty = page.locator("#empty-state")
    expect(empty).to_be_visible()
    expect(empty).to_contain_text("No assistants yet")
    expect(page.locator("#tabs")).to_be_hidden()
    shot(page, "dashboard-empty-state.png")
    page.fill("#create-key", "inn keeper!")  # not a key: the rule is shown
    page.click("#create-form button[type=submit]")
    expect(page.locator("#notice")).to_contain_text('"inn keeper!" cannot be a key: use letters')
    expect(empty).to_be_visible()
    page.fill("#create-key", "innkeeper")
    page.click("#create-form button[type=submit]")
    expect(empty).to_be_hidden()
    expect(page.locator("#assistant")).to_have_value("innkeeper")
    expect(page.locator("#mode-badge")).to_have_text("awake")
    expect(page).to_have_url(f"{url}#/overview?assistant=innkeeper")
    # A new assistant has never changed mode: the card says why it is awake, no empty date.
    expect(page.locator("#mode-card")).to_contain_text("awake: started")
    expect(page.locator("#mode-card")).not_to_contain_text("since \u2013")
    assert hub.assistant_keys() == ["innkeeper"]


def test_offline_and_asleep_are_not_green(taught: tuple[str, dict[str, str]], page: Page) -> None:
    url, _ = taught
    green = "rgb(76, 195, 138)"
    page.goto(f"{url}#/overview?assistant=barkeep")
    live = page.locator("#live")
    expect(live).to_have_text("● live")
    expect(live).to_have_css("color", green)

    # The stream goes away: the indicator says offline, in red, and says why on hover.
    page.route("**/stream", lambda route: route.abort())
    page.reload()
    expect(live).to_have_text("● offline")
    expect(live).to_have_css("color", "rgb(239, 107, 107)")
    expect(live).to_have_attribute("title", re.compile(r"^Offline: the stream is closed"))
    expect(page.locator(".status-legend")).to_contain_text("offline, failed, error")

    page.click("#sleep-btn")
    badge = page.locator("#mode-badge")
    expect(badge).to_have_text("asleep")
    expect(badge).not_to_have_css("color", green)
    expect(badge).to_have_css("color", "rgb(167, 139, 250)")
    shot(page, "dashboard-offline-asleep.png")


def test_at_400_px_neither_the_header_nor_a_tab_overflows(
    taught: tuple[str, dict[str, str]], page: Page
) -> None:
    url, _ = taught
    page.set_viewport_size({"width": 400, "height": 800})
    page.goto(f"{url}#/overview?assistant=barkeep")
    expect(page.locator("#mode-badge")).to_have_text("awake")
    page.click("#tick-now")  # a tick, so the context tab shows its widest table
    for tab in TABS:
        page.locator(f"#tabs button[data-tab={tab}]").click()
        expect(page.locator(f"#tab-{tab}")).to_be_visible()
        expect(page.locator("body")).to_have_attribute("data-loaded", tab)
        if tab == "context":
            page.locator("#tick-list li button").first.click()
            expect(page.locator("#tick-detail table.pattern")).to_contain_text("source layer")
        page_width, window, header, tab_bar = page.evaluate(
            "() => [document.documentElement.scrollWidth, window.innerWidth,"
            " document.querySelector('header').scrollWidth,"
            " document.querySelector('#tabs').clientWidth]"
        )
        assert page_width <= window, f"tab {tab}: the page is {page_width} px wide at {window}"
        assert header <= window, f"tab {tab}: the header is {header} px wide at {window}"
        assert tab_bar <= window, f"tab {tab}: the tab bar is {tab_bar} px wide at {window}"
        if tab in ("overview", "entities"):
            shot(page, f"dashboard-400px-{tab}.png")


def test_edit_an_entitys_attributes_and_observations_and_see_them_in_the_history(
    taught: tuple[str, dict[str, str]], page: Page
) -> None:
    url, _ = taught
    page.goto(f"{url}#/entities?assistant=barkeep")
    alice = page.locator("article.entity[data-entity=Alice]")
    observation = alice.locator("li.observation[data-index='0']")
    expect(observation).to_contain_text("Alice came")

    # Removing an observation asks first; Cancel keeps it.
    observation.get_by_role("button", name="Remove").click()
    expect(observation.locator(".confirm")).to_contain_text("Remove the observation")
    observation.get_by_role("button", name="Cancel").click()
    expect(observation).to_contain_text("Alice came")
    observation.get_by_role("button", name="Remove").click()
    observation.get_by_role("button", name="Remove observation").click()
    expect(alice.locator("li.observation")).to_have_count(0)

    alice.get_by_label("attribute name").fill("drink")
    alice.get_by_label("attribute value").fill("dark ale")
    alice.get_by_role("button", name="Set").click()
    drink = alice.locator(".attr-row[data-attribute=drink]")
    expect(drink).to_contain_text("dark ale")
    drink.get_by_role("button", name="Edit").click()
    drink.get_by_label("new value of drink").fill("pale ale")
    drink.get_by_role("button", name="Save").click()
    expect(drink.locator(".attr-value")).to_have_text("pale ale")

    page.reload()
    expect(drink.locator(".attr-value")).to_have_text("pale ale")
    expect(alice.locator("li.observation")).to_have_count(0)
    expect(alice).not_to_contain_text("Alice came")
    shot(page, "dashboard-entity-edit.png")

    page.click("#tabs button[data-tab=history]")
    edits = page.locator(
        "#history-list li[data-action=update][data-target=Alice]", has_text="user: dashboard"
    )
    expect(edits).to_have_count(3)
    expect(edits.nth(0).locator("ins")).to_contain_text("pale ale")
    expect(edits.nth(2).locator("del")).to_contain_text("Alice came")


def test_a_restated_fact_and_a_replaced_one_read_so_in_the_memories_tab(
    taught: tuple[str, dict[str, str]], hub: AssistantHub, page: Page
) -> None:
    url, ids = taught
    keeper = hub.get("barkeep")

    async def restate_and_replace() -> str:
        again = await keeper.call_tool("store_memory", {"content": "The cellar floods in spring."})
        assert again["action"] == "restated"
        roof = await keeper.call_tool("store_memory", {"content": "The new roof holds in rain"})
        with keeper._core.transaction() as unit:  # as the reconcile step marks a replaced fact
            old = unit.get(Memory, ids["roof"])
            assert old is not None
            unit.put(
                old.model_copy(
                    update={"valid_to": "2025-12-07T09:00:00Z", "superseded_by": roof["memory_id"]}
                )
            )
        return str(roof["memory_id"])

    with ThreadPoolExecutor(1) as pool:
        newer = pool.submit(asyncio.run, restate_and_replace()).result()
    page.goto(f"{url}#/memories?assistant=barkeep")
    cellar = page.locator(f"li[data-memory='{ids['cellar']}']")
    expect(cellar).to_contain_text("said 2×")
    roof = page.locator(f"li[data-memory='{ids['roof']}']")
    expect(roof).to_have_class(re.compile(r"\breplaced\b"))
    badge = roof.locator(".badge", has_text="replaced 2025-12-07 09:00")
    expect(badge).to_have_attribute("title", f"no longer current: replaced by {newer}")
    expect(page.locator(f"li[data-memory='{newer}']")).not_to_have_class(re.compile("replaced"))
    shot(page, "dashboard-memory-validity.png")
