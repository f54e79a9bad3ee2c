"""The offline model's sleep-cycle skills: entity consolidation, summaries, extraction.

Each recognises one of mindspace's own prompts and answers it by rule, so a whole night
of sleep runs without an LLM. The rules are deliberately simple and stay third-person.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from mindspace.llm.port import LLMResponse, Message, ToolCall, ToolSchema

__all__ = ["MEMORY_SKILLS", "consolidation_skill", "pre_compaction_skill", "summary_skill"]

_CONSOLIDATE = re.compile(r"^Consolidate these observations about (?P<who>.+?) into stable")
_SUMMARIZE = re.compile(r"^Summarize the following conversation with (?P<who>.+?) as")
_PRE_COMPACTION = re.compile(r"conversation history with (?P<who>.+?) is compacted")
_PREFERENCE = re.compile(
    r"\b(?P<verb>prefers|likes|loves|hates|dislikes|wants|enjoys|owns|fears)\s+(?P<what>.+)",
    re.IGNORECASE,
)
_NAME = re.compile(r"'s name is (?P<what>.+)", re.IGNORECASE)
_KEYS = {
    "prefers": "preference",
    "likes": "likes",
    "loves": "loves",
    "hates": "dislikes",
    "dislikes": "dislikes",
    "wants": "wants",
    "enjoys": "enjoys",
    "owns": "owns",
    "fears": "fears",
}


def _last_user(messages: Sequence[Message]) -> str:
    for message in reversed(messages):
        if message.role == "user" and message.content:
            return message.content
    return ""


def consolidation_skill(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> str | None:
    """Observations -> a JSON object of attributes, by simple patterns."""
    text = _last_user(messages)
    if not _CONSOLIDATE.match(text):
        return None
    block = text.split("Observations:", 1)[-1].split("Existing attributes", 1)[0]
    observations = [line[2:].strip() for line in block.splitlines() if line.startswith("- ")]
    attributes: dict[str, str] = {}
    notes: list[str] = []
    for observation in observations:
        clean = observation.rstrip(".")
        if found := _NAME.search(clean):
            attributes["name"] = found.group("what").strip()
        elif found := _PREFERENCE.search(clean):
            key = _KEYS[found.group("verb").lower()]
            value = found.group("what").strip()
            attributes[key] = f"{attributes[key]}; {value}" if key in attributes else value
        else:
            notes.append(clean)
    if notes:
        attributes["notes"] = "; ".join(notes[-5:])
    return json.dumps(attributes)


def summary_skill(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> str | None:
    """An extractive summary: what the other party said, in the third person."""
    text = _last_user(messages)
    found = _SUMMARIZE.match(text)
    if not found:
        return None
    who = found.group("who")
    said = []
    for line in text.splitlines():
        if line.startswith("user: "):
            sentence = re.split(r"(?<=[.!?])\s", line[6:].strip())[0]
            said.append(sentence.rstrip(".!?"))
    if not said:
        return f"{who} and the tavern exchanged a few words."
    return f"{who} said: " + "; ".join(said[-6:]) + "."


def pre_compaction_skill(
    messages: Sequence[Message], tools: Sequence[ToolSchema]
) -> LLMResponse | str | None:
    """Journal the other party's last words once, then stop."""
    task = _last_user(messages)
    found = _PRE_COMPACTION.search(task)
    if not found:
        return None
    if any(m.role == "tool" for m in messages[-3:]):
        return LLMResponse(tool_calls=(ToolCall("offline_noop", "noop", "{}"),))
    who = found.group("who")
    history = [m.content for m in messages if m.role == "user" and m.content and m.content != task]
    offered = {str(t.get("function", {}).get("name")) for t in tools}
    if not history or "add_journal_entry" not in offered:
        return LLMResponse(tool_calls=(ToolCall("offline_noop", "noop", "{}"),))
    last = history[-1].replace("\n", " ")[:300]
    entry = {
        "content": f'Before compaction: {who} last said "{last}"',
        "source_type": "direct",
        "source_entity": who,
        "tags": ["pre_compaction"],
    }
    return LLMResponse(
        tool_calls=(ToolCall("offline_journal", "add_journal_entry", json.dumps(entry)),)
    )


MEMORY_SKILLS = (consolidation_skill, summary_skill, pre_compaction_skill)
