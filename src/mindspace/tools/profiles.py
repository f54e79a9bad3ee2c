"""Tool profiles: which tool definitions a request lists, and how long they are.

``full`` lists every tool the context offers with its full description and JSON schema
(about 5,500 tokens for the 19 tools of an event tick). A small local model cannot use
that many: it drowns in them, and at 60-150 prompt tokens/s on a CPU they alone take
a minute per request. ``compact`` lists a few core tools with a short description and
a bare schema (the required parameters' names and types) and one ``more_tools`` entry, which
answers with the other tools the context allows; the model may then call any of them
by name (the loop still checks every call against the context's tools and the tool's
full argument model). A context offering :data:`COMPACT_LIST_ALL` tools or fewer (the
sleep and reflection contexts) lists them all, compactly.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from mindspace.llm.port import ToolSchema
from mindspace.tools.base import Tool

__all__ = [
    "COMPACT_CORE",
    "COMPACT_LIST_ALL",
    "MORE_TOOLS",
    "ToolProfile",
    "compact_schema",
    "listed_schemas",
    "more_tools_result",
]

ToolProfile = Literal["full", "compact"]

MORE_TOOLS = "more_tools"
"""The compact profile's entry for every tool it does not list."""

COMPACT_LIST_ALL = 6
"""A context offering this many tools or fewer lists them all under ``compact``."""

COMPACT_CORE: dict[str, str] = {
    "recall_memories": "Search your long-term memory for facts.",
    "store_memory": "Remember a fact for the long term.",
    "update_entity_observation": "Note something about a person.",
    "add_goal": "Start tracking a goal.",
    "update_goal": "Set a goal's progress (0-100) or status.",
    "noop": "Do nothing this turn.",
}
"""The tools ``compact`` lists, with their short descriptions."""

_MORE_TOOLS_SCHEMA: ToolSchema = {
    "type": "function",
    "function": {
        "name": MORE_TOOLS,
        "description": "List your other tools (projects, journal, goals, settings); "
        "then call one by name.",
        "parameters": {"type": "object", "properties": {}},
    },
}

_KEPT_KEYS = ("type", "enum", "items", "properties", "required")


def listed_schemas(
    tools: Sequence[Tool[Any]], profile: ToolProfile
) -> tuple[list[ToolSchema], bool]:
    """The definitions a request lists for the offered ``tools``, and whether
    ``more_tools`` is among them."""
    if profile == "full":
        return [t.schema() for t in tools], False
    if len(tools) <= COMPACT_LIST_ALL:
        return [compact_schema(t) for t in tools], False
    core = [compact_schema(t) for t in tools if t.name in COMPACT_CORE]
    return [*core, json.loads(json.dumps(_MORE_TOOLS_SCHEMA))], True


def compact_schema(tool: Tool[Any]) -> ToolSchema:
    """``tool`` with a short description and a bare parameter schema."""
    full = tool.schema()["function"]
    description = COMPACT_CORE.get(tool.name) or _first_sentence(str(full["description"]))
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": description,
            "parameters": _required_only(_bare(full.get("parameters") or {})),
        },
    }


def more_tools_result(tools: Sequence[Tool[Any]], listed: Sequence[str]) -> dict[str, Any]:
    """What ``more_tools`` answers: every offered tool not listed, with its parameters."""
    shown = set(listed)
    rest = [t for t in tools if t.name not in shown]
    return {
        "success": True,
        "tools": [
            {
                "name": t.name,
                "description": _first_sentence(t.description),
                "parameters": _signature(t.schema()["function"].get("parameters") or {}),
            }
            for t in rest
        ],
        "how": "Call one by its name with its arguments; a parameter ending in '?' is optional.",
    }


def _signature(parameters: dict[str, Any]) -> dict[str, str]:
    """``{"name": "type"}`` per parameter, ``"type?"`` when optional: the shortest form
    that still says what to send (a loop's tool result is cut at 4,000 characters)."""
    required = set(parameters.get("required") or ())
    out: dict[str, str] = {}
    for name, sub in (_bare(parameters).get("properties") or {}).items():
        kind = sub.get("type", "string") if isinstance(sub, dict) else "string"
        if isinstance(sub, dict) and sub.get("enum"):
            kind = "|".join(str(v) for v in sub["enum"])
        out[name] = f"{kind}{'' if name in required else '?'}"
    return out


def _required_only(parameters: dict[str, Any]) -> dict[str, Any]:
    """Only the required properties: the optional ones stay callable (``more_tools``
    lists them), but a small model reads every token of every request."""
    required = parameters.get("required") or []
    properties = parameters.get("properties") or {}
    kept = {name: sub for name, sub in properties.items() if name in required}
    return {**parameters, "properties": kept}


def _first_sentence(text: str) -> str:
    head, dot, _ = text.partition(". ")
    return head + ("." if dot else "")


def _bare(schema: Any) -> Any:
    """A JSON schema without titles, descriptions, bounds and defaults; an optional
    field's ``anyOf [X, null]`` becomes X."""
    if not isinstance(schema, dict):
        return schema
    options = schema.get("anyOf")
    if isinstance(options, list):
        real = [o for o in options if not (isinstance(o, dict) and o.get("type") == "null")]
        if len(real) == 1:
            return _bare(real[0])
    out: dict[str, Any] = {}
    for key in _KEPT_KEYS:
        if key not in schema:
            continue
        value = schema[key]
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _bare(sub) for name, sub in value.items()}
        elif key == "items":
            out[key] = _bare(value)
        else:
            out[key] = value
    if not out:
        out["type"] = "string"  # a schema of $refs or unions: say something simple
    return out
