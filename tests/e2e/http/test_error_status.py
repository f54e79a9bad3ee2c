"""HTTP statuses follow the error classes (``http_status``, by isinstance): an error a host
or a tool defines as a subclass of a mapped one gets its parent's status and the error
shape.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from mindspace.errors import (
    AlreadyExistsError,
    ConflictError,
    InvalidInputError,
    LLMError,
    NotFoundError,
    RecordNotFoundError,
)
from mindspace.hosts.http import AssistantHub, create_app
from mindspace.tools import default_registry
from mindspace.tools.base import Tool, ToolArgs, ToolCategory, ToolContext

A = "/v1/assistants/barkeep"


class GateNotFoundError(RecordNotFoundError):
    """A host's own missing record."""


class BadGateNameError(InvalidInputError):
    """A host's own input error."""


class GateExistsError(AlreadyExistsError):
    """A host's own duplicate."""


class OracleDownError(LLMError):
    """A host's own model failure."""


class UnknownGateError(NotFoundError):
    """A tool's own missing-record error (a ToolError)."""


class GateLockedError(ConflictError):
    """A tool's own conflict (a ToolError)."""


class _GateArgs(ToolArgs):
    gate: str


class OpenGateTool(Tool[_GateArgs]):
    """A host tool whose errors are subclasses of the built-in ones."""

    name = "open_gate"
    description = "Open a gate."
    category = ToolCategory.SAFE_CHAIN
    args_model = _GateArgs

    async def execute(self, ctx: ToolContext, args: _GateArgs) -> dict[str, Any]:
        if args.gate == "locked":
            raise GateLockedError(f"Gate {args.gate!r} is locked", "Unlock it first.")
        raise UnknownGateError(f"No gate {args.gate!r}", "List the gates first.")


_RAISED: dict[str, Exception] = {
    "missing": GateNotFoundError("No gate 'west'", "List the gates first.", pending=["east"]),
    "invalid": BadGateNameError("Gate name '' is blank", "Name the gate."),
    "exists": GateExistsError("Gate 'east' already exists"),
    "oracle": OracleDownError("the oracle is asleep"),
}


@pytest.fixture
async def api(
    make_hub: Callable[..., AssistantHub], server_settings: Callable[..., Any]
) -> AsyncIterator[httpx.AsyncClient]:
    registry = default_registry()
    registry.register(OpenGateTool())
    app = create_app(make_hub(tools=registry), server=server_settings(), background_ticks=False)

    async def fail(kind: str) -> None:
        raise _RAISED[kind]

    app.add_api_route("/v1/test-errors/{kind}", fail, methods=["GET"])
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        assert (await client.post("/v1/assistants", json={"key": "barkeep"})).status_code == 201
        yield client


@pytest.mark.parametrize(
    ("kind", "status", "error"),
    [
        ("missing", 404, "No gate 'west'"),
        ("invalid", 422, "Gate name '' is blank"),
        ("exists", 409, "Gate 'east' already exists"),
        ("oracle", 502, "the oracle is asleep"),
    ],
)
async def test_a_host_error_subclass_gets_its_parents_status(
    api: httpx.AsyncClient, kind: str, status: int, error: str
) -> None:
    response = await api.get(f"/v1/test-errors/{kind}")
    assert response.status_code == status
    body = response.json()
    assert body["success"] is False
    assert error in body["error"]
    assert body["suggestion"]


async def test_a_host_error_keeps_its_suggestion_and_extras(api: httpx.AsyncClient) -> None:
    body = (await api.get("/v1/test-errors/missing")).json()
    assert body == {
        "success": False,
        "error": "No gate 'west'",
        "suggestion": "List the gates first.",
        "pending": ["east"],
    }


@pytest.mark.parametrize(("gate", "status"), [("west", 404), ("locked", 409)])
async def test_a_tool_error_subclass_gets_its_parents_status(
    api: httpx.AsyncClient, gate: str, status: int
) -> None:
    response = await api.post(f"{A}/tools/open_gate", json={"gate": gate})
    assert response.status_code == status
    body = response.json()
    assert body["success"] is False
    assert repr(gate) in body["error"]
    assert body["suggestion"]
