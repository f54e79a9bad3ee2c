"""The offline model's conversation skill: simple rules over the event text.

It recognises a tick's prompt (the pending event is the last user message, with the
header the engine writes: ``[message from Alice in Square at ...]``) and plays a short,
deterministic ReAct exchange:

* a request ("can you build a bridge", "please find the amulet", "we need ...") becomes
  a goal, which is then decomposed, and the reply says so;
* every fact the speaker states ("I prefer formal address", "my name is ...", "remember
  that ...", "my sister lives in Oakvale") becomes a third-person session-memory fact,
  one per clause; a question is never stored;
* a question ("what do I like to drink?", "do you remember me?", "what do you know about
  Alice?") calls ``recall_memories`` and is answered from the recalled memories and the
  prompt's session facts, profile and semantic memories
  (:mod:`mindspace.offline.answers`);
* "status" questions call ``get_system_status``;
* anything else gets a short acknowledgement. A refused tool call is answered in
  character, never with the tool's error text.

It only uses tools that are offered, so context filters are respected.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Sequence
from typing import Any

from mindspace.llm.port import LLMResponse, Message, ToolCall, ToolSchema
from mindspace.offline.answers import (
    Question,
    answer,
    known_facts,
    question_of,
    recall_query,
    to_speaker,
    tool_results,
)
from mindspace.offline.memory import split_clauses, third_person
from mindspace.workspace.persona import PersonaGuard

__all__ = ["chat_skill", "facts_in"]

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
_GREETING = re.compile(
    r"^(?:hello|hi|hey|greetings|good (?:morning|afternoon|evening|day)|well met)\b", re.IGNORECASE
)
_GREETING_PREFIX = re.compile(_GREETING.pattern + r"[^.!?,]*[.!?,]\s*", re.IGNORECASE)
_ADDRESSED = re.compile(r"\b(?:you|your|yours|yourself)\b", re.IGNORECASE)
# A request to tell or remind is a question ("can you tell me what I like to drink?").
_TELL = re.compile(r"\b(?:tell|remind|say to)\s+(?:me|us)\b", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_GUARD = PersonaGuard()
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
    prompt = "\n".join(m.content or "" for m in messages[:start] if m.role == "system")
    results = tool_results(messages, start)
    if not results:
        return _first_step(text, who, offered, prompt)
    return _next_step(text, results, who, offered, prompt)


def _first_step(text: str, who: str, offered: set[str], prompt: str) -> LLMResponse:
    calls: list[tuple[str, dict[str, Any]]] = []
    if "add_session_memory" in offered:
        calls += [
            ("add_session_memory", {"memory_type": "fact", "content": fact})
            for fact in facts_in(text, who)
        ]
    question = _question(text, who)
    recall = question is not None and question.kind != "self" and "recall_memories" in offered
    if recall and question is not None and question.kind != "general":
        calls.append(("recall_memories", {"query": recall_query(question), "limit": 10}))
    if calls:
        return _calls(calls)
    request = _REQUEST.search(text)
    if request and "add_goal" in offered and not _TELL.search(text):
        what = _third_person(request.group("what").strip(), who)
        description = what[0].upper() + what[1:]
        return _call("add_goal", {"description": description[:200], "priority": "medium"})
    if _STATUS.search(text) and "get_system_status" in offered:
        return _call("get_system_status", {})
    if recall and question is not None:
        return _call("recall_memories", {"query": recall_query(question), "limit": 10})
    return LLMResponse(text=_reply(text, who, [], prompt))


def _next_step(
    text: str,
    results: list[tuple[str, dict[str, Any]]],
    who: str,
    offered: set[str],
    prompt: str,
) -> LLMResponse:
    name, result = results[-1]
    ok = bool(result.get("success"))
    if ok and name == "add_goal" and "decompose_goal" in offered:
        return _call("decompose_goal", {"goal_id": result["goal_id"]})
    if ok and name == "decompose_goal":
        steps = [s["description"] for s in result.get("subtasks", [])]
        first = steps[0].lower() if steps else "the first step"
        return LLMResponse(
            text=f"I'll see to it, {who}. I've planned {len(steps)} steps, starting with: {first}."
        )
    if ok and name == "add_goal":
        return LLMResponse(text=f"I'll see to it, {who}: {result['goal']['description'].lower()}.")
    if ok and name == "get_system_status":
        advisory = result.get("token_advisory", {}).get("level", "normal")
        calls = result.get("session_metrics", {}).get("total_tool_calls", 0)
        return LLMResponse(text=f"All is well, {who}: context {advisory}, {calls} actions so far.")
    return LLMResponse(text=_reply(text, who, results, prompt))


def _reply(text: str, who: str, results: list[tuple[str, dict[str, Any]]], prompt: str) -> str:
    """The words for the speaker: an answer from memory, or what was taken note of.

    A refused tool call is never reported in its own words (those are for the model): the
    reply stays in character.
    """
    recalled = [
        m for name, r in results if name == "recall_memories" for m in r.get("memories", [])
    ]
    noted = [r for name, r in results if name == "add_session_memory" and r.get("success")]
    greeting = f"Hello, {who}! " if _GREETING.match(text) else ""
    question = _question(text, who)
    if question is not None:
        facts = known_facts(prompt, recalled, question.subject)
        met = _met_before(prompt, who)
        return greeting + answer(question, facts, who, met_before=met, prompt=prompt)
    if noted and greeting:
        said = to_speaker([str(r.get("added", "")) for r in noted][:3], who)
        return f"{greeting}I'll remember that {said[:1].lower()}{said[1:]}"
    if noted:
        return f"I'll remember that, {who}."
    if any(not r.get("success") for _, r in results):
        return f"{greeting}I'll keep that in mind, {who}."
    if greeting:
        return f"{greeting}What can I do for you?"
    return f"Noted, {who}."


def facts_in(text: str, who: str) -> list[str]:
    """Every fact the speaker states about themselves or the world, in the third person.

    Questions, greetings and requests are no facts; "my name is Dave" from Dave says
    nothing new; each clause of "My name is Dave and I prefer red wine" is one fact. A fact
    the persona guard would refuse is left out rather than sent to be refused.
    """
    facts: list[str] = []
    for sentence in _SENTENCE.split(text):
        sentence = sentence.strip()
        if not sentence or _question(sentence, who) is not None:
            continue
        sentence = _GREETING_PREFIX.sub("", sentence).strip()
        for clause in split_clauses(sentence):
            fact = _fact_about(clause, who)
            if fact is None or _GUARD.find(fact) is not None:
                continue
            if fact.casefold() not in {f.casefold() for f in facts}:
                facts.append(fact)
    return facts


def _question(text: str, who: str) -> Question | None:
    for sentence in _SENTENCE.split(text):
        if _REQUEST.search(sentence) and not _TELL.search(sentence):
            continue  # "can you build a bridge?" asks for work, not for an answer
        found = question_of(sentence, who)
        if found is not None:
            return found
    return None


def _met_before(prompt: str, who: str) -> bool:
    found = re.search(rf"^{re.escape(who)} \([^)]*\): .*?(\d+) interactions", prompt, re.M)
    return found is not None and int(found.group(1)) > 1


def _fact_about(text: str, who: str) -> str | None:
    if found := _NAME.search(text):
        name = found.group("what").strip()
        return None if name.casefold() == who.casefold() else f"{who}'s name is {name}"
    if found := _PREFERENCE.search(text):
        verb = _VERB_S[found.group("verb").lower()]
        return f"{who} {verb} {_third_person(found.group('what').strip(), who)}"
    if found := _REMEMBER.search(text):
        return _third_person(found.group("what").strip(), who).capitalize()
    if _REQUEST.search(text) or _ADDRESSED.search(text):
        return None  # a request, or words about the assistant: no fact about the world
    rewritten = third_person(text, who)
    if rewritten is None or len(rewritten.split()) < 4:
        return None  # "I think so", "I see": no fact worth a line in every prompt
    fact = rewritten.rstrip(".!")
    return None if fact.casefold() == f"{who} is {who}".casefold() else fact


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
    return _calls([(name, arguments)])


def _calls(calls: list[tuple[str, dict[str, Any]]]) -> LLMResponse:
    made = []
    for name, arguments in calls:
        digest = zlib.crc32(json.dumps(arguments, sort_keys=True).encode())
        made.append(
            ToolCall(id=f"offline_{name}_{digest:08x}", name=name, arguments=json.dumps(arguments))
        )
    return LLMResponse(tool_calls=tuple(made))


def _last_user_index(messages: Sequence[Message]) -> int | None:
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "user":
            return index
    return None
