"""The SSE stream over a real uvicorn server, and the background ticks' schedule
(the engine's AsyncTickDriver over the hub)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
from fastapi import FastAPI

from mindspace import Settings
from mindspace.engine.scheduler import AsyncTickDriver, TickPolicy
from mindspace.hosts.http import AssistantHub, create_app
from mindspace.llm.providers.openai_compat import OpenAICompatibleLLM
from mindspace.testing import ChatCompletionsServer


async def _read_events(response: httpx.Response, count: int) -> list[tuple[str, dict[str, Any]]]:
    events: list[tuple[str, dict[str, Any]]] = []
    kind = ""
    async for line in response.aiter_lines():
        if line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("data: "):
            events.append((kind, json.loads(line[6:])))
            if len(events) >= count:
                break
    return events


async def test_the_stream_shows_a_tick_live(
    hub: AssistantHub,
    live_server: Callable[[FastAPI], Any],
    server_settings: Callable[..., Any],
) -> None:
    hub.create("barkeep")
    app = create_app(hub, server=server_settings(), background_ticks=False)
    server = live_server(app)
    base = f"{server.url}/v1/assistants/barkeep"
    async with (
        httpx.AsyncClient(timeout=30) as client,
        client.stream("GET", f"{base}/stream", params={"limit": 7}) as stream,
    ):
        assert stream.status_code == 200
        assert stream.headers["content-type"].startswith("text/event-stream")
        sent = await client.post(
            f"{base}/events",
            json={"content": "Can you find the amulet?", "source_entity": "Bo"},
        )
        ticked = await client.post(f"{base}/tick")
        assert ticked.json()["status"] == "done"
        events = await asyncio.wait_for(_read_events(stream, 8), timeout=30)
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "hello"
    assert kinds[1:] == [
        "event_queued",
        "tick_started",
        "tool_called",
        "tool_called",
        "reply",
        "tick_finished",
        "tick_recorded",
    ]
    reply = dict(events)["reply"]
    assert reply["assistant"] == "barkeep"
    assert reply["data"]["event_id"] == sent.json()["event_id"]
    assert reply["data"]["text"].startswith("I'll see to it, Bo.")
    assert dict(events)["tool_called"]["data"]["tool"] == "decompose_goal"


async def test_streams_are_bounded(
    hub: AssistantHub,
    live_server: Callable[[FastAPI], Any],
    server_settings: Callable[..., Any],
) -> None:
    hub.create("barkeep")
    app = create_app(hub, server=server_settings(api_max_streams=1), background_ticks=False)
    server = live_server(app)
    url = f"{server.url}/v1/assistants/barkeep/stream"
    async with (
        httpx.AsyncClient(timeout=30) as client,
        client.stream("GET", url, params={"limit": 1}) as first,
    ):
        assert first.status_code == 200
        chunks = first.aiter_raw()  # keep a reference: a collected iterator closes it
        chunk = await asyncio.wait_for(anext(chunks), timeout=10)
        assert b"event: hello" in chunk  # the stream is open
        async with client.stream("GET", url) as second:
            assert second.status_code == 503
            body = json.loads(await asyncio.wait_for(second.aread(), timeout=10))
        assert "MINDSPACE_API_MAX_STREAMS" in body["suggestion"]


def _driver(hub: AssistantHub, now: list[float]) -> AsyncTickDriver:
    """The driver the app runs, on a schedule clock the test moves."""
    policy = TickPolicy(awake_rate=hub.settings.tick_rate_awake)
    return AsyncTickDriver(hub, policy, monotonic=lambda: now[0])


async def test_the_ticker_follows_each_tick_rate(hub: AssistantHub) -> None:
    now = [1000.0]
    ticker = _driver(hub, now)
    assistant = hub.create("barkeep")
    hub.create("bob")
    ticker.schedule()  # what the running loop does each turn
    assert sorted(ticker.run_due(now[0])) == ["barkeep", "bob"]  # new assistants tick at once
    await asyncio.wait_for(ticker.drain(), timeout=5)
    assert ticker.ticks_run == 2
    now[0] += 4.9
    assert ticker.run_due(now[0]) == []  # awake: every 5 s
    now[0] += 0.1
    assert sorted(ticker.run_due(now[0])) == ["barkeep", "bob"]
    await ticker.drain()
    await assistant.sleep("closing time")
    now[0] += 5
    assert sorted(ticker.run_due(now[0])) == ["barkeep", "bob"]  # the rate is read after a tick
    await ticker.drain()
    now[0] += 5
    assert ticker.run_due(now[0]) == ["bob"]  # asleep: every 60 s
    await ticker.drain()
    now[0] += 55
    assert "barkeep" in ticker.run_due(now[0])
    await ticker.drain()
    assistant.enqueue_event("Another round?", source_entity="Bo")
    assert ticker.run_due(now[0]) == []  # asleep: an ordinary event waits for its turn
    assistant.enqueue_event("Fire in the cellar!", source_entity="Bo", metadata={"urgent": True})
    assert ticker.run_due(now[0]) == ["barkeep"]  # an urgent one is due at once
    await ticker.drain()
    await assistant.wake("morning")
    now[0] += 60
    assert sorted(ticker.run_due(now[0])) == ["barkeep", "bob"]
    await ticker.drain()
    for _ in range(3):  # a tick that answered an event is followed at once by the next
        if not ticker.run_due(now[0]):
            break
        await ticker.drain()
    assert assistant.views.open_events() == []
    assert ticker.run_due(now[0]) == []
    now[0] += 1
    hub.get("bob").enqueue_event("Hello?", source_entity="Bo")  # awake: any event is due now
    assert ticker.run_due(now[0]) == ["bob"]
    await ticker.drain()


async def test_ticks_never_overlap(
    make_hub: Callable[..., AssistantHub], settings: Settings
) -> None:
    with ChatCompletionsServer() as model:
        hold = model.hold()
        model.reply("Hello, Bob!")
        llm = OpenAICompatibleLLM(base_url=model.url, model="scripted", api_key="t", max_retries=0)
        hub = make_hub(llm=llm)
        assistant = hub.create("barkeep")
        assistant.enqueue_event("Hello?", source_entity="Bob")
        now = [0.0]
        ticker = _driver(hub, now)
        ticker.schedule()
        assert ticker.run_due(now[0]) == ["barkeep"]
        await asyncio.wait_for(asyncio.to_thread(hold.arrived.wait, 10), timeout=15)
        assert hub.is_ticking("barkeep")
        for step in (5.0, 60.0, 600.0):
            now[0] = step
            assert ticker.run_due(now[0]) == []  # still running: no second tick
        hold.release()
        await asyncio.wait_for(ticker.drain(), timeout=30)
    assert ticker.ticks_run == 1
    assert not hub.is_ticking("barkeep")


async def test_the_background_loop_answers_events(
    make_hub: Callable[..., AssistantHub],
    settings: Settings,
    live_server: Callable[[FastAPI], Any],
    server_settings: Callable[..., Any],
) -> None:
    fast = settings.model_copy(update={"tick_rate_awake": 0.2})
    hub = make_hub(settings_=fast)
    hub.create("barkeep")
    app = create_app(hub, server=server_settings())  # the ticker runs
    server = live_server(app)
    base = f"{server.url}/v1/assistants/barkeep"
    async with httpx.AsyncClient(timeout=30) as client:
        async with client.stream("GET", f"{base}/stream") as stream:
            sent = await client.post(f"{base}/events", json={"content": "Hello there."})
            event_id = sent.json()["event_id"]

            async def reply() -> dict[str, Any]:
                kind = ""
                async for line in stream.aiter_lines():
                    if line.startswith("event: "):
                        kind = line[7:]
                    elif line.startswith("data: ") and kind == "reply":
                        item: dict[str, Any] = json.loads(line[6:])
                        if item["data"]["event_id"] == event_id:
                            return item
                raise AssertionError("the stream ended without the reply")

            item = await asyncio.wait_for(reply(), timeout=30)
        assert item["data"]["text"] == "Hello, someone! What can I do for you?"
        event = (await client.get(f"{base}/events/{event_id}")).json()["event"]
        assert event["status"] == "done"
