"""The API contract, checked over every operation of the schema (routes added later too).

Every operation has a stable snake_case operation id, a named success model (or a
schema for a stream), the one error model on each error status it can answer, and
lists take ``offset``/``limit`` and answer ``total``/``offset``/``limit``. The answers
the server gives then match what the schema promises.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute

from mindspace.hosts.http.contract import ErrorBody, error_statuses

A = "/v1/assistants/barkeep"
_SNAKE = re.compile(r"^[a-z][a-z0-9_]*$")


def _ops(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, op)
        for path, item in schema["paths"].items()
        for method, op in item.items()
        if isinstance(op, dict) and "responses" in op
    ]


def _resolve(schema: dict[str, Any], ref: dict[str, Any]) -> dict[str, Any]:
    name = ref["$ref"].rsplit("/", 1)[-1]
    found: dict[str, Any] = schema["components"]["schemas"][name]
    return found


def _all_api_routes(app: FastAPI) -> list[APIRoute]:
    """Every APIRoute of the app, included routers too (FastAPI nests them)."""
    found: list[APIRoute] = []

    def walk(routes: list[Any]) -> None:
        for route in routes:
            if isinstance(route, APIRoute):
                found.append(route)
            original = getattr(route, "original_router", None)
            if original is not None:
                walk(list(original.routes))

    walk(list(app.routes))
    return found


def test_every_route_is_in_the_schema(app: FastAPI) -> None:
    schema = app.openapi()
    documented = {(m.upper(), p) for m, p, _ in _ops(schema)}
    for route in _all_api_routes(app):
        if not route.include_in_schema:
            continue
        for method in route.methods:
            assert any(method == m and p.endswith(route.path) for m, p in documented), (
                f"{method} {route.path} is missing from /openapi.json"
            )


def test_every_operation_keeps_the_contract(app: FastAPI) -> None:
    schema = app.openapi()
    ops = _ops(schema)
    assert len(ops) > 40
    assert "HTTPValidationError" not in schema["components"]["schemas"]
    ids = [op.get("operationId", "") for _, _, op in ops]
    assert len(set(ids)) == len(ids), "operation ids repeat"
    problems: list[str] = []
    for method, path, op in ops:
        where = f"{method.upper()} {path}"
        op_id = op.get("operationId", "")
        if not _SNAKE.match(op_id) or "_v1_" in op_id:
            problems.append(f"{where}: operation id {op_id!r} is not a stable snake_case name")
        responses: dict[str, Any] = op["responses"]
        success = [s for s in responses if s.startswith("2")]
        if len(success) != 1:
            problems.append(f"{where}: {len(success)} success responses")
            continue
        content = responses[success[0]].get("content", {})
        json_schema = content.get("application/json", {}).get("schema")
        if json_schema is not None and "$ref" not in json_schema:
            problems.append(f"{where}: the success body has no named model")
        if json_schema is None and not any(c.get("schema") for c in content.values()):
            problems.append(f"{where}: the success response has no schema")
        for status in sorted(error_statuses(method, op)):
            error = responses.get(str(status), {}).get("content", {}).get("application/json")
            if error is None or error["schema"] != {"$ref": "#/components/schemas/ErrorBody"}:
                problems.append(f"{where}: {status} is not documented with ErrorBody")
        for status, entry in responses.items():
            if status[0] in "45":
                error_schema = entry.get("content", {}).get("application/json", {}).get("schema")
                if error_schema != {"$ref": "#/components/schemas/ErrorBody"}:
                    problems.append(f"{where}: {status} has another error shape")
        if "requestBody" in op:
            body = op["requestBody"].get("content", {}).get("application/json", {})
            if "schema" not in body:
                problems.append(f"{where}: the request body has no schema")
        if method == "get" and json_schema is not None:
            model = _resolve(schema, json_schema)
            if model.get("x-document"):
                continue
            lists = [n for n, p in model.get("properties", {}).items() if p.get("type") == "array"]
            if lists:
                params = {p["name"] for p in op.get("parameters", []) if p["in"] == "query"}
                fields = set(model.get("properties", {}))
                if not {"offset", "limit"} <= params or not {"total", "offset", "limit"} <= fields:
                    problems.append(f"{where}: lists {lists} without offset/limit and total")
    assert not problems, "\n".join(problems)


def test_the_security_routes_document_401_and_403(app: FastAPI) -> None:
    schema = app.openapi()
    assert "401" not in schema["paths"]["/v1/health"]["get"]["responses"]
    for status in ("401", "403", "404", "409", "413", "422"):
        assert status in schema["paths"]["/v1/assistants"]["post"]["responses"]
    assert schema["paths"]["/v1/assistants/{key}/memories"]["get"]["operationId"] == (
        "list_memories"
    )
    assert schema["paths"]["/v1/assistants/{key}/goals"]["get"]["operationId"] == "get_goal_tree"


async def _create(client: httpx.AsyncClient) -> None:
    response = await client.post("/v1/assistants", json={"key": "barkeep"})
    assert response.status_code == 201, response.text


def _error(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    ErrorBody.model_validate(body)
    return body


async def test_every_422_has_one_shape(client: httpx.AsyncClient) -> None:
    await _create(client)
    bad_body = _error(await client.post(f"{A}/events", json={"contentx": "hi"}), 422)
    bad_args = _error(await client.post(f"{A}/tools/add_goal", json={"descriptionx": 1}), 422)
    bad_query = _error(await client.get(f"{A}/journal?limit=0"), 422)
    not_json = _error(await client.post(f"{A}/tools/add_goal", content=b"{oops"), 422)
    not_object = _error(await client.post(f"{A}/tools/add_goal", json=[1]), 422)
    too_deep = _error(await client.post(f"{A}/events", content=b"[" * 100 + b"]" * 100), 422)
    for body in (bad_body, bad_args, bad_query, not_json, not_object, too_deep):
        fields = {p["field"] for p in body["problems"]}
        assert fields, body
        assert all(p["message"] for p in body["problems"])
    assert {"content", "contentx"} <= {p["field"] for p in bad_body["problems"]}
    assert {"description", "descriptionx"} <= {p["field"] for p in bad_args["problems"]}
    assert {"query.limit"} == {p["field"] for p in bad_query["problems"]}
    assert not_json["problems"][0]["field"] == "body"
    assert too_deep["problems"][0]["type"] == "json_too_deep"
    # the tool result keeps the spec's field as well
    assert bad_args["invalid_fields"][0]["field"] == "description"


async def test_other_errors_have_the_error_shape(
    secured: httpx.AsyncClient, tokens: Any, client: httpx.AsyncClient
) -> None:
    _error(await secured.get("/v1/assistants"), 401)
    alice = {"Authorization": f"Bearer {tokens.alice}"}
    _error(await secured.get(A, headers=alice), 403)
    await _create(client)
    _error(await client.post("/v1/assistants", json={"key": "barkeep"}), 409)
    _error(await client.get(f"{A}/events/evt_missing"), 404)
    _error(await client.get("/v1/nowhere"), 404)
    _error(await client.post(f"{A}/events", content=b"x" * 2_000_000), 413)


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/v1/tools", "tools"),
        ("/v1/assistants", "assistants"),
        (f"{A}/events", "events"),
        (f"{A}/entities", "entities"),
        (f"{A}/memories", "memories"),
        (f"{A}/memories?query=ale", "memories"),
        (f"{A}/journal", "entries"),
    ],
)
async def test_lists_page_with_offset_limit_and_total(
    client: httpx.AsyncClient, path: str, field: str
) -> None:
    await _create(client)
    await client.post("/v1/assistants", json={"key": "cellar"})
    for n in range(3):
        sent = await client.post(
            f"{A}/events", json={"content": f"hi {n}", "source_entity": f"Guest{n}"}
        )
        assert sent.status_code == 202
        await client.post(f"{A}/tools/store_memory", json={"content": f"Guest{n} likes ale"})
        await client.post(f"{A}/tools/add_journal_entry", json={"content": f"Met Guest{n}"})
    for n in range(3):
        noted = await client.post(
            f"{A}/tools/update_entity_observation",
            json={"entity_id": f"Guest{n}", "observation": "orders ale"},
        )
        assert noted.status_code == 200, noted.text
    joiner = "&" if "?" in path else "?"
    whole = (await client.get(path)).json()
    total = whole["total"]
    assert total >= 2, whole
    assert len(whole[field]) == min(total, whole["limit"])
    page = (await client.get(f"{path}{joiner}offset=1&limit=1")).json()
    assert (page["total"], page["offset"], page["limit"]) == (total, 1, 1)
    assert page[field] == whole[field][1:2]
