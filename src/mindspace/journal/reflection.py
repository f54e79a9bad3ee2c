"""Generative reflection (spec 004 §3): questions, evidence, insights, persona filter, storage.

1. The LLM asks three questions about the entries in ``entries_since_reflection``.
2. An :class:`~mindspace.journal.evidence.EvidenceSource` gives up to ten pieces of
   evidence per question.
3. The LLM answers with insights citing evidence ids. Insights that talk about the
   assistant (the persona guard of session memory) or cite no listed evidence are
   rejected; the rest become ``[SYNTHESIS]`` entries (importance 8, tags synthesis and
   meta_learning), and the reflection state is reset.

Nothing is written unless the whole reflection succeeds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mindspace.clock import Clock
from mindspace.config import Settings
from mindspace.errors import LLMError
from mindspace.journal.book import JournalBook
from mindspace.journal.episodic import EpisodicWeights
from mindspace.journal.evidence import Evidence, EvidenceSource, JournalEvidence
from mindspace.journal.records import JournalEntry, ReflectionState
from mindspace.journal.reflection_state import check_reflection_trigger, reset_reflection_state
from mindspace.llm.port import LLM, Message
from mindspace.state.unit import Unit
from mindspace.workspace.persona import PERSONA_ERROR, PersonaGuard

__all__ = [
    "EVIDENCE_PER_QUESTION",
    "INSIGHTS_PROMPT",
    "MAX_INSIGHTS",
    "QUESTIONS_PROMPT",
    "ReflectionOutcome",
    "parse_insights",
    "parse_questions",
    "reflect_if_due",
    "run_reflection",
]

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

Return a JSON array of objects: {{"insight": "...", "evidence": ["journal_1", ...]}}."""


@dataclass(frozen=True)
class Insight:
    """An insight as the LLM gave it, with the evidence ids it cites."""

    text: str
    evidence_ids: tuple[str, ...]


@dataclass
class ReflectionOutcome:
    """What a reflection did; ``success`` is False when the LLM failed (nothing changed)."""

    success: bool
    questions: list[str] = field(default_factory=list)
    evidence: dict[str, list[Evidence]] = field(default_factory=dict)
    stored: list[JournalEntry] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)
    state: ReflectionState | None = None
    error: str | None = None

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
        }
        if self.state is not None:
            result["reflection_state"] = self.state.to_spec()
        if self.error:
            result["error"] = self.error
        return result


async def reflect_if_due(
    unit: Unit,
    clock: Clock,
    settings: Settings,
    llm: LLM,
    guard: PersonaGuard,
    evidence: EvidenceSource | None = None,
) -> ReflectionOutcome | None:
    """Run :func:`run_reflection` when :func:`check_reflection_trigger` says so, else None."""
    if not check_reflection_trigger(unit):
        return None
    return await run_reflection(unit, clock, settings, llm, guard, evidence)


async def run_reflection(
    unit: Unit,
    clock: Clock,
    settings: Settings,
    llm: LLM,
    guard: PersonaGuard,
    evidence: EvidenceSource | None = None,
) -> ReflectionOutcome:
    """Reflect on the entries since the last reflection and store the insights.

    Args:
        unit: Where the journal is read and the insights written.
        clock: The time source.
        settings: Limits and episodic weights.
        llm: The model asked for questions and insights.
        guard: The persona guard insights must pass.
        evidence: Where evidence comes from (the journal's episodic search by default).
    """
    book = JournalBook(unit, clock, settings)
    source = evidence or JournalEvidence(unit, clock, EpisodicWeights.from_settings(settings))
    outcome = ReflectionOutcome(success=False)
    window = _window(book, unit.doc(ReflectionState))
    try:
        reply = await _ask(llm, QUESTIONS_PROMPT.format(entries=_entry_lines(window)))
        outcome.questions = parse_questions(reply)[:QUESTION_COUNT]
        if not outcome.questions:
            outcome.error = f"The language model gave no usable questions: {reply[:200]!r}"
            return outcome
        for question in outcome.questions:
            found = await source.find(question, EVIDENCE_PER_QUESTION)
            outcome.evidence[question] = list(found)[:EVIDENCE_PER_QUESTION]
        reply = await _ask(llm, INSIGHTS_PROMPT.format(blocks=_evidence_blocks(outcome.evidence)))
    except LLMError as exc:
        outcome.error = f"The language model failed during reflection: {exc}"
        return outcome

    known = {e.id for ev in outcome.evidence.values() for e in ev}
    accepted: list[Insight] = []
    seen: set[str] = set()
    for insight in parse_insights(reply, known):
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


