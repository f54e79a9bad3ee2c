"""Generative reflection (spec 004 §3): questions, evidence, insights, persona filter, storage.

1. The LLM asks three questions about the entries in ``entries_since_reflection``.
2. An :class:`~mindspace.journal.evidence.EvidenceSource` gives up to ten pieces of
   evidence per question.
3. The LLM answers with insights citing evidence ids. Insights that talk about the
   assistant (the persona guard of session memory) or cite no listed evidence are
   rejected; the rest become ``[SYNTHESIS]`` entries (importance 8, tags synthesis and
   meta_learning), and the reflection state is reset.

Both answers are read strictly (:mod:`mindspace.llm.parsing.structured`: exact JSON forms, one
repair); when an answer stays unusable the reflection is skipped with its reason. Nothing
is written unless the whole reflection succeeds.

Given a :data:`ContextAsk` (the engine's, while asleep), step 1 runs as a session in the
``reflection`` context (its system prompt, the task as pending event, journal tools, 3
iterations) and step 3 in ``reflection_cont`` (the evidence as the tool result, 2
iterations); without one, the model is asked directly.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, RootModel, field_validator

from mindspace.clock import Clock
from mindspace.config import Settings
from mindspace.errors import LLMError
from mindspace.journal.book import JournalBook
from mindspace.journal.episodic import EpisodicWeights
from mindspace.journal.evidence import Evidence, EvidenceSource, JournalEvidence
from mindspace.journal.records import JournalEntry, ReflectionState
from mindspace.journal.reflection_state import check_reflection_trigger, reset_reflection_state
from mindspace.llm.parsing.structured import (
    Obtained,
    Structured,
    ask_structured,
    ask_structured_via,
    parse_structured,
)
from mindspace.llm.port import LLM, Message
from mindspace.state.unit import Unit
from mindspace.workspace.persona import PERSONA_ERROR, PersonaGuard

__all__ = [
    "EVIDENCE_IN_TOOL_RESULT",
    "EVIDENCE_PER_QUESTION",
    "INSIGHTS_PROMPT",
    "MAX_INSIGHTS",
    "QUESTIONS_PROMPT",
    "ContextAsk",
    "InsightItem",
    "Insights",
    "Questions",
    "ReflectionOutcome",
    "parse_insights",
    "parse_questions",
    "reflect_if_due",
    "run_reflection",
]

M = TypeVar("M", bound=BaseModel)

QUESTION_COUNT = 3
EVIDENCE_PER_QUESTION = 10
MAX_INSIGHTS = 5
MAX_WINDOW_ENTRIES = 30
_SHOWN_CHARS = 300

REFLECTION_SYSTEM = (
    "You reflect on a journal of events in a world. You answer with JSON only. "
    "You write about the world, its people and events - never about yourself."
)
QUESTIONS_PROMPT = """Generate 3 reflection questions from these recent journal entries.
Ask about the state of the world, the people in it, and patterns across events.

Entries:
{entries}

Return a JSON array of 3 question strings."""

INSIGHTS_PROMPT = """Generate insights that answer these reflection questions, using only \
the evidence listed under each question.
Write about the WORLD, PLAYERS and EVENTS in the third person - never about yourself.
Cite the ids of the evidence each insight rests on.

{blocks}

Return a JSON array of objects: {{"insight": "...", "evidence": ["journal_1", ...]}}.
Return [] when the evidence supports no insight."""

EVIDENCE_IN_TOOL_RESULT = (
    "The questions and the evidence under each are the result of your evidence "
    "retrieval, shown above."
)
"""What stands for the evidence blocks in the ``reflection_cont`` task (its tool result
holds them)."""

ReflectionContext = Literal["reflection", "reflection_cont"]
ContextAsk = Callable[[ReflectionContext, str, str | None], Awaitable[str]]
"""Runs one session: ``(context_type, task, tool_result) -> final text``."""


@dataclass(frozen=True)
class Insight:
    """An insight as the LLM gave it, with the evidence ids it cites."""

    text: str
    evidence_ids: tuple[str, ...]


@dataclass
class ReflectionOutcome:
    """What a reflection did. ``success`` is False when it changed nothing: ``error`` when
    the LLM could not be reached, ``skipped`` (the reason) when its answers stayed unusable
    after the one repair. ``structured`` says how each answer was obtained."""

    success: bool
    questions: list[str] = field(default_factory=list)
    evidence: dict[str, list[Evidence]] = field(default_factory=dict)
    stored: list[JournalEntry] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)
    state: ReflectionState | None = None
    error: str | None = None
    skipped: str | None = None
    structured: dict[str, Obtained] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready report."""
        result: dict[str, Any] = {
            "success": self.success,
            "questions": self.questions,
            "evidence": {q: [e.to_dict() for e in ev] for q, ev in self.evidence.items()},
            "insights": [
                {"entry_id": e.id, "content": e.content, "evidence_ids": list(e.evidence_ids)}
                for e in self.stored
            ],
            "rejected_insights": self.rejected,
            "structured": dict(self.structured),
        }
        if self.state is not None:
            result["reflection_state"] = self.state.to_spec()
        if self.error:
            result["error"] = self.error
        if self.skipped:
            result["skipped"] = self.skipped
        return result


