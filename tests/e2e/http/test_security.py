"""Tokens, the allow-list, size limits, the loopback rule; nothing stored from rejected requests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from mindspace.errors import ConfigError
from mindspace.hosts.http import AssistantHub, TokenPolicy, create_app
from mindspace.hosts.http.server import check_listen_address
from mindspace.hosts.http.settings import is_loopback, parse_token_list

TOKEN_ALL = "all-assistants-token-0123456789"  # as in conftest.py
TOKEN_ALICE = "alice-only-token-0123456789abc"

Snapshot = Callable[[], dict[str, list[tuple[Any, ...]]]]


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def two_assistants(hub: AssistantHub) -> None:
    hub.create("alice")
    hub.create("bob")


async def test_no_token_is_401_with_a_challenge(
    secured: httpx.AsyncClient, two_assistants: None
) -> None:
    for response in (
        await secured.get("/v1/assistants"),
        await secured.get("/v1/assistants/alice/goals"),
        await secured.post("/v1/assistants/alice/events", json={"content": "hi"}),
        await secured.get("/v1/assistants/alice/goals", headers=bearer("wrong-token-123456789")),
        await secured.get("/v1/assistants/alice/goals", headers={"Authorization": "Basic eDp5"}),
    ):
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Bearer")
        body = response.json()
        assert body["success"] is False
        assert "MINDSPACE_API_TOKEN" in body["suggestion"]
    assert (await secured.get("/v1/health")).status_code == 200


async def test_a_token_sees_only_its_assistants(
    secured: httpx.AsyncClient, two_assistants: None
) -> None:
    listed = await secured.get("/v1/assistants", headers=bearer(TOKEN_ALICE))
    assert listed.json()["assistants"] == ["alice"]
    everyone = await secured.get("/v1/assistants", headers=bearer(TOKEN_ALL))
    assert everyone.json()["assistants"] == ["alice", "bob"]
    own = await secured.get("/v1/assistants/alice/goals", headers=bearer(TOKEN_ALICE))
    assert own.status_code == 200
    for response in (
        await secured.get("/v1/assistants/bob/goals", headers=bearer(TOKEN_ALICE)),
        await secured.get("/v1/assistants/ghost/goals", headers=bearer(TOKEN_ALICE)),
        await secured.get("/v1/assistants/bob/stream", headers=bearer(TOKEN_ALICE)),
        await secured.post("/v1/assistants", json={"key": "carol"}, headers=bearer(TOKEN_ALICE)),
    ):
        assert response.status_code == 403
        assert response.json()["success"] is False
        assert "may not use assistant" in response.json()["error"]
    assert (await secured.get("/v1/assistants/bob", headers=bearer(TOKEN_ALL))).status_code == 200


async def test_rejected_requests_store_nothing(
    secured: httpx.AsyncClient, two_assistants: None, stored: Snapshot
) -> None:
    before = stored()
    huge = {"content": "x" * (2 * 1024 * 1024), "source_entity": "Mallory"}
    attempts = [
        secured.post("/v1/assistants/bob/events", json={"content": "hi"}),
        secured.post(
            "/v1/assistants/bob/events", json={"content": "hi"}, headers=bearer(TOKEN_ALICE)
        ),
        secured.post(
            "/v1/assistants/bob/tools/add_goal",
            json={"description": "Steal the ale"},
            headers=bearer(TOKEN_ALICE),
        ),
        secured.post("/v1/assistants/bob/sleep", headers=bearer(TOKEN_ALICE)),
        secured.post("/v1/assistants", json={"key": "mallory"}),
        secured.post("/v1/assistants/alice/events", json=huge, headers=bearer(TOKEN_ALICE)),
        secured.post(
            "/v1/assistants/alice/events",
            json={"content": "hi", "metadata": {"priority": 99}},
            headers=bearer(TOKEN_ALICE),
        ),
        secured.post(
            "/v1/assistants/alice/tools/add_goal",
            json={"description": "x" * 600},
            headers=bearer(TOKEN_ALICE),
        ),
    ]
    statuses = [(await attempt).status_code for attempt in attempts]
    assert statuses == [401, 403, 403, 403, 401, 413, 422, 422]
    assert stored() == before


async def test_a_2mb_event_body_gets_413(secured_app: FastAPI, two_assistants: None) -> None:
    transport = httpx.ASGITransport(app=secured_app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        body = b'{"content": "' + b"a" * (2 * 1024 * 1024) + b'"}'
        declared = await client.post(
            "/v1/assistants/alice/events",
            content=body,
            headers={**bearer(TOKEN_ALL), "content-type": "application/json"},
        )
        assert declared.status_code == 413
        assert declared.json()["success"] is False
        assert "1,048,576" in declared.json()["error"]

        async def chunks() -> AsyncIterator[bytes]:
            for _ in range(32):
                yield b"a" * 65_536

        chunked = await client.post(
            "/v1/assistants/alice/events",
            content=chunks(),
            headers={**bearer(TOKEN_ALL), "content-type": "application/json"},
        )
        assert chunked.status_code == 413


async def test_413_over_a_real_socket(
    hub: AssistantHub,
    live_server: Callable[[FastAPI], Any],
    stored: Snapshot,
    server_settings: Callable[..., Any],
) -> None:
    hub.create("alice")
    app = create_app(hub, server=server_settings(api_token=TOKEN_ALL), background_ticks=False)
    server = live_server(app)
    before = stored()
    async with httpx.AsyncClient(base_url=server.url, headers=bearer(TOKEN_ALL)) as client:
        too_big = await client.post(
            "/v1/assistants/alice/events", json={"content": "z" * (2 * 1024 * 1024)}
        )
        assert too_big.status_code == 413
        assert too_big.json()["success"] is False
    assert stored() == before
    async with httpx.AsyncClient(base_url=server.url) as anonymous:
        assert (await anonymous.get("/v1/assistants/alice")).status_code == 401


def test_token_lists_are_parsed_and_checked() -> None:
    grants = parse_token_list(f"{TOKEN_ALICE}=alice, bob ; {TOKEN_ALL}=*")
    assert grants[0].allows("alice")
    assert grants[0].allows("bob")
    assert not grants[0].allows("carol")
    assert grants[1].allows("anyone")
    policy = TokenPolicy(grants)
    assert policy.grant_for(TOKEN_ALICE) is grants[0]
    assert policy.grant_for("nope") is None
    for bad, message in (
        ("short=alice", "at least 16"),
        (f"{TOKEN_ALICE}", "is not 'token=key1,key2'"),
        (f"{TOKEN_ALICE}=", "lists no assistant keys"),
    ):
        with pytest.raises(ConfigError, match=message) as caught:
            parse_token_list(bad)
        assert TOKEN_ALICE not in str(caught.value)  # never echo a token


def test_no_token_means_loopback_only(server_settings: Callable[..., Any]) -> None:
    assert is_loopback("127.0.0.1")
    assert is_loopback("localhost")
    assert is_loopback("::1")
    assert not is_loopback("0.0.0.0")
    assert not is_loopback("192.168.1.5")
    assert check_listen_address("127.0.0.1", server_settings()).open
    with pytest.raises(ConfigError, match=r"Refusing to listen on '0\.0\.0\.0' without a token"):
        check_listen_address("0.0.0.0", server_settings())
    secured = check_listen_address("0.0.0.0", server_settings(api_token=TOKEN_ALL))
    assert not secured.open
