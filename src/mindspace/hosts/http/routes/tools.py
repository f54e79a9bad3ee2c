"""Tools by name: ``POST /v1/assistants/{key}/tools/{name}`` with the arguments as the body.

Every built-in tool also gets its own documented path (the same handler), so the OpenAPI
schema carries each tool's argument schema; the ``{name}`` path serves any tool,
including those a host adds. The arguments are validated by the tool framework itself,
whose errors come back in the spec's result shape.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request

from mindspace.engine import assistant_tools
from mindspace.hosts.http.auth import KeyDep
from mindspace.hosts.http.errors import ApiError, http_tool_result
from mindspace.hosts.http.hub import AssistantHub
from mindspace.hosts.http.models import ToolResult
from mindspace.hosts.http.responses import SafeJSONResponse as JSONResponse

__all__ = ["router"]

router = APIRouter(prefix="/v1/assistants/{key}/tools", tags=["tools"])

_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"description": "The tool's result (success true)"},
    400: {"description": "The tool failed; the result says why"},
    404: {"description": "No such tool, or a missing goal, project or entry"},
    409: {"description": "Conflict with the current state"},
    422: {"description": "Invalid arguments (each field's problem is listed in 'problems')"},
    502: {"description": "The language model failed (a tool that calls it)"},
}


async def _arguments(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        parsed = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ApiError(
            422,
            f"The body is not valid JSON: {exc}",
            'Send the tool\'s arguments as one JSON object, e.g. {"description": "..."}.',
        ) from None
    if not isinstance(parsed, dict):
        raise ApiError(
            422,
            f"The body must be a JSON object of arguments, not {type(parsed).__name__}",
            "Wrap the arguments in {...}; GET /v1/tools lists each tool's parameters.",
        )
    return parsed


async def _run(key: str, name: str, request: Request) -> JSONResponse:
    hub: AssistantHub = request.app.state.hub
    arguments = await _arguments(request)
    outcome = await hub.get(key).run_tool(name, arguments)
    result = http_tool_result(outcome.result, outcome.http_status)
    return JSONResponse(result, status_code=outcome.http_status)


def _documented(name: str, description: str, schema: dict[str, Any]) -> None:
    async def call(key: KeyDep, request: Request) -> JSONResponse:
        return await _run(key, name, request)

    router.add_api_route(
        f"/{name}",
        call,
        methods=["POST"],
        summary=f"Call {name}",
        description=description,
        operation_id=f"tool_{name}",
        response_model=ToolResult,
        responses=_RESPONSES,
        openapi_extra={
            "requestBody": {
                "required": False,
                "content": {"application/json": {"schema": schema}},
            }
        },
    )


for _tool in assistant_tools().tools():
    _documented(_tool.name, _tool.description, _tool.args_model.model_json_schema())


@router.post(
    "/{name}",
    summary="Call any tool by name",
    response_model=ToolResult,
    responses=_RESPONSES,
    openapi_extra={
        "requestBody": {
            "required": False,
            "content": {"application/json": {"schema": {"type": "object"}}},
        }
    },
)
async def call_tool(
    key: KeyDep,
    name: Annotated[
        str, Path(min_length=1, max_length=64, description="The tool's name (GET /v1/tools).")
    ],
    request: Request,
) -> JSONResponse:
    """Run the tool in its own transaction and return its result in the spec's shape.

    A failed call returns the spec's error result (``success`` false, ``error``,
    ``suggestion``) with a 4xx status, and stores nothing.
    """
    return await _run(key, name, request)
