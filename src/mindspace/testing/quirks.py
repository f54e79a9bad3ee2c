"""Quirk modes of the test chat-completions server: how real servers misbehave.

Each :class:`Quirk` emulates something a real OpenAI-compatible server does, so that
the adapter, the ReAct loop and ``mindspace doctor`` can be tested against it. The
Messages-API server (:mod:`mindspace.testing.messages_server`) takes the same modes,
in its own protocol's shapes (``length`` answers ``stop_reason: "max_tokens"``):

* ``text_tool_calls_json``: a scripted tool call comes back as text in ``content``, a
  bare JSON object ``{"name": ..., "arguments": {...}}`` per call (one per line), with
  no ``tool_calls`` field and ``finish_reason: "stop"`` (many small local models).
* ``text_tool_calls_tags``: the same, each call wrapped as
  ``<tool_call>\\n{...}\\n</tool_call>`` (Hermes and Qwen chat templates).
* ``text_tool_calls_fenced``: the same, each call in a fenced block ```` ```json ````.
* ``tools_need_tool_choice``: as llama-cpp-python's ``chatml-function-calling``, tools
  are rendered only when the request sets ``tool_choice``. A request that offers tools
  without ``tool_choice`` gets a scripted tool-call step answered as plain text: the
  step's own content, or :data:`UNRENDERED_TOOLS_REPLY` when it has none, with no
  ``tool_calls`` and ``finish_reason: "stop"``.
* ``drops_tools``: as ``llama-server --jinja`` with a chat template that has no tool
  section, the tools never reach the model: the request is answered as if it offered
  none (``respond`` sees no ``tools``, ``usage`` counts none) and a scripted tool-call
  step comes back as prose that names the tool (:data:`DROPPED_TOOLS_REPLY`).
* ``length``: content longer than ``length_words`` words is cut to that many words and
  answered with ``finish_reason: "length"`` (tool calls are left alone).
* ``no_usage``: answers carry no ``usage`` field.
* ``loading``: the first ``loading_requests`` requests (any route) answer
  ``503 {"error": {"message": "Loading model"}}``, as llama.cpp does while it loads.
* ``slow``: every request waits ``slow_seconds`` on the server before it is answered.
* ``bad_json``: chat completions answer 200 with the body ``not json {`` (declared as
  ``application/json``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = [
    "BAD_JSON_BODY",
    "DROPPED_TOOLS_REPLY",
    "TEXT_TOOL_QUIRKS",
    "UNRENDERED_TOOLS_REPLY",
    "Quirk",
    "QuirkSettings",
    "apply_message_quirks",
    "tools_rendered",
]


class Quirk(StrEnum):
    """A way a real server misbehaves (see the module docstring for each)."""

    TEXT_TOOL_CALLS_JSON = "text_tool_calls_json"
    TEXT_TOOL_CALLS_TAGS = "text_tool_calls_tags"
    TEXT_TOOL_CALLS_FENCED = "text_tool_calls_fenced"
    TOOLS_NEED_TOOL_CHOICE = "tools_need_tool_choice"
    DROPS_TOOLS = "drops_tools"
    LENGTH = "length"
    NO_USAGE = "no_usage"
    LOADING = "loading"
    SLOW = "slow"
    BAD_JSON = "bad_json"


TEXT_TOOL_QUIRKS = frozenset(
    {Quirk.TEXT_TOOL_CALLS_JSON, Quirk.TEXT_TOOL_CALLS_TAGS, Quirk.TEXT_TOOL_CALLS_FENCED}
)
"""The quirks that write tool calls as text instead of ``tool_calls``."""

UNRENDERED_TOOLS_REPLY = "I would use a tool for that, but I have none."
"""What ``tools_need_tool_choice`` answers to a tool-call step that has no content."""

DROPPED_TOOLS_REPLY = "I would call {name} for that, but I have no tools."
"""What ``drops_tools`` answers to a tool-call step (prose that merely names the tool)."""

BAD_JSON_BODY = b"not json {"
"""The body ``bad_json`` sends with status 200."""


@dataclass(frozen=True)
class QuirkSettings:
    """The knobs of the quirks that take one.

    Attributes:
        length_words: Words kept by ``length``.
        loading_requests: Requests answered 503 by ``loading``.
        slow_seconds: Server-side delay per request under ``slow``.
    """

    length_words: int = 5
    loading_requests: int = 2
    slow_seconds: float = 0.2


def _text_call(quirk: Quirk, call: Mapping[str, Any]) -> str:
    arguments = call.get("arguments", {})
    # Arguments scripted as text (perhaps deliberately broken JSON) are written verbatim.
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    body = f'{{"name": {json.dumps(call["name"])}, "arguments": {raw}}}'
    if quirk is Quirk.TEXT_TOOL_CALLS_TAGS:
        return f"<tool_call>\n{body}\n</tool_call>"
    if quirk is Quirk.TEXT_TOOL_CALLS_FENCED:
        return f"```json\n{body}\n```"
    return body


def tools_rendered(quirks: frozenset[Quirk], request: Mapping[str, Any]) -> bool:
    """Whether the request's tools reach the model (and count in its prompt tokens)."""
    if not request.get("tools") or Quirk.DROPS_TOOLS in quirks:
        return False
    return Quirk.TOOLS_NEED_TOOL_CHOICE not in quirks or "tool_choice" in request


def apply_message_quirks(
    quirks: frozenset[Quirk],
    settings: QuirkSettings,
    request: Mapping[str, Any],
    content: str | None,
    tool_calls: Sequence[Mapping[str, Any]],
) -> tuple[str | None, Sequence[Mapping[str, Any]], str]:
    """Rewrite one scripted answer as a quirky server would send it.

    Args:
        quirks: The server's quirk modes.
        settings: Their knobs.
        request: The request body (to see ``tools`` and ``tool_choice``).
        content: The scripted text.
        tool_calls: The scripted calls, ``{"name": ..., "arguments": ...}``.

    Returns:
        The content, the native tool calls and the ``finish_reason`` to send.
    """
    if Quirk.DROPS_TOOLS in quirks and tool_calls:
        return content or DROPPED_TOOLS_REPLY.format(name=tool_calls[0]["name"]), (), "stop"
    if (
        Quirk.TOOLS_NEED_TOOL_CHOICE in quirks
        and tool_calls
        and request.get("tools")
        and "tool_choice" not in request
    ):
        return content or UNRENDERED_TOOLS_REPLY, (), "stop"
    text_quirk = next((q for q in Quirk if q in quirks and q in TEXT_TOOL_QUIRKS), None)
    if text_quirk is not None and tool_calls:
        parts = [content] if content else []
        parts.extend(_text_call(text_quirk, call) for call in tool_calls)
        return "\n".join(parts), (), "stop"
    finish = "tool_calls" if tool_calls else "stop"
    if Quirk.LENGTH in quirks and content is not None:
        words = content.split()
        if len(words) > settings.length_words:
            return " ".join(words[: settings.length_words]), tool_calls, "length"
    return content, tool_calls, finish