async def reflect_if_due(
    unit: Unit,
    clock: Clock,
    settings: Settings,
    llm: LLM,
    guard: PersonaGuard,
    evidence: EvidenceSource | None = None,
    ask: ContextAsk | None = None,
) -> ReflectionOutcome | None:
    """Run :func:`run_reflection` when :func:`check_reflection_trigger` says so, else None."""
    if not check_reflection_trigger(unit):
        return None
    return await run_reflection(unit, clock, settings, llm, guard, evidence, ask)


async def run_reflection(
    unit: Unit,
    clock: Clock,
    settings: Settings,
    llm: LLM,
    guard: PersonaGuard,
    evidence: EvidenceSource | None = None,
    ask: ContextAsk | None = None,
) -> ReflectionOutcome:
    """Reflect on the entries since the last reflection and store the insights.

    Args:
        unit: Where the journal is read and the insights written.
        clock: The time source.
        settings: Limits and episodic weights.
        llm: The model asked for questions and insights.
        guard: The persona guard insights must pass.
        evidence: Where evidence comes from (the journal's episodic search by default).
        ask: Runs the two steps as sessions in the reflection contexts; None asks
            ``llm`` directly.
    """
    book = JournalBook(unit, clock, settings)
    source = evidence or JournalEvidence(unit, clock, EpisodicWeights.from_settings(settings))
    outcome = ReflectionOutcome(success=False)
    window = _window(book, unit.doc(ReflectionState))
    try:
        questions_task = QUESTIONS_PROMPT.format(entries=_entry_lines(window))
        if ask is None:
            asked = await _ask(llm, questions_task, Questions, _QUESTIONS)
        else:
            asked = await ask_structured_via(
                _in_context(ask, "reflection", ""), questions_task, Questions, expected=_QUESTIONS
            )
        outcome.structured["questions"] = asked.obtained
        if asked.value is None:
            outcome.skipped = (
                f"The language model gave no usable questions (after one repair): {asked.reason}"
            )
            return outcome
        outcome.questions = asked.value.root
        for question in outcome.questions:
            found = await source.find(question, EVIDENCE_PER_QUESTION)
            outcome.evidence[question] = list(found)[:EVIDENCE_PER_QUESTION]
        blocks = _evidence_blocks(outcome.evidence)
        if ask is None:
            answered = await _ask(llm, INSIGHTS_PROMPT.format(blocks=blocks), Insights, _INSIGHTS)
        else:
            answered = await ask_structured_via(
                _in_context(ask, "reflection_cont", blocks),
                INSIGHTS_PROMPT.format(blocks=EVIDENCE_IN_TOOL_RESULT),
                Insights,
                expected=_INSIGHTS,
            )
        outcome.structured["insights"] = answered.obtained
    except LLMError as exc:
        outcome.error = f"The language model failed during reflection: {exc}"
        return outcome
    if answered.value is None:
        outcome.skipped = (
            f"The language model gave no usable insights (after one repair): {answered.reason}"
        )
        return outcome

    known = {e.id for ev in outcome.evidence.values() for e in ev}
    accepted: list[Insight] = []
    seen: set[str] = set()
    for insight in _insights(answered.value, known):
        reason = _rejection(insight, guard)
        if reason is not None:
            outcome.rejected.append(reason)
        elif insight.text.casefold() not in seen and len(accepted) < MAX_INSIGHTS:
            seen.add(insight.text.casefold())
            accepted.append(insight)
    for insight in accepted:
        text = insight.text[: book.synthesis_limit]
        added = book.add_synthesis(text, evidence_ids=insight.evidence_ids)
        outcome.stored.append(added.entry)
    outcome.state = reset_reflection_state(unit, clock)
    outcome.success = True
    return outcome


