"""The offline model: a deterministic, rule-based stand-in for an LLM.

It runs when no LLM is configured, so tests and demos exercise every path without a
network. It never pretends to be a language model: it logs a notice when it starts and
reports ``mindspace-offline`` as its model name. Its abilities are *skills*, functions
that recognise one kind of request (by the prompt mindspace itself sends) and answer
it; the first skill that answers wins.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Unpack

from mindspace.llm.port import LLMResponse, Message, Sampling, ToolSchema
from mindspace.offline.chat import chat_skill
from mindspace.offline.journal import JOURNAL_SKILLS
from mindspace.offline.memory import MEMORY_SKILLS
from mindspace.offline.workspace import WORKSPACE_SKILLS

__all__ = [
    "OFFLINE_MODEL_NAME",
    "OFFLINE_NOTICE",
    "OfflineLLM",
    "Skill",
    "assessment_skill",
    "decompose_skill",
]

logger = logging.getLogger("mindspace.offline")

OFFLINE_MODEL_NAME = "mindspace-offline"
OFFLINE_NOTICE = (
    "mindspace is using its offline model: a deterministic, rule-based stand-in, not an LLM. "
    "Set MINDSPACE_LLM_BASE_URL and MINDSPACE_LLM_MODEL to use a real model."
)

Skill = Callable[[Sequence[Message], Sequence[ToolSchema]], str | LLMResponse | None]
"""Answers a request it recognises (text or a full response), or returns None."""


class OfflineLLM:
    """The rule-based stand-in model.

    Built-in skills, in the order they are tried (each recognises the prompt mindspace
    itself sends for that job):

    * the layer-3 task assessment (:func:`assessment_skill`: it never narrows);
    * goal decomposition (:func:`decompose_skill`);
    * journal: importance ratings, reflection questions and insights
      (:mod:`mindspace.offline.journal`);
    * memory: fact extraction, conversation summaries, consolidation and the
      pre-compaction flush (:mod:`mindspace.offline.memory`);
    * workspace: projects, goal progress, autonomous work, entity observations and the
      project log (:mod:`mindspace.offline.workspace`);
    * conversation: answering events, turning requests into goals and stated facts into
      session memories (:mod:`mindspace.offline.chat`).

    The model knows no particular story. A scenario (a demo, a test world) teaches it
    its own lines with ``skills`` or :meth:`add_skill`; ``mindspace demo`` passes those
    of the demo's scenario in :mod:`mindspace.testing`.

    Args:
        skills: Extra skills, tried before the built-in ones.
        announce: Log :data:`OFFLINE_NOTICE` on creation (the default).

    Example:
        >>> def greet(messages, tools):
        ...     return "Welcome!" if (messages[-1].content or "").endswith("Hello.") else None
        >>> llm = OfflineLLM([greet], announce=False)
    """

    model = OFFLINE_MODEL_NAME
    notice = OFFLINE_NOTICE

    def __init__(self, skills: Iterable[Skill] = (), *, announce: bool = True) -> None:
        self.skills: list[Skill] = [
            *skills,
            assessment_skill,
            decompose_skill,
            *JOURNAL_SKILLS,
            *MEMORY_SKILLS,
            *WORKSPACE_SKILLS,
            chat_skill,
        ]
        if announce:
            logger.warning(OFFLINE_NOTICE)

    def add_skill(self, skill: Skill, *, first: bool = True) -> None:
        """Teach the model another kind of request."""
        if first:
            self.skills.insert(0, skill)
        else:
            self.skills.append(skill)

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema] = (),
        **sampling: Unpack[Sampling],
    ) -> LLMResponse:
        """Answer with the first skill that recognises the request (sampling is ignored)."""
        messages = _requests_only(messages)
        for skill in self.skills:
            answer = skill(messages, tools)
            if answer is None:
                continue
            if isinstance(answer, str):
                answer = LLMResponse(text=answer)
            return LLMResponse(
                text=answer.text,
                tool_calls=answer.tool_calls,
                usage=answer.usage,
                model=OFFLINE_MODEL_NAME,
            )
        text = "(offline model) No rule of the offline model matches this request."
        return LLMResponse(text=text, model=OFFLINE_MODEL_NAME)


_REQUEST_HEADING = "## Pending Event\n"
_TURN_TIME = re.compile(r"^Current time: [^\n]*\n*")


def _requests_only(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with the closing user message cut to its request.

    The engine closes a prompt with one user message: the turn's context (the time,
    entity context, recalled memories) and then, under the pending event's heading, the
    request (docs/architecture.md). The rules read the request alone, as they read it
    when it was a message of its own.
    """
    out = list(messages)
    for index in range(len(out) - 1, -1, -1):
        message = out[index]
        if message.role != "user" or not message.content:
            continue
        context, request = "", message.content
        if _REQUEST_HEADING in request:
            context, request = request.rsplit(_REQUEST_HEADING, 1)
        else:
            request = _TURN_TIME.sub("", request, count=1)
        # The context stays readable (a tool result's evidence), as a message before it.
        split = [replace(message, content=context.strip())] if context.strip() else []
        out[index : index + 1] = [*split, replace(message, content=request)]
        break
    return out


