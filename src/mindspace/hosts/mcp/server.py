"""One assistant as a Model Context Protocol server: its tools and its state as resources.

Transport-agnostic: :func:`build_server` returns the SDK's low-level ``Server``, which
``mindspace mcp`` runs over stdio and ``mindspace serve`` mounts over streamable HTTP.
Which assistant a request reaches is the host's business (``assistant_for``): the stdio
command serves one, the HTTP mount takes the key from the path it authorised.

Every call goes through the :class:`~mindspace.engine.assistant.Assistant` facade, so a
call is validated, counted and committed exactly as over the HTTP API. A DANGEROUS tool
never runs from here: its call is recorded as a pending approval
(:meth:`~mindspace.engine.assistant.Assistant.request_approval`) and the result says how
an operator approves it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INVALID_PARAMS

from mindspace import __version__
from mindspace.engine import OPERATOR_EDITS, Assistant, OperatorEdit
from mindspace.errors import MindspaceError, ToolExecutionError
from mindspace.journal.search import JournalFilter
from mindspace.tools import ToolCategory
from mindspace.tools.registry import AnyTool

__all__ = [
    "CATEGORY_META_KEY",
    "RESOURCES",
    "AssistantFor",
    "ResourceName",
    "build_server",
    "resource_uri",
]

logger = logging.getLogger("mindspace.mcp")

AssistantFor = Callable[[ServerRequestContext[Any, Any]], Assistant]
"""Which assistant a request reaches (the stdio host serves one; HTTP reads the path)."""

ApprovalHint = Callable[[str, str], str]
"""``(assistant key, approval id) -> how an operator approves it``."""

CATEGORY_META_KEY = "mindspace/category"
"""The ``_meta`` key of a listed tool that carries its category (SAFE_CHAIN, DANGEROUS...)."""

ResourceName = Literal["goals", "session-memory", "journal", "memories", "entities", "history"]

_PAGE = 50
"""Entries the journal and memories resources hold (the newest)."""


@dataclass(frozen=True)
class _Resource:
    title: str
    description: str


RESOURCES: dict[ResourceName, _Resource] = {
    "goals": _Resource(
        "Goal tree", "Root goals with nested subtasks, each with status, priority and progress."
    ),
    "session-memory": _Resource(
        "Session memory", "Key facts, learned patterns and completed tasks of this session."
    ),
    "journal": _Resource(
        "Journal",
        f"The {_PAGE} newest journal entries, with importance, tags and reflection state.",
    ),
    "memories": _Resource(
        "Semantic memories", f"The {_PAGE} newest semantic memories (without their vectors)."
    ),
    "entities": _Resource(
        "Entities",
        "Every entity profile, most recently seen first: relationship, attributes, observations.",
    ),
    "history": _Resource(
        "History", f"The {_PAGE} newest recorded changes: who edited, deleted or forgot what."
    ),
}


def resource_uri(key: str, name: ResourceName) -> str:
    """The URI of resource ``name`` of assistant ``key``: ``mindspace://KEY/NAME``."""
    return f"mindspace://{key}/{name}"


def _default_hint(key: str, approval_id: str) -> str:
    return (
        f"An operator approves it in the dashboard of `mindspace serve` on this database, or "
        f"with POST /v1/assistants/{key}/approvals/{approval_id}/approve (reject: .../reject); "
        "the assistant is told the outcome on its next tick."
    )


