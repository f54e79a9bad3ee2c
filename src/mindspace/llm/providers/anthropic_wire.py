"""Our chat messages and tools in the Messages API's shapes, and its answers in ours.

Pure functions (no SDK, no I/O), so that the mapping is tested on its own. What the
Messages API requires, and what these functions do about it:

* There is no ``system`` role: every system message (the prompt's sections, wherever
  the context assembly put them, and compaction summaries) goes, in order and separated
  by a blank line, into the top-level ``system`` parameter.
* Turns alternate: consecutive messages of one role are merged into one turn, and tool
  results (``tool_result`` blocks) travel in a user turn, before any text in it.
* Every ``tool_use`` block must be answered by a ``tool_result`` in the next turn, and
  every ``tool_result`` must answer one: a call whose result was trimmed away gets a
  result saying so, a result whose call was trimmed away becomes text.
* A request that offers no tools may not hold tool blocks at all (the ReAct loop asks
  for a continuation without tools): then calls and results are written as text.
* Text blocks may not be empty or white space only: such text is left out. The first
  turn must be the user's: a conversation that starts with the assistant gets a short
  user turn in front.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mindspace.llm.port import FinishReason, LLMResponse, Message, ToolCall, ToolSchema, Usage

__all__ = [
    "ANTHROPIC_BASE_URL",
    "CONTINUES",
    "MISSING_RESULT",
    "MalformedAnswerError",
    "WireRequest",
    "from_wire",
    "to_wire",
    "to_wire_tools",
]

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
"""Anthropic's API root (the default ``MINDSPACE_LLM_BASE_URL`` of the ``anthropic`` provider);
here, without the SDK, so that ``mindspace doctor`` can name it."""

CONTINUES = "(The conversation continues.)"
"""The user turn put in front of a conversation that starts with the assistant."""

MISSING_RESULT = "No result was recorded for this tool call."
"""The ``tool_result`` of a call whose result is not in the conversation any more."""

_STOP_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}

_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")

Block = dict[str, Any]
Turn = dict[str, Any]


class MalformedAnswerError(Exception):
    """An answer arrived but is not a usable message (the adapter makes it an LLMResponseError)."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


@dataclass(frozen=True)
class WireRequest:
    """The parts of a Messages API request that come from the conversation."""

    system: str | None
    messages: list[Turn]
    system_cached: bool = False
    """A system message was a cache point: the system text gets a ``cache_control``."""


def to_wire_tools(tools: Sequence[ToolSchema]) -> list[dict[str, Any]]:
    """Tools in the chat-completions format as Messages API tools (``input_schema``)."""
    wire: list[dict[str, Any]] = []
    for tool in tools:
        if "input_schema" in tool:  # already in Anthropic's shape
            wire.append(dict(tool))
            continue
        function = tool.get("function", tool)
        entry: dict[str, Any] = {
            "name": function["name"],
            "input_schema": function.get("parameters") or {"type": "object", "properties": {}},
        }
        if function.get("description"):
            entry["description"] = function["description"]
        wire.append(entry)
    return wire


