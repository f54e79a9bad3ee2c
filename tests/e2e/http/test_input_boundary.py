"""The HTTP input boundary: bad text and deep JSON are refused with 422 in the error shape,
and every failed request - in every route family - stores nothing (issue 12)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from mindspace.hosts.http import AssistantHub, create_app
from mindspace.hosts.http.responses import SafeJSONResponse, safe_json_dumps
from mindspace.llm.providers.openai_compat import OpenAICompatibleLLM
from mindspace.testing import ChatCompletionsServer

Snapshot = Callable[[], dict[str, list[tuple[Any, ...]]]]
KEY = "barkeep"
BASE = f"/v1/assistants/{KEY}"
JSON = {"content-type": "application/json"}

# A lone surrogate as it travels in JSON: the escape is valid JSON, the text is not Unicode.
LONE = "\\ud800"


def _shape(response: httpx.Response) -> dict[str, Any]:
    body: dict[str, Any] = response.json()
    assert body["success"] is False
    assert isinstance(body["error"], str)
    assert body["error"]
    assert isinstance(body["suggestion"], str)
    assert body["suggestion"]
    return body


async def test_update_system_prompt_with_a_lone_surrogate_is_refused_and_ticks_keep_working(
    make_hub: Callable[..., AssistantHub], server_settings: Any, stored: Snapshot
) -> None:
    # Issue 12 item 1: this answered 500, stored the prompt, and every later tick with an
    # HTTP model raised UnicodeEncodeError.
    with ChatCompletionsServer() as model:
        llm = OpenAICompatibleLLM(base_url=model.url, model="scripted", api_key="test")
        hub = make_hub(llm=llm)
        hub.create(KEY)
        app = create_app(hub, server=server_settings(), background_ticks=False)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            before = stored()
            body = f'{{"new_prompt": "be kind {LONE} always", "reasoning": "kinder"}}'
            refused = await client.post(
                f"{BASE}/tools/update_system_prompt", content=body, headers=JSON
            )
            assert refused.status_code == 422
            error = _shape(refused)["error"]
            assert "new_prompt" in error
            assert "lone surrogate" in error
            assert stored() == before

            model.reply("Welcome in!")
            queued = await client.post(f"{BASE}/events", json={"content": "Hello"})
            assert queued.status_code == 202
            ticked = await client.post(f"{BASE}/tick")
            assert ticked.status_code == 200
            assert ticked.json()["status"] == "done"
            assert ticked.json()["reply"] == "Welcome in!"


# One failing request per route family (routes/assistants, events, tools, state, control,
# stream, ticks): each is refused in the error shape and leaves every table as it was.
FAILING: list[tuple[str, str, str | None, int]] = [
    ("POST", "/v1/assistants", f'{{"key": "bar{LONE}"}}', 422),
    ("POST", "/v1/assistants", '{"key": "barkeep"}', 409),
    ("POST", "/v1/assistants", '{"key": ' + "[" * 3_000 + "]" * 3_000 + "}", 422),
    ("POST", f"{BASE}/events", f'{{"content": "hi {LONE}"}}', 422),
    ("POST", f"{BASE}/events", f'{{"content": "hi", "metadata": {{"topic": "{LONE}"}}}}', 422),
    ("POST", f"{BASE}/events", f'{{"content": "hi", "source_entity": "A{LONE}"}}', 422),
    ("POST", f"{BASE}/events", '{"content": "' + "x" * 16_001 + '"}', 422),
    ("POST", f"{BASE}/events", '{"content": "hi", "metadata": ' + "{" * 100 + "}" * 100 + "}", 422),
    ("POST", f"{BASE}/tools/add_goal", f'{{"description": "Fix {LONE}"}}', 422),
    (
        "POST",
        f"{BASE}/tools/store_memory",
        '{"content": "ok", "source_entity": "' + "a" * 200 + '"}',
        422,
    ),
    ("POST", f"{BASE}/tools/go_to_sleep", '{"reason": "' + "r" * 1_001 + '"}', 422),
    ("POST", f"{BASE}/tools/add_journal_entry", f'{{"content": "c", "tags": ["{LONE}"]}}', 422),
    ("POST", f"{BASE}/tools/no_such_tool", "{}", 404),
    ("POST", f"{BASE}/tools/add_goal", "[" * 100_000 + "]" * 100_000, 422),
    ("POST", f"{BASE}/tools/add_goal", "{not json", 422),
    ("GET", f"{BASE}/journal?limit=0", None, 422),
    ("GET", f"{BASE}/memories?query=" + "q" * 501, None, 422),
    ("GET", f"{BASE}/entities/nobody", None, 404),
    ("POST", f"{BASE}/sleep", f'{{"reason": "tired {LONE}"}}', 422),
    (
        "POST",
        f"{BASE}/sleep",
        '{"reason": "tired", "deep": ' + "[" * 100_000 + "]" * 100_000 + "}",
        422,
    ),
    ("POST", f"{BASE}/wake", f'{{"reason": "{LONE}"}}', 422),
    ("POST", f"{BASE}/approvals/appr_missing/approve", '{"decided_by": "ops"}', 404),
    ("POST", f"{BASE}/approvals/appr_missing/reject", f'{{"decided_by": "{LONE}"}}', 422),
    ("GET", f"{BASE}/stream?limit=0", None, 422),
    ("POST", f"{BASE}/tick", "[" * 100_000 + "]" * 100_000, 422),
    ("GET", f"{BASE}/ticks/0", None, 422),
]


@pytest.mark.parametrize(
    ("method", "path", "body", "status"),
    FAILING,
    ids=[
        f"{i:02d}-{m} {p.split('?')[0][len(BASE) :] or p}" for i, (m, p, _, _) in enumerate(FAILING)
    ],
)
async def test_a_failed_request_is_refused_in_the_error_shape_and_stores_nothing(
    hub: AssistantHub,
    client: httpx.AsyncClient,
    stored: Snapshot,
    method: str,
    path: str,
    body: str | None,
    status: int,
) -> None:
    hub.create(KEY)
    await client.post(f"{BASE}/tools/add_goal", json={"description": "Fix the gate"})
    before = stored()
    response = await client.request(method, path, content=body, headers=JSON if body else None)
    assert response.status_code == status, response.text[:500]
    _shape(response)
    assert stored() == before


async def test_a_body_nested_100000_deep_gets_422_naming_the_limit(
    hub: AssistantHub, client: httpx.AsyncClient
) -> None:
    hub.create(KEY)
    response = await client.post(
        f"{BASE}/events", content="[" * 100_000 + "]" * 100_000, headers=JSON
    )
    assert response.status_code == 422
    assert "deeper than 64 levels" in _shape(response)["error"]


async def test_brackets_inside_strings_do_not_count_as_nesting(
    hub: AssistantHub, client: httpx.AsyncClient
) -> None:
    hub.create(KEY)
    text = "[[{" * 200
    response = await client.post(f"{BASE}/tools/add_goal", json={"description": text[:500]})
    assert response.status_code == 200, response.text
    assert response.json()["goal"]["description"] == text[:500]


def test_a_response_holding_a_lone_surrogate_still_renders_as_valid_json() -> None:
    # Defence in depth: text stored before the boundary existed must not turn a committed
    # change into a 500 while its response is encoded.
    content = {"success": True, "new_prompt": "be kind \ud800 always", "name": "Zoë"}
    rendered = SafeJSONResponse(content).body
    assert json.loads(rendered) == content
    assert json.loads(safe_json_dumps(content)) == content
    plain = SafeJSONResponse({"name": "Zoë"}).body
    assert "Zoë".encode() in plain  # ordinary text stays readable UTF-8
