"""The offline model's conversation skill: simple rules over the event text.

It recognises a tick's prompt (the pending event is the last user message, with the
header the engine writes: ``[message from Alice in Square at ...]``) and plays a short,
deterministic ReAct exchange:

* a request ("can you build a bridge", "please find the amulet", "we need ...") becomes
  a goal, which is then decomposed, and the reply says so;
* a stated preference or fact about the speaker ("I prefer formal address", "my name is
  ...", "remember that ...") becomes a third-person session-memory fact;
* "status" questions call ``get_system_status``;
* anything else gets a short acknowledgement.

It only uses tools that are offered, so context filters are respected.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Sequence
from typing import Any

from mindspace.llm.port import LLMResponse, Message, ToolCall, ToolSchema

__all__ = ["chat_skill"]

# The event opens a line of the closing user message, after the turn's context sections.
_HEADER = re.compile(
    r"^\[(?P<type>\w+) from (?P<who>.+?)(?: in (?P<where>.+?))? at [^\]]+\]\n", re.MULTILINE
)
_REQUEST = re.compile(
    r"\b(?:can you|could you|would you|please|help me|i need you to|we need to|we need|"
    r"i want you to)\s+(?:help me\s+|please\s+)?(?P<what>[a-z].*?)(?:[?.!]|$)",
    re.IGNORECASE,
)
_PREFERENCE = re.compile(
    r"\bI (?P<verb>prefer|like|love|hate|dislike|want|enjoy)\s+(?P<what>[^.!?]+)",
    re.IGNORECASE,
)
_NAME = re.compile(r"\bmy name is\s+(?P<what>[^.!?,]+)", re.IGNORECASE)
_REMEMBER = re.compile(r"\bremember(?: that)?\s+(?P<what>[^.!?]+)", re.IGNORECASE)
_STATUS = re.compile(r"\b(status|how busy|how are you doing|token)\b", re.IGNORECASE)
_VERB_S = {
    "prefer": "prefers",
    "like": "likes",
    "love": "loves",
    "hate": "hates",
    "dislike": "dislikes",
    "want": "wants",
    "enjoy": "enjoys",
}


def chat_skill(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse | None:
    """Answer a tick prompt with a deterministic tool call or reply."""
    start = _last_user_index(messages)
    if start is None:
        return None
    header = _HEADER.search(messages[start].content or "")
    if header is None:
        return None
    offered = {str(t.get("function", {}).get("name")) for t in tools}
    who = header.group("who")
    text = (messages[start].content or "")[header.end() :].strip()
    results = _results_since(messages, start)
    if not results:
        return _first_step(text, who, offered)
    return _next_step(results, who, offered)


def _first_step(text: str, who: str, offered: set[str]) -> LLMResponse:
    fact = _fact_about(text, who)
    if fact and "add_session_memory" in offered:
        return _call("add_session_memory", {"memory_type": "fact", "content": fact})
    request = _REQUEST.search(text)
    if request and "add_goal" in offered:
        what = _third_person(request.group("what").strip(), who)
        description = what[0].upper() + what[1:]
        return _call("add_goal", {"description": description[:200], "priority": "medium"})
    if _STATUS.search(text) and "get_system_status" in offered:
        return _call("get_system_status", {})
    return LLMResponse(text=f"Noted, {who}.")


def _next_step(
    results: list[tuple[str, dict[str, Any]]], who: str, offered: set[str]
) -> LLMResponse:
    name, result = results[-1]
    if not result.get("success"):
        return LLMResponse(
            text=f"Sorry, {who} - that did not work: {result.get('error', 'unknown error')}."
        )
    if name == "add_goal" and "decompose_goal" in offered:
        return _call("decompose_goal", {"goal_id": result["goal_id"]})
    if name == "decompose_goal":
        steps = [s["description"] for s in result.get("subtasks", [])]
        first = steps[0].lower() if steps else "the first step"
        return LLMResponse(
            text=f"I'll see to it, {who}. I've planned {len(steps)} steps, starting with: {first}."
        )
    if name == "add_goal":
        return LLMResponse(text=f"I'll see to it, {who}: {result['goal']['description'].lower()}.")
    if name == "add_session_memory":
        return LLMResponse(text=f"I'll remember that, {who}.")
    if name == "get_system_status":
        advisory = result.get("token_advisory", {}).get("level", "normal")
        calls = result.get("session_metrics", {}).get("total_tool_calls", 0)
        return LLMResponse(text=f"All is well, {who}: context {advisory}, {calls} actions so far.")
    return LLMResponse(text=f"Done, {who}.")


def _fact_about(text: str, who: str) -> str | None:
    if found := _NAME.search(text):
        return f"{who}'s name is {found.group('what').strip()}"
    if found := _PREFERENCE.search(text):
        verb = _VERB_S[found.group("verb").lower()]
        return f"{who} {verb} {_third_person(found.group('what').strip(), who)}"
    if found := _REMEMBER.search(text):
        return _third_person(found.group("what").strip(), who).capitalize()
    return None


def _third_person(text: str, who: str) -> str:
    replacements = [
        (r"\bI am\b", f"{who} is"),
        (r"\bI'm\b", f"{who} is"),
        (r"\bI\b", who),
        (r"\bme\b", who),
        (r"\bmyself\b", who),
        (r"\bmy\b", f"{who}'s"),
        (r"\bmine\b", f"{who}'s"),
    ]
    for pattern, value in replacements:
        text = re.sub(pattern, value, text, flags=re.IGNORECASE)
    return text


def _call(name: str, arguments: dict[str, Any]) -> LLMResponse:
    call_id = f"offline_{name}_{zlib.crc32(json.dumps(arguments, sort_keys=True).encode()):08x}"
    return LLMResponse(
        tool_calls=(ToolCall(id=call_id, name=name, arguments=json.dumps(arguments)),)
    )


def _last_user_index(messages: Sequence[Message]) -> int | None:
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "user":
            return index
    return None


def _results_since(messages: Sequence[Message], start: int) -> list[tuple[str, dict[str, Any]]]:
    names: dict[str, str] = {}
    results: list[tuple[str, dict[str, Any]]] = []
    for message in messages[start + 1 :]:
        for call in message.tool_calls:
            names[call.id] = call.name
        if message.role == "tool" and message.tool_call_id in names:
            try:
                parsed = json.loads(message.content or "{}")
            except json.JSONDecodeError:
                parsed = {"success": False, "error": message.content}
            results.append((names[message.tool_call_id], parsed))
    return results
