"""The offline model's workspace skill: projects, progress, relationships and a project log.

It extends the conversation skill (``offline_chat``) with rules that read the prompt the
engine builds - the ``Active project:`` and ``Paused projects:`` lines and the ``## Goals``
section - the way a model would:

* "start a project to/for/about X" creates a project (key from X's words), adds X as a
  high-priority goal and decomposes it;
* "switch to the X project" swaps to the paused project whose key shares most words with X;
* a progress report ("the bar and the kitchen are built", "we started on the walls")
  completes (or half-completes) the active leaf goals whose words it names;
* with no event pending ("Work toward your active goals") it completes only a planning
  step ("Plan how to ...": the goal's subtasks are that plan); other goals wait, since a
  rule-based model cannot do their work and never reports progress nobody made.

After any exchange it adds follow-ups, once each: a session fact about the speaker also
becomes an entity observation (favorability +0.05); thanks become an observation
(favorability +0.25); and while a project is active, an exchange that changed the
workspace is journaled with that project in ``related_projects``. Then it replies as the
conversation skill would. Everything is deterministic and uses only offered tools, and
nothing here knows any one story: scenario-specific lines belong in skills passed to
``OfflineLLM(skills=...)`` (the demo's scenario lives in ``mindspace.testing``).
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mindspace.llm.port import LLMResponse, Message, ToolCall, ToolSchema
from mindspace.offline.chat import chat_skill
from mindspace.offline.goal_lines import (
    REQUEST_STOPWORDS,
    content_words,
    goal_lines,
    matching_leaves,
)

__all__ = ["WORKSPACE_SKILLS", "workspace_skill"]

OWN = "offline_ws_"
FOLLOW = "offline_ws_follow_"

# The event opens a line of the closing user message, after the turn's context sections.
_HEADER = re.compile(
    r"^\[(?P<type>\w+) from (?P<who>.+?)(?: in (?P<where>.+?))? at [^\]]+\]\n", re.MULTILINE
)
_AUTONOMOUS = re.compile(r"^No event is pending\. Work toward your active goals", re.MULTILINE)
_PROJECT = re.compile(
    r"\b(?:start|open|begin|create|set up)\s+(?:a\s+|the\s+)?(?:new\s+)?project\s+"
    r"(?:to|for|on|about|called|named)\s+(?P<what>[^.!?]+)",
    re.IGNORECASE,
)
_SWAP = re.compile(
    r"\b(?:switch|swap|change|go back|turn|move|return)\b[^.!?]*?\bto\s+(?:the\s+|our\s+)?"
    r"(?P<what>[\w' -]+?)\s+project\b",
    re.IGNORECASE,
)
_DONE = re.compile(
    r"\b(?:finished|completed|complete|done|built|ready|raised|laid|installed|fixed|repaired|"
    r"stocked|furnished|inspected|gathered|planned|chosen|decided|drafted|written|collected|"
    r"outlined|reviewed|found|cleaned|mended|hung|painted|checked|tested)\b",
    re.IGNORECASE,
)
_STARTED = re.compile(r"\b(?:halfway|half done|started|begun|begin work)\b", re.IGNORECASE)
# Steps the assistant does by thinking alone (decompose_goal writes "Plan how to ...").
_THINKING = re.compile(r"^(?:Plan how to|Plan the steps to|Outline)\b")
_THANKS = re.compile(r"\b(?:thank|thanks|cheers|grateful|much obliged)\b", re.IGNORECASE)
_ACTIVE = re.compile(r"^Active project: (?P<key>\S+) - ", re.MULTILINE)
_PAUSED = re.compile(r"^Paused projects: (?P<keys>.+)$", re.MULTILINE)
# Project keys are ASCII: a slug keeps only the ASCII letters of its words.
_WORD = re.compile(r"[a-z]+")
_READ_ONLY = frozenset(
    {"get_system_status", "list_projects", "recall_memories", "search_journal", "noop"}
)


@dataclass(frozen=True)
class _Result:
    call_id: str
    name: str
    arguments: dict[str, Any]
    result: dict[str, Any]

    @property
    def ok(self) -> bool:
        return self.result.get("success") is True


def workspace_skill(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse | None:
    """Answer a tick prompt with the workspace rules; None leaves it to other skills."""
    start = _last_user_index(messages)
    if start is None:
        return None
    text = messages[start].content or ""
    offered = {str(t.get("function", {}).get("name")) for t in tools}
    prompt = "\n".join(m.content or "" for m in messages[:start] if m.role == "system")
    results = _results_since(messages, start)
    if _AUTONOMOUS.search(text):
        return _autonomous(prompt, results, offered)
    header = _HEADER.search(text)
    if header is None:
        return None
    who = header.group("who")
    said = text[header.end() :].strip()
    if not results:
        own = _first_step(said, who, offered, prompt)
        if own is not None:
            return own
        answer = chat_skill(messages, tools)
        if answer is None or answer.tool_calls:
            return None
        return _follow_up(said, who, [], offered, prompt, header.group("type"))
    main = [r for r in results if not r.call_id.startswith(FOLLOW)]
    if main and main[0].call_id.startswith(OWN):
        step = _own_next(main, offered)
        if step is not None:
            return step
        reply = _own_reply(main, who)
    else:
        answer = chat_skill(_without_follow_ups(messages), tools)
        if answer is None or answer.tool_calls:
            return None
        reply = answer.text or f"Noted, {who}."
    follow = _follow_up(said, who, results, offered, prompt, header.group("type"))
    if follow is not None:
        return follow
    if _THANKS.search(said) and reply.startswith("Noted"):
        reply = f"You're welcome, {who}."
    return LLMResponse(text=reply)


# -- first steps of the workspace's own flows ------------------------------------------
def _first_step(said: str, who: str, offered: set[str], prompt: str) -> LLMResponse | None:
    if (found := _PROJECT.search(said)) and "create_project" in offered:
        what = found.group("what").strip()
        key = _slug(what)
        if key:
            return _call(
                OWN + "project",
                "create_project",
                {
                    "project_key": key,
                    "summary": _sentence(what)[:200],
                    "initial_context": f"Started at the request of {who}: {said[:300]}",
                },
            )
    if (found := _SWAP.search(said)) and "swap_project" in offered:
        target = _best_project(found.group("what"), prompt)
        if target is not None:
            return _call(
                OWN + "swap",
                "swap_project",
                {"project_key": target, "reasoning": f"{who} asked: {said[:300]}"},
            )
    if "update_goal" in offered and (_DONE.search(said) or _STARTED.search(said)):
        matched = matching_leaves(said, goal_lines(prompt))
        if matched:
            done = bool(_DONE.search(said))
            calls = [
                ToolCall(
                    f"{OWN}progress_{n}",
                    "update_goal",
                    json.dumps(
                        {"goal_id": g.id, "status": "completed"}
                        if done
                        else {"goal_id": g.id, "progress": max(g.progress, 50.0)}
                    ),
                )
                for n, g in enumerate(matched)
            ]
            return LLMResponse(tool_calls=tuple(calls))
    return None


def _own_next(main: list[_Result], offered: set[str]) -> LLMResponse | None:
    last = main[-1]
    if not last.ok:
        return None
    if last.name == "create_project" and "add_goal" in offered:
        what = str(last.result.get("project", {}).get("summary") or last.arguments["summary"])
        return _call(OWN + "goal", "add_goal", {"description": what, "priority": "high"})
    if last.name == "add_goal" and "decompose_goal" in offered:
        return _call(OWN + "plan", "decompose_goal", {"goal_id": last.result["goal_id"]})
    return None


def _own_reply(main: list[_Result], who: str) -> str:
    if any(not r.ok for r in main):
        # In character: a tool's error text is for the model, never for the speaker.
        return f"I'm afraid I couldn't manage that just now, {who}."
    first = main[0]
    if first.name == "create_project":
        key = first.arguments["project_key"]
        plan = next((r for r in main if r.name == "decompose_goal"), None)
        steps = len(plan.result.get("subtasks", [])) if plan else 0
        return f"The {key} project is open, {who}, and I've planned {steps} steps for it."
    if first.name == "swap_project":
        return f"Very well, {who}: the {first.arguments['project_key']} project is loaded now."
    if first.name == "update_goal":
        names = [str(r.result["goal"]["description"]) for r in main if r.name == "update_goal"]
        done = [g for r in main for g in r.result.get("completed", [])]
        rolled = main[-1].result.get("rolled_up") or []
        tail = ""
        if rolled:
            top = rolled[-1]
            tail = f" Overall that goal is at {top['progress']}%"
            tail += " - all done!" if top["status"] == "completed" else "."
        verb = "done" if done else "under way"
        return f"Good news, {who}: {'; '.join(names)} - {verb}.{tail}"
    return f"Done, {who}."


# -- follow-ups: observations and the project log --------------------------------------
def _follow_up(
    said: str,
    who: str,
    results: list[_Result],
    offered: set[str],
    prompt: str,
    event_type: str,
) -> LLMResponse | None:
    done = {r.name for r in results if r.call_id.startswith(FOLLOW)}
    main = [r for r in results if not r.call_id.startswith(FOLLOW)]
    if "update_entity_observation" in offered and "update_entity_observation" not in done:
        observation, change = _observation(said, who, main)
        if observation:
            return _call(
                FOLLOW + "observe",
                "update_entity_observation",
                {
                    "entity_id": who,
                    "observation": observation,
                    "source_type": "direct",
                    "favorability_change": change,
                },
            )
    return _project_log(
        prompt,
        main,
        done,
        offered,
        lambda changed: {
            "content": f'{who} ({event_type}): "{said[:400]}" - {_outcome(changed)}',
            "source_type": "direct",
            "source_entity": who,
            "tags": sorted({_tag(r.name) for r in changed}),
        },
    )


def _project_log(
    prompt: str,
    main: list[_Result],
    done: set[str],
    offered: set[str],
    entry: Callable[[list[_Result]], dict[str, Any]],
) -> LLMResponse | None:
    """The follow-up call that logs what the turn changed in its projects' journal.

    None unless something changed, a project is active after the turn, and
    add_journal_entry is offered and not called yet this turn; ``entry`` makes the
    call's arguments (but the projects) from the successful changing calls.
    """
    changed = [r for r in main if r.ok and r.name not in _READ_ONLY]
    projects = _projects_after(prompt, main)
    if (
        not (projects and changed)
        or "add_journal_entry" not in offered
        or "add_journal_entry" in done
    ):
        return None
    arguments = {**entry(changed), "related_projects": projects}
    return _call(FOLLOW + "journal", "add_journal_entry", arguments)


def _observation(said: str, who: str, main: list[_Result]) -> tuple[str | None, float]:
    for r in main:
        if r.ok and r.name == "add_session_memory":
            fact = str(r.arguments.get("content", ""))
            if who.casefold() in fact.casefold():
                return fact, 0.05
    if _THANKS.search(said):
        return f"{who} expressed thanks", 0.25
    return None, 0.0


def _outcome(changed: list[_Result]) -> str:
    parts: list[str] = []
    for r in changed:
        if r.name == "create_project":
            parts.append(f"project {r.arguments['project_key']} created")
        elif r.name == "swap_project":
            parts.append(f"switched to project {r.arguments['project_key']}")
        elif r.name == "add_goal":
            parts.append(f"goal added: {r.result['goal']['description']}")
        elif r.name == "decompose_goal":
            parts.append(f"planned in {r.result.get('subtasks_created', 0)} steps")
        elif r.name == "update_goal":
            goal = r.result["goal"]
            parts.append(f"{goal['description']} at {goal['progress']}% ({goal['status']})")
        elif r.name == "add_session_memory":
            parts.append(f"noted: {r.arguments.get('content', '')}")
        else:
            parts.append(r.name.replace("_", " "))
    return "; ".join(parts)


def _tag(tool: str) -> str:
    return {
        "create_project": "project",
        "swap_project": "project",
        "add_goal": "request",
        "decompose_goal": "request",
        "update_goal": "progress",
        "add_session_memory": "preference",
        "update_entity_observation": "relationship",
    }.get(tool, tool)


def _projects_after(prompt: str, main: list[_Result]) -> list[str]:
    """The active project after the exchange, and any project it created."""
    active = found.group("key") if (found := _ACTIVE.search(prompt)) else None
    created: list[str] = []
    for r in main:
        if r.ok and r.name == "swap_project":
            active = str(r.arguments["project_key"])
        elif r.ok and r.name == "create_project":
            created.append(str(r.arguments["project_key"]))
            active = active or created[-1]
    if active is None:
        return []
    return [active, *(key for key in created if key != active)]


# -- autonomous work on goals ------------------------------------------------------------
def _autonomous(prompt: str, results: list[_Result], offered: set[str]) -> LLMResponse | None:
    main = [r for r in results if not r.call_id.startswith(FOLLOW)]
    if not main:
        # A rule-based model cannot do a goal's work, so it never reports progress nobody
        # made: goals move when someone says what was done ("the bar is built").
        leaf = next((g for g in goal_lines(prompt) if g.leaf and g.status == "active"), None)
        if leaf is not None and _THINKING.match(leaf.description) and "update_goal" in offered:
            # Planning is work the assistant does itself: its goal's subtasks are the plan.
            args = {"goal_id": leaf.id, "status": "completed"}
            return _call(OWN + "autonomous", "update_goal", args)
        if leaf is not None:
            return LLMResponse(
                text=f"Waiting for news on '{leaf.description}' ({leaf.progress:g}% done)."
            )
        return _call(OWN + "idle", "noop", {}) if "noop" in offered else None
    done = {r.name for r in results if r.call_id.startswith(FOLLOW)}
    logged = _project_log(
        prompt,
        main,
        done,
        offered,
        lambda changed: {
            "content": f"Worked on the goals while nothing else was asked: {_outcome(changed)}",
            "source_type": "observation",
            "tags": ["progress", "autonomous"],
        },
    )
    if logged is not None:
        return logged
    last = main[-1]
    if last.name == "update_goal" and last.ok:
        goal = last.result["goal"]
        return LLMResponse(
            text=f"Worked on '{goal['description']}': {goal['progress']}% ({goal['status']})."
        )
    return LLMResponse(text="Nothing more to do on the goals right now.")


# -- reading the prompt ------------------------------------------------------------------
def _best_project(what: str, prompt: str) -> str | None:
    keys: list[str] = []
    if found := _PAUSED.search(prompt):
        keys = [k.strip() for k in found.group("keys").split(",") if k.strip()]
    wanted = content_words(what)
    best, best_score = None, 0
    for key in keys:
        score = len(wanted & content_words(key.replace("_", " ").replace("-", " ")))
        if score > best_score:
            best, best_score = key, score
    return best


def _slug(text: str) -> str:
    """A project key from the words before the first "with", "for", "in"... (at most 3)."""
    head = re.split(r"\b(?:with|for|in|at|near|by|from)\b", text.lower(), maxsplit=1)[0]
    parts = [w for w in _WORD.findall(head) if w not in REQUEST_STOPWORDS][:3]
    return "_".join(parts)[:64]


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


# -- messages ------------------------------------------------------------------------------
def _call(call_id: str, name: str, arguments: dict[str, Any]) -> LLMResponse:
    digest = zlib.crc32(json.dumps(arguments, sort_keys=True).encode())
    return LLMResponse(
        tool_calls=(ToolCall(f"{call_id}_{digest:08x}", name, json.dumps(arguments)),)
    )


def _last_user_index(messages: Sequence[Message]) -> int | None:
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "user":
            return index
    return None


def _results_since(messages: Sequence[Message], start: int) -> list[_Result]:
    calls: dict[str, ToolCall] = {}
    results: list[_Result] = []
    for message in messages[start + 1 :]:
        for call in message.tool_calls:
            calls[call.id] = call
        if message.role == "tool" and message.tool_call_id in calls:
            call = calls[message.tool_call_id]
            try:
                arguments = json.loads(call.arguments or "{}")
                result = json.loads(message.content or "{}")
            except json.JSONDecodeError:
                arguments, result = {}, {"success": False, "error": message.content}
            results.append(_Result(call.id, call.name, arguments, result))
    return results


def _without_follow_ups(messages: Sequence[Message]) -> list[Message]:
    follow_ids = {c.id for m in messages for c in m.tool_calls if c.id.startswith(FOLLOW)}
    return [
        m
        for m in messages
        if not (m.tool_calls and all(c.id in follow_ids for c in m.tool_calls))
        and m.tool_call_id not in follow_ids
    ]


WORKSPACE_SKILLS = (workspace_skill,)