def build_server(
    assistant_for: AssistantFor,
    *,
    approval_hint: ApprovalHint = _default_hint,
    requested_by: str = "an MCP client",
) -> Server[Any]:
    """The MCP server for the assistants ``assistant_for`` picks.

    Args:
        assistant_for: The assistant a request reaches; it raises ``MCPError`` to refuse.
        approval_hint: What a pending approval's result tells the client to do.
        requested_by: Who the approvals record as the caller.
    """

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        assistant = assistant_for(ctx)
        tools = [_tool(tool) for tool in assistant.tools.tools()]
        edits = [_edit_tool(name, edit) for name, edit in OPERATOR_EDITS.items()]
        return types.ListToolsResult(tools=sorted([*tools, *edits], key=lambda t: t.name))

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        assistant = assistant_for(ctx)
        result = await _call(assistant, params.name, params.arguments, requested_by)
        if result.get("status") == "awaiting_approval" and "approval_id" in result:
            result["how_to_approve"] = approval_hint(assistant.key, str(result["approval_id"]))
        return _tool_result(result)

    async def list_resources(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        key = assistant_for(ctx).key
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    name=name,
                    title=f"{resource.title} of {key!r}",
                    uri=resource_uri(key, name),
                    description=resource.description,
                    mime_type="application/json",
                )
                for name, resource in RESOURCES.items()
            ],
        )

    async def read_resource(
        ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        assistant = assistant_for(ctx)
        name = _resource_name(assistant.key, str(params.uri))
        body = _read(assistant, name)
        text = json.dumps(body, ensure_ascii=False, default=str)
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(
                    uri=str(params.uri), mime_type="application/json", text=text
                )
            ],
            # the state changes with every tool call and tick: never cache a read
            ttl_ms=0,
        )

    return Server(
        "mindspace",
        version=__version__,
        title="mindspace assistant",
        instructions=(
            "The tools and state of one long-lived mindspace assistant. Tool results use "
            "the spec's shape: success true with the result's fields, or success false "
            "with 'error' and 'suggestion'. DANGEROUS tools never run directly: their call "
            "waits for an operator's approval, as do edit_memory, delete_memory and "
            "forget_entity. Resources mindspace://KEY/goals, session-memory, journal, "
            "memories, entities and history hold its state as JSON."
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


def _tool(tool: AnyTool) -> types.Tool:
    category = tool.category
    # the schema the model sees (built once per tool)
    parameters = dict(tool.schema()["function"]["parameters"])
    description = tool.description
    if category is ToolCategory.DANGEROUS:
        description += (
            " [DANGEROUS: calling it records a request for approval; it runs only once an "
            "operator approves it.]"
        )
    return types.Tool(
        name=tool.name,
        description=description,
        input_schema=parameters,
        annotations=types.ToolAnnotations(
            # cacheable tools only read; for the rest we claim nothing
            read_only_hint=True if tool.cacheable else None,
            # MCP assumes destructive unless told: only DANGEROUS tools are
            destructive_hint=category is ToolCategory.DANGEROUS,
        ),
        meta={CATEGORY_META_KEY: category.value},
    )


def _edit_tool(name: str, edit: OperatorEdit) -> types.Tool:
    """A person's edit offered as a tool: DANGEROUS, so a call waits for approval."""
    schema = edit.schema()
    return types.Tool(
        name=name,
        description=f"{edit.description} [DANGEROUS: calling it records a request for "
        "approval; it runs only once an operator approves it, and the history names them.]",
        input_schema={
            "type": "object",
            "properties": schema["properties"],
            "required": schema.get("required", []),
            "additionalProperties": False,
        },
        annotations=types.ToolAnnotations(destructive_hint=True),
        meta={CATEGORY_META_KEY: ToolCategory.DANGEROUS.value},
    )


async def _call(
    assistant: Assistant, name: str, arguments: dict[str, Any] | None, requested_by: str
) -> dict[str, Any]:
    """The tool's result in the spec's shape, whatever happened."""
    try:
        tool = assistant.tools.get(name) if name in assistant.tools else None
        dangerous = tool is not None and tool.category is ToolCategory.DANGEROUS
        if dangerous or (tool is None and name in OPERATOR_EDITS):
            return await assistant.request_approval(
                name, arguments or {}, requested_by=requested_by
            )
        return await assistant.call_tool(name, arguments or {})
    except ToolExecutionError as exc:
        logger.exception("Tool %r crashed during an MCP call", name)
        return {
            "success": False,
            "error": f"Tool {name!r} failed with an internal error: {exc.__cause__!r}",
            "suggestion": "Try a different approach; the error was logged for the developer.",
        }
    except MindspaceError as exc:  # e.g. ConcurrencyError: the call stored nothing
        return {
            "success": False,
            "error": str(exc),
            "suggestion": getattr(exc, "suggestion", "") or "Call the tool again.",
        }


def _tool_result(result: dict[str, Any]) -> types.CallToolResult:
    """The spec's result as MCP content: JSON text, the same dict as structured content."""
    return types.CallToolResult(
        content=[
            types.TextContent(text=json.dumps(result, ensure_ascii=False, default=str)),
        ],
        structured_content=json.loads(json.dumps(result, default=str)),
        is_error=result.get("success") is not True,
    )


def _resource_name(key: str, uri: str) -> ResourceName:
    for name in RESOURCES:
        if uri == resource_uri(key, name):
            return name
    known = ", ".join(resource_uri(key, n) for n in RESOURCES)
    raise MCPError(
        INVALID_PARAMS,
        f"Unknown resource {uri!r}. This server has: {known}.",
        {"uri": uri},
    )


def _read(assistant: Assistant, name: ResourceName) -> dict[str, Any]:
    views = assistant.views
    if name == "goals":
        return views.goal_tree()
    if name == "session-memory":
        return {"success": True, **views.session_memory().model_dump(mode="json")}
    if name == "journal":
        return views.journal_page(JournalFilter(), limit=_PAGE)
    if name == "entities":
        return views.entities_view()
    if name == "history":
        page = views.history(limit=_PAGE)
        entries = [e.model_dump(mode="json") for e in page.entries]
        return {"success": True, "total": page.total, "entries": entries}
    return views.memory_page(limit=_PAGE)