def last_user_text(messages: Sequence[Message]) -> str:
    """The content of the last user message, or an empty string."""
    for message in reversed(messages):
        if message.role == "user" and message.content:
            return message.content
    return ""


# -- goal decomposition ----------------------------------------------------------------

_GOAL_LINE = re.compile(r"^Goal:\s*(.+)$", re.MULTILINE)
_LIST_SPLIT = re.compile(r"\s*(?:,|;|\band\b|\bthen\b)\s*", re.IGNORECASE)

_FAMILIES: tuple[tuple[frozenset[str], tuple[str, ...]], ...] = (
    (
        frozenset({"build", "construct", "create", "make", "craft", "set", "establish", "open"}),
        (
            "Decide the requirements for {obj}",
            "Choose a location and plan the layout of {obj}",
            "Gather the materials needed for {obj}",
            "Construct the main structure of {obj}",
            "Furnish and finish {obj}",
            "Inspect {obj} and fix what is missing",
        ),
    ),
    (
        frozenset({"design", "write", "draft", "compose", "plan", "outline", "prepare"}),
        (
            "Collect ideas and references for {obj}",
            "Outline the structure of {obj}",
            "Draft {obj}",
            "Review the draft of {obj} with those involved",
            "Revise and finalise {obj}",
        ),
    ),
    (
        frozenset({"find", "explore", "search", "investigate", "locate", "discover", "map"}),
        (
            "List where {obj} could be",
            "Gather clues from people who know about {obj}",
            "Search the most likely places for {obj}",
            "Record what was found about {obj}",
        ),
    ),
    (
        frozenset({"fix", "repair", "restore", "mend", "solve", "resolve", "debug"}),
        (
            "Inspect {obj} to find what is wrong",
            "Gather what the repair of {obj} needs",
            "Repair {obj}",
            "Test that {obj} works again",
        ),
    ),
    (
        frozenset({"learn", "study", "research", "understand", "master"}),
        (
            "Find sources about {obj}",
            "Study the basics of {obj}",
            "Practise {obj} on a small example",
            "Summarise what was learned about {obj}",
        ),
    ),
    (
        frozenset({"organize", "organise", "host", "run", "arrange", "hold", "throw"}),
        (
            "Set the date, place and purpose of {obj}",
            "Invite the people who should attend {obj}",
            "Arrange supplies for {obj}",
            "Run {obj}",
            "Follow up with attendees after {obj}",
        ),
    ),
)

_GENERIC = (
    "Clarify what '{goal}' requires",
    "Plan the steps to {goal_lower}",
    "Gather what is needed to {goal_lower}",
    "Carry out the main work to {goal_lower}",
    "Check the result against the request",
)


def decompose_skill(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> str | None:
    """Answer decompose_goal's prompt with a JSON array of 3-7 subtasks."""
    text = last_user_text(messages)
    if not text.startswith("Break down this goal into"):
        return None
    found = _GOAL_LINE.search(text)
    goal = found.group(1).strip().rstrip(".") if found else "the goal"
    return json.dumps(decompose_text(goal))


def decompose_text(goal: str) -> list[str]:
    """Deterministic subtasks for ``goal``: its own listed parts, or a plan by its verb."""
    words = goal.split()
    verb = words[0].lower() if words else ""
    obj = " ".join(words[1:]) or goal
    listed = _listed_parts(obj)
    if listed:
        steps = [f"Plan how to {goal[0].lower() + goal[1:]}"]
        steps += [f"{verb.capitalize()} {part}" if verb else part for part in listed]
        steps.append("Check that everything is finished")
        return steps[:7]
    for verbs, templates in _FAMILIES:
        if verb in verbs:
            return [t.format(obj=obj) for t in templates]
    lower = goal[0].lower() + goal[1:] if goal else goal
    return [t.format(goal=goal, goal_lower=lower) for t in _GENERIC]


def _listed_parts(obj: str) -> list[str]:
    # "a bar, a kitchen and three guest rooms" -> three parts; a single noun phrase -> none.
    tail = obj.split(" with ", 1)[1] if " with " in obj else obj
    parts = [p.strip(" .") for p in _LIST_SPLIT.split(tail) if p.strip(" .")]
    return parts if 3 <= len(parts) <= 5 else []


# -- layer-3 task assessment -----------------------------------------------------------

_ASSESS_LIMITS = re.compile(r"at most (\d+) tool rounds in mode (\w+)")


def assessment_skill(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> str | None:
    """Answer the task assessment (docs/delegation.md) without narrowing anything.

    The offline model cannot judge a task's size, so it recommends exactly the limits it
    was given: a valid answer that leaves the pattern as layers 1-2 composed it.
    """
    system = (messages[0].content or "") if messages else ""
    if not system.startswith("Before you act, assess the task"):
        return None
    found = _ASSESS_LIMITS.search(system)
    if found is None:
        return None
    return json.dumps(
        {"recommended_iterations": int(found.group(1)), "recommended_mode": found.group(2)}
    )