async def _ask(llm: LLM, prompt: str) -> str:
    response = await llm.complete(
        [Message("system", REFLECTION_SYSTEM), Message("user", prompt)], temperature=0.3
    )
    return response.text or ""


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


# -- parsing ---------------------------------------------------------------------------

_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)]|Q\d+[:.)])?\s*(.+?)\s*$", re.IGNORECASE)


def _json_array(text: str) -> list[Any] | None:
    candidates = [text.strip()]
    found = re.search(r"\[.*\]", text, re.DOTALL)
    if found:
        candidates.append(found.group(0))
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, list):
            return value
    return None


def parse_questions(text: str) -> list[str]:
    """Questions from an LLM reply: a JSON array, or else the lines that end with '?'."""
    items: list[str] = []
    array = _json_array(text)
    if array is not None:
        for item in array:
            value = item.get("question") if isinstance(item, dict) else item
            if isinstance(value, str):
                items.append(value)
    else:
        for line in text.splitlines():
            found = _BULLET.match(line)
            if found and found.group(1).endswith("?"):
                items.append(found.group(1))
    result: list[str] = []
    for item in items:
        clean = " ".join(item.split()).strip(" \"'")
        if clean and clean.casefold() not in {r.casefold() for r in result}:
            result.append(clean)
    return result


def _cited(values: Any, known: set[str]) -> tuple[str, ...]:
    if isinstance(values, (str, int)):
        values = [values]
    if not isinstance(values, list):
        return ()
    cited: list[str] = []
    for value in values:
        key = f"journal_{value}" if isinstance(value, int) else str(value).strip(" []#")
        if key not in known and key.isdigit():
            key = f"journal_{key}"
        if key in known and key not in cited:
            cited.append(key)
    return tuple(cited)


_TRAILING_GROUP = re.compile(r"\s*[\[(]([^\[\]()]*)[\])]\s*$")
_CITATION_LABEL = re.compile(r"^\s*(?:evidence|sources?|cites?|citations?)\b", re.IGNORECASE)


def parse_insights(text: str, known_ids: set[str]) -> list[Insight]:
    """Insights with the known evidence ids they cite, from a JSON array or a bulleted list."""
    insights: list[Insight] = []
    array = _json_array(text)
    if array is not None:
        for item in array:
            if isinstance(item, dict):
                body = item.get("insight") or item.get("text") or item.get("content")
                cites = item.get("evidence", item.get("evidence_ids", item.get("citations")))
                if isinstance(body, str):
                    insights.append(Insight(" ".join(body.split()), _cited(cites, known_ids)))
            elif isinstance(item, str):
                insights.append(_from_line(item, known_ids))
    else:
        for line in text.splitlines():
            found = _BULLET.match(line)
            if found:
                insights.append(_from_line(found.group(1), known_ids))
    return [i for i in insights if i.text]


def _from_line(line: str, known_ids: set[str]) -> Insight:
    ids = tuple(dict.fromkeys(re.findall(r"journal_\d+", line)))
    cited = tuple(i for i in ids if i in known_ids)
    body = line
    # Drop trailing "[journal_1, journal_2]" / "(evidence: journal_3)"; keep "(in winter)".
    while (group := _TRAILING_GROUP.search(body)) is not None and (
        "journal_" in group.group(1) or _CITATION_LABEL.match(group.group(1))
    ):
        body = body[: group.start()]
    return Insight(" ".join(body.split()).strip(" \"'"), cited)