def to_wire(messages: Sequence[Message], *, native_tools: bool = True) -> WireRequest:
    """The conversation as a top-level system prompt and alternating turns.

    Args:
        messages: Our chat messages, in order.
        native_tools: Whether the request offers tools; without them tool calls and
            results are written as text (the API refuses tool blocks then).
    """
    system: list[str] = []
    turns: list[Turn] = []
    names: dict[str, str] = {}  # tool_use id -> tool name, for results written as text
    system_cached = False
    before = 0
    for message in messages:
        if message.role == "system":
            if message.content and message.content.strip():
                system.append(message.content)
                system_cached = system_cached or message.cache_point
            continue
        if message.cache_point:
            before = _block_count(turns)
        if message.role == "assistant":
            blocks = _text(message.content)
            for call in message.tool_calls:
                names[_wire_id(call.id)] = call.name
                if native_tools:
                    blocks.append(_tool_use(call))
                else:
                    blocks += _text(f"[called the tool {call.name} with {call.arguments or '{}'}]")
            _add(turns, "assistant", blocks)
        elif message.role == "tool":
            if native_tools:
                _add(turns, "user", [_tool_result(message)])
            else:
                call_id = _wire_id(message.tool_call_id or "")
                label = names.get(call_id, "a tool")
                _add(turns, "user", _text(f"[result of {label}: {message.content or ''}]"))
        else:
            _add(turns, "user", _text(message.content))
        if message.cache_point and _block_count(turns) > before:
            # Anthropic caches the prompt up to a block marked so (at most 4 marks: the
            # tools, the system text and this one are 3).
            turns[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
    if native_tools:
        _pair_tool_blocks(turns)
    if turns and turns[0]["role"] == "assistant":
        turns.insert(0, {"role": "user", "content": _text(CONTINUES)})
    joined = "\n\n".join(system) or None
    if not turns:  # the API needs one message: the system text becomes it
        turns.append({"role": "user", "content": _text(joined or CONTINUES)})
        joined = None
    return WireRequest(system=joined, messages=turns, system_cached=system_cached and bool(joined))


def _block_count(turns: list[Turn]) -> int:
    return sum(len(turn["content"]) for turn in turns)


def from_wire(data: Any, model: str) -> LLMResponse:
    """A Messages API answer (the parsed JSON body) as our response.

    Raises:
        MalformedAnswerError: the body is not a message we can read.
    """
    if not isinstance(data, Mapping):
        raise MalformedAnswerError("an answer that is not a JSON object")
    content = data.get("content")
    if not isinstance(content, list):
        raise MalformedAnswerError("an answer without a content list")
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in content:
        if not isinstance(block, Mapping):
            raise MalformedAnswerError("a content block that is not an object")
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if not isinstance(text, str):
                raise MalformedAnswerError("a text block without text")
            texts.append(text)
        elif kind == "tool_use":
            name = block.get("name")
            if not isinstance(name, str) or not name:
                raise MalformedAnswerError("a tool_use block without a name")
            raw = block.get("input")
            calls.append(
                ToolCall(
                    id=str(block.get("id") or f"toolu_{len(calls)}"),
                    name=name,
                    # Input that is not an object is the loop's to report to the model.
                    arguments=json.dumps(raw) if isinstance(raw, Mapping) else str(raw or ""),
                )
            )
        # thinking, redacted_thinking and server-tool blocks carry nothing for us
    stop = data.get("stop_reason")
    return LLMResponse(
        text="".join(texts) or None,
        tool_calls=tuple(calls),
        usage=_usage(data.get("usage")),
        model=str(data.get("model") or model),
        finish_reason=None if stop is None else _STOP_REASONS.get(str(stop), "other"),
    )


def _usage(raw: object) -> Usage | None:
    if not isinstance(raw, Mapping):
        return None
    try:
        # Cached prompt tokens are prompt tokens too: the context window holds them.
        prompt = sum(
            int(raw.get(field) or 0)
            for field in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )
        return Usage(
            prompt_tokens=prompt,
            completion_tokens=int(raw.get("output_tokens") or 0),
            cached_tokens=int(raw.get("cache_read_input_tokens") or 0),
        )
    except (TypeError, ValueError):
        return None  # counts are advisory; a proxy's odd usage is not fatal


def _text(content: str | None) -> list[Block]:
    if content is None or not content.strip():
        return []
    return [{"type": "text", "text": content}]


def _wire_id(call_id: str) -> str:
    """The API accepts ids of ``[a-zA-Z0-9_-]`` only (ids parsed from text may not be)."""
    return _ID_CHARS.sub("_", call_id) or "call"


def _tool_use(call: ToolCall) -> Block:
    try:
        parsed = json.loads(call.arguments) if call.arguments.strip() else {}
    except ValueError:
        parsed = None
    # The API wants an object: arguments that were not one are shown to the model as sent.
    arguments = parsed if isinstance(parsed, dict) else {"arguments": call.arguments}
    return {"type": "tool_use", "id": _wire_id(call.id), "name": call.name, "input": arguments}


def _tool_result(message: Message) -> Block:
    block: Block = {"type": "tool_result", "tool_use_id": _wire_id(message.tool_call_id or "")}
    if message.content:
        block["content"] = message.content
        if _failed(message.content):
            block["is_error"] = True
    return block


def _failed(content: str) -> bool:
    """Whether a tool result is the spec's error shape (``"success": false``)."""
    if not content.startswith("{"):
        return False
    try:
        data = json.loads(content)
    except ValueError:
        return False
    return isinstance(data, dict) and data.get("success") is False


def _add(turns: list[Turn], role: str, blocks: list[Block]) -> None:
    if not blocks:
        return
    if turns and turns[-1]["role"] == role:
        turns[-1]["content"].extend(blocks)
    else:
        turns.append({"role": role, "content": blocks})


def _pair_tool_blocks(turns: list[Turn]) -> None:
    """Answer every tool_use in the next turn, and turn orphan tool_results into text."""
    index = 0
    while index < len(turns):
        turn = turns[index]
        if turn["role"] == "assistant":
            asked = [b["id"] for b in turn["content"] if b["type"] == "tool_use"]
            if asked:
                if index + 1 == len(turns) or turns[index + 1]["role"] != "user":
                    turns.insert(index + 1, {"role": "user", "content": []})
                answer = turns[index + 1]["content"]
                answered = {b["tool_use_id"] for b in answer if b["type"] == "tool_result"}
                answer.extend(
                    {"type": "tool_result", "tool_use_id": i, "content": MISSING_RESULT}
                    for i in asked
                    if i not in answered
                )
        else:
            previous = turns[index - 1] if index > 0 else None
            asked_ids = {
                b["id"] for b in (previous or {}).get("content", ()) if b["type"] == "tool_use"
            }
            blocks: list[Block] = []
            for block in turn["content"]:
                if block["type"] == "tool_result" and block["tool_use_id"] not in asked_ids:
                    blocks += _text(f"[a tool result: {block.get('content', '')}]")
                else:
                    blocks.append(block)
            # tool_result blocks first: the API refuses text before them in a turn
            blocks.sort(key=lambda b: b["type"] != "tool_result")
            turn["content"] = blocks
        index += 1