def _window(book: JournalBook, state: ReflectionState) -> list[JournalEntry]:
    """The entries to reflect on: the window's most important, in time order."""
    wanted = set(state.entries_since_reflection)
    entries = [e for e in book.entries() if e.id in wanted] or book.entries()[-MAX_WINDOW_ENTRIES:]
    best = sorted(entries, key=lambda e: (e.importance, e.id), reverse=True)[:MAX_WINDOW_ENTRIES]
    return sorted(best, key=lambda e: e.id)


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _SHOWN_CHARS else flat[: _SHOWN_CHARS - 3] + "..."


def _entry_lines(entries: Sequence[JournalEntry]) -> str:
    if not entries:
        return "(no entries)"
    return "\n".join(
        f"[{e.evidence_key}] (importance {e.importance}) {_one_line(e.content)}" for e in entries
    )


def _evidence_blocks(evidence: dict[str, list[Evidence]]) -> str:
    blocks = []
    for number, (question, items) in enumerate(evidence.items(), start=1):
        lines = [f"Question {number}: {question}", "Evidence:"]
        lines += [f"[{e.id}] {_one_line(e.content)}" for e in items] or ["(none found)"]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


_QUESTIONS = "a JSON array of 3 question strings"
_INSIGHTS = 'a JSON array of objects like {"insight": "...", "evidence": ["journal_1"]}'


def _in_context(
    ask: ContextAsk, context_type: ReflectionContext, tool_result: str
) -> Callable[[str], Awaitable[str]]:
    async def run(task: str) -> str:
        return await ask(context_type, task, tool_result)

    return run


async def _ask(llm: LLM, prompt: str, model: type[M], expected: str) -> Structured[M]:
    return await ask_structured(
        llm,
        [Message("system", REFLECTION_SYSTEM), Message("user", prompt)],
        model,
        expected=expected,
        temperature=0.3,
    )


def _rejection(insight: Insight, guard: PersonaGuard) -> dict[str, Any] | None:
    match = guard.find(insight.text)
    if match is not None:
        return {
            "insight": insight.text,
            "reason": "self_reference",
            "error": PERSONA_ERROR,
            "matched": match.phrase,
        }
    if not insight.evidence_ids:
        return {
            "insight": insight.text,
            "reason": "no_evidence",
            "error": "The insight cites none of the evidence ids it was given",
        }
    return None


# -- the exact forms ---------------------------------------------------------------


def _clean(text: str) -> str:
    return " ".join(text.split())


class Questions(RootModel[list[str]]):
    """The exact form of the questions: a JSON array of 1-3 distinct, non-blank strings.

    The prompt asks for three; fewer are accepted, more are refused (and repaired).
    """

    @field_validator("root")
    @classmethod
    def _distinct_questions(cls, items: list[str]) -> list[str]:
        clean = [_clean(item) for item in items]
        if not 1 <= len(clean) <= QUESTION_COUNT:
            raise ValueError(f"give 1 to {QUESTION_COUNT} questions, not {len(clean)}")
        if any(not item for item in clean):
            raise ValueError("every question must be non-blank text")
        if len({item.casefold() for item in clean}) != len(clean):
            raise ValueError("the questions must all be different")
        return clean


class InsightItem(BaseModel):
    """One insight as the model must write it: its text and the evidence ids it cites."""

    insight: str
    evidence: list[str]

    @field_validator("insight")
    @classmethod
    def _non_blank(cls, text: str) -> str:
        clean = _clean(text)
        if not clean:
            raise ValueError("the insight must be non-blank text")
        return clean


class Insights(RootModel[list[InsightItem]]):
    """The exact form of the insights: a JSON array (possibly empty) of
    ``{"insight": "...", "evidence": ["journal_1", ...]}`` objects."""


def parse_questions(text: str) -> list[str]:
    """The questions in an LLM reply, read strictly as :class:`Questions`.

    Raises:
        LLMResponseError: the reply is not a JSON array of 1-3 distinct strings.
    """
    return parse_structured(text, Questions).root


def parse_insights(text: str, known_ids: set[str]) -> list[Insight]:
    """The insights in an LLM reply, read strictly as :class:`Insights`.

    Cited ids that were not among ``known_ids`` are dropped (an insight left with none
    is rejected later as ``no_evidence``).

    Raises:
        LLMResponseError: the reply is not a JSON array of insight objects.
    """
    return _insights(parse_structured(text, Insights), known_ids)


def _insights(parsed: Insights, known_ids: set[str]) -> list[Insight]:
    return [
        Insight(
            item.insight,
            tuple(i for i in dict.fromkeys(e.strip() for e in item.evidence) if i in known_ids),
        )
        for item in parsed.root
    ]
