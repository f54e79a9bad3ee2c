"""Health, the tool catalogue, and assistants: list, create, get."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from mindspace import __version__
from mindspace.engine import assistant_tools
from mindspace.hosts.http.auth import CallerDep, KeyDep
from mindspace.hosts.http.contract import Limit, Offset, page_of
from mindspace.hosts.http.errors import ApiError
from mindspace.hosts.http.models import AssistantList, AssistantOut, Health, ToolList
from mindspace.hosts.http.schemas import CreateAssistant, HubDep

__all__ = ["router"]

router = APIRouter(prefix="/v1")
server_routes = APIRouter(tags=["server"])
tool_routes = APIRouter(tags=["tools"])
assistant_routes = APIRouter(tags=["assistants"])


@server_routes.get("/health", summary="Is the server up (no token needed)", response_model=Health)
async def get_health() -> dict[str, Any]:
    """Always 200 while the server runs."""
    return {"success": True, "status": "ok", "version": __version__}


@tool_routes.get(
    "/tools", summary="Every tool, its category and parameters", response_model=ToolList
)
async def list_tools(caller: CallerDep, offset: Offset = 0, limit: Limit = 1000) -> dict[str, Any]:
    """The tools an assistant can call, with the JSON schema of their arguments."""
    tools, paging = page_of(assistant_tools().tools(), offset, limit)
    return {
        "success": True,
        **paging,
        "tools": [
            {
                "name": tool.name,
                "category": tool.category.value,
                "description": tool.description,
                "parameters": tool.args_model.model_json_schema(),
            }
            for tool in tools
        ],
    }


@assistant_routes.get(
    "/assistants", summary="The assistants this token may use", response_model=AssistantList
)
async def list_assistants(
    caller: CallerDep, hub: HubDep, offset: Offset = 0, limit: Limit = 1000
) -> dict[str, Any]:
    """Keys of the assistants in the store that the caller's token may use, sorted."""
    keys, paging = page_of(
        [key for key in hub.assistant_keys() if caller.allows(key)], offset, limit
    )
    return {"success": True, **paging, "assistants": keys}


@assistant_routes.post(
    "/assistants", status_code=201, summary="Create an assistant", response_model=AssistantOut
)
async def create_assistant(body: CreateAssistant, caller: CallerDep, hub: HubDep) -> dict[str, Any]:
    """Create the assistant ``key`` (409 if it exists)."""
    if not caller.allows(body.key):
        raise ApiError(
            403,
            f"This token may not use assistant {body.key!r}",
            "Use a token whose MINDSPACE_API_TOKENS entry names this key, or '*'.",
        )
    assistant = hub.create(body.key)
    return {"success": True, "assistant": assistant.views.summary()}


@assistant_routes.get(
    "/assistants/{key}", summary="One assistant at a glance", response_model=AssistantOut
)
async def get_assistant(key: KeyDep, hub: HubDep) -> dict[str, Any]:
    """Mode, token usage, session metrics and counts of everything it holds."""
    return {"success": True, "assistant": hub.get(key).views.summary()}


# Included after their routes are declared (include_router copies them); the tags are the
# sub-routers', so each route states only its own path, summary and answer.
router.include_router(server_routes)
router.include_router(tool_routes)
router.include_router(assistant_routes)
