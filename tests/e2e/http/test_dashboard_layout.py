"""Every dashboard tab is readable at 400 px and at 1,280 px, in headless Chromium.

Tried as a new user would: at 400 px the Goals tab showed one letter per line (a page
23,901 px long), at 1,280 px entity attribute values broke mid-word, and link-graph
captions overlapped. Each tab, at both widths, on an assistant with a deep goal tree,
long attribute values, a journal, memories, a tick, an approval and a history: no
horizontal overflow, and no element showing text narrower than 12 characters of that
text (or the whole text, when shorter). Screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from playwright.sync_api import Page, expect

from mindspace import Assistant
from mindspace.engine.history import Actor
from mindspace.hosts.http import AssistantHub, create_app
from mindspace.memory.records import MemoryLink, MemoryLinks

ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts"
TABS = ["overview", "goals", "projects", "journal", "memories", "entities", "links"]
TABS += ["context", "approvals", "history"]
WIDTHS = (400, 1280)

# Elements whose visible text is narrower than its first 12 characters (measured in the
# element's own font), and the page's overflow. Text in a scroll box counts at its box.
MEASURE = """() => {
  const canvas = document.createElement("canvas").getContext("2d");
  const narrow = [];
  const walker = document.createTreeWalker(
    document.querySelector(".tab.active") || document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.textContent.trim();
    const el = node.parentElement;
    if (!text || !el || !el.getClientRects().length) continue;
    const style = getComputedStyle(el);
    if (style.visibility === "hidden" || el.closest("svg")) continue;
    canvas.font = style.font;
    const sample = text.replace(/\\s+/g, " ").slice(0, 12);
    const need = canvas.measureText(sample).width;
    const range = document.createRange();
    range.selectNodeContents(node);
    const widest = Math.max(...[...range.getClientRects()].map((r) => r.width), 0);
    const box = el.getBoundingClientRect().width;
    // The text's widest line, or the box it wraps in, must hold 12 characters of it.
    const room = Math.round(Math.max(widest, box));
    if (room + 1 < need) {
      const what = `${el.tagName.toLowerCase()}.${el.className}`;
      narrow.push(`${what}: "${sample}" in ${room} px (needs ${Math.round(need)})`);
    }
  }
  // The link graph's captions: drawn at a legible size, and never on top of each other.
  const labels = [...document.querySelectorAll(".tab.active svg.graph text.hull-label")]
    .map((t) => [t.textContent, t.getBoundingClientRect()]);
  for (const [text, r] of labels)
    if (r.height < 9) narrow.push(`caption "${text}" is ${r.height.toFixed(1)} px high`);
  labels.forEach(([a, r], i) => labels.slice(i + 1).forEach(([b, q]) => {
    if (r.left < q.right && q.left < r.right && r.top < q.bottom && q.top < r.bottom)
      narrow.push(`captions "${a}" and "${b}" overlap`);
  }));
  return {
    narrow: narrow.slice(0, 12),
    page: document.documentElement.scrollWidth,
    window: window.innerWidth,
  };
}"""


async def furnish(assistant: Assistant) -> None:
    """A workspace with something in every tab, including long words and deep goals."""
    call = assistant.call_tool
    ids: list[str] = []
    await call(
        "create_project",
        {"project_key": "build_tavern", "summary": "Construct a tavern in the north district"},
    )
    goal = await call(
        "add_goal",
        {
            "description": "Build a tavern with a bar, a kitchen and three guest rooms for "
            "travellers coming down from the northern mountain passes",
            "priority": "high",
        },
    )
    plan = await call("decompose_goal", {"goal_id": goal["goal_id"]})
    first = plan["subtasks"][1]["id"]
    await call("decompose_goal", {"goal_id": first})
    await call("update_goal", {"goal_id": first, "progress": 40})
    for who, text in (
        ("Alice", "Alice likes dark ale from the northern hills, served by the fire"),
        ("Bob", "Bob sings old ballads at night"),
        (None, "The cellar floods in spring when the snow melts in the mountains"),
        *((None, f"The regulars' song number {n} is about the mountain road") for n in range(9)),
    ):
        args: dict[str, Any] = {"content": text}
        if who:
            args["source_entity"] = who
        ids.append((await call("store_memory", args))["memory_id"])
        if not text.startswith("The regulars"):
            await call("add_journal_entry", args | {"tags": ["regulars", "tavern-life"]})
    await call(
        "update_entity_observation",
        {"entity_id": "Alice", "observation": "Alice prefers the window seat near the hearth"},
    )
    await assistant.edits.update_entity(
        "Alice",
        Actor("user", "admin"),
        attributes={
            "preference": "dark ale from the northern hills; the window seat by the hearth",
            "occupation": "cartographer-of-the-northern-passes-and-their-hidden-shortcuts",
        },
    )
    await call("add_session_memory", {"memory_type": "fact", "content": "Alice prefers dark ale"})
    # Clusters of linked memories (as a night links them), so the graph has captions.
    with assistant._core.transaction() as unit:
        now = assistant._core.now()
        for source, targets in ((0, (1, 2)), (3, (4,)), (5, (6,)), (7, (8, 9)), (10, (11,))):
            links = tuple(MemoryLink(id=ids[t], score=0.8) for t in targets)
            unit.put(MemoryLinks(memory_id=ids[source], linked_to=links, processed_at=now))
    await assistant.request_approval(
        "delete_memory", {"memory_id": "mem_1"}, requested_by="an MCP client"
    )
    assistant.enqueue_event("Hello! What do you know about Alice?", source_entity="Dave")


@pytest.fixture
def dashboard(
    hub: AssistantHub, live_server: Callable[[FastAPI], Any], server_settings: Callable[..., Any]
) -> str:
    hub.create("barkeep")
    with ThreadPoolExecutor(1) as pool:  # Playwright's sync API owns this thread's loop
        pool.submit(asyncio.run, furnish(hub.get("barkeep"))).result()
    server = live_server(create_app(hub, server=server_settings(), background_ticks=False))
    return f"{server.url}/dashboard/"


@pytest.mark.parametrize("width", WIDTHS)
def test_every_tab_fits_and_keeps_its_text_readable(dashboard: str, page: Page, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{dashboard}#/overview?assistant=barkeep")
    expect(page.locator("#mode-badge")).to_have_text("awake")
    page.click("#tick-now")  # Dave's question: the Context tab shows that tick
    problems: list[str] = []
    for tab in TABS:
        page.locator(f"#tabs button[data-tab={tab}]").click()
        expect(page.locator("body")).to_have_attribute("data-loaded", tab)
        if tab == "context":
            page.locator("#tick-list li button").first.click()
            expect(page.locator("#tick-detail table.pattern")).to_contain_text("source layer")
        found = page.evaluate(MEASURE)
        if found["page"] > found["window"]:
            problems.append(f"{tab}: the page is {found['page']} px wide at {found['window']}")
        problems += [f"{tab}: {n}" for n in found["narrow"]]
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"dashboard-{width}px-{tab}.png"), full_page=True)
    assert problems == [], "\n".join(problems)
