"""Query-side reranking of memory search hits: dates, questions and their replies.

The semantic index ranks memories by how well their text matches the query (dense and
BM25, blended). Three things it cannot see change which memories answer a question:

- **Dates named in the query.** "What did Nate do on 25 May, 2022?" is answered by a
  memory told on that date or soon after; memories whose ``occurred_at`` falls in a
  window the query names (:func:`mindspace.memory.temporal.named_windows`) are raised.
- **Questions are not answers.** A memory that is itself a question ("What gave you the
  idea for the colours?") matches a question about the same thing word for word but
  holds no answer; memories ending in a question mark are lowered.
- **The turns around a matching question.** The answer usually follows the question in
  the same exchange and shares few of its words ("Thanks! I'm obsessed with those..."),
  and a question often follows up on what was just said ("Congrats! What game was
  it?"). The journal entries right after and right before a matching question, in the
  same exchange (the one's stored context quotes the other), are ranked just below
  the question, unless they already rank higher on their own.
- **Questions that ask when.** "When did Nate win his third tourney?" is answered by a
  line that says when ("I just won another tournament last week!"); for a question
  asking when, memories that place something in time are raised by half the time boost.

Every adjustment is made to the hit's blended score before the logistic (the scoring
contract of :mod:`mindspace.state.semantic`), so it is in the same units on both
backends: standard deviations of the blend.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from mindspace.clock import parse_time
from mindspace.config import Settings
from mindspace.memory.records import Memory, memory_key
from mindspace.memory.temporal import TimeWindow, asks_when, named_windows, says_when
from mindspace.state.semantic import Hit

__all__ = ["QueryRerank", "carries", "follows", "is_question", "next_memory_id"]

_ID = re.compile(r"^mem_(\d+)$")
_EDGE = 1e-9
"""Scores are logistic values rounded to 6 digits; clamp before inverting."""


def next_memory_id(memory_id: str, step: int = 1) -> str | None:
    """The id of the memory stored ``step`` after ``memory_id`` (ids count up; -1: before)."""
    match = _ID.match(memory_id)
    if not match or int(match.group(1)) + step < 1:
        return None
    return f"mem_{int(match.group(1)) + step}"


def _logit(score: float) -> float:
    p = min(max(score, _EDGE), 1.0 - _EDGE)
    return math.log(p / (1.0 - p))


def _logistic(value: float) -> float:
    return round(1.0 / (1.0 + math.exp(-value)), 6)


def is_question(memory: Memory) -> bool:
    """The memory is a question (its text ends with a question mark)."""
    return memory.content.rstrip().endswith("?")


def follows(earlier: Memory, later: Memory) -> bool:
    """``later`` is the journal entry right after ``earlier``, in the same exchange.

    Both come from the journal, ``later``'s entry comes right after ``earlier``'s, and
    ``later``'s stored context (the neighbouring entries of its exchange,
    :func:`mindspace.memory.extraction.journal_draft`) quotes ``earlier``.
    """
    if earlier.entry_id is None or later.entry_id != earlier.entry_id + 1:
        return False
    quoted = memory_key(earlier.content, earlier.source_entity)[:300]
    return bool(later.context) and quoted in (later.context or "")


@dataclass(frozen=True)
class QueryRerank:
    """The adjustments, in standard deviations of the blended score.

    Attributes:
        time_boost: Added to memories that happened in a window the query names; half
            of it to memories that say when, for a question that asks when.
        question_penalty: Taken from memories that are questions.
        reply_discount: The entries right after and before a matching question in its
            exchange rank this far below it (at least); negative: not followed.
    """

    time_boost: float = 3.0
    question_penalty: float = 1.0
    reply_discount: float = 0.6

    @classmethod
    def of(cls, settings: Settings) -> QueryRerank:
        """The adjustments the ``memory_recall_*`` settings ask for."""
        return cls(
            time_boost=settings.memory_recall_time_boost,
            question_penalty=settings.memory_recall_question_penalty,
            reply_discount=settings.memory_recall_reply_discount,
        )

    @property
    def active(self) -> bool:
        """Whether any adjustment is switched on."""
        return self.time_boost > 0 or self.question_penalty > 0 or self.reply_discount >= 0

    def apply(
        self,
        query: str,
        hits: Sequence[Hit],
        load: Callable[[Sequence[str]], Mapping[str, Memory]],
        relevance: Callable[[Memory], float | None],
        eligible: Callable[[Memory], bool] = lambda memory: True,
    ) -> list[Hit]:
        """``hits`` re-scored and re-ordered, with the replies they lead to added.

        Args:
            query: The query text (dates are read from it).
            hits: The index's hits, best first.
            load: Reads memories by id (one call for the hits, one for their replies).
            relevance: The dense similarity of a reply that was not among the hits.
            eligible: Whether a reply passes the search's filters (trust, tags).
        """
        if not hits or not self.active:
            return list(hits)
        windows = named_windows(query) if self.time_boost > 0 else []
        when = self.time_boost > 0 and asks_when(query)
        memories = load([h.key for h in hits])
        adjusted: dict[str, tuple[float, Hit]] = {}
        questions: list[tuple[Memory, float]] = []
        for hit in hits:
            memory = memories.get(hit.key)
            value = _logit(hit.score)
            if memory is not None:
                if windows and _within(memory, windows):
                    value += self.time_boost
                if when and says_when(memory.content):
                    value += self.time_boost / 2
                if is_question(memory):
                    questions.append((memory, value))
                    value -= self.question_penalty
            adjusted[hit.key] = (value, hit)
        if self.reply_discount >= 0 and questions:
            self._follow(questions, adjusted, load, relevance, eligible)
        order = sorted(adjusted.values(), key=lambda item: -item[0])
        return [replace(hit, score=_logistic(value)) for value, hit in order]

    def _follow(
        self,
        questions: Sequence[tuple[Memory, float]],
        adjusted: dict[str, tuple[float, Hit]],
        load: Callable[[Sequence[str]], Mapping[str, Memory]],
        relevance: Callable[[Memory], float | None],
        eligible: Callable[[Memory], bool],
    ) -> None:
        """Raise the entries right after and before each matching question to below it."""
        around = {
            (question.id, step): key
            for question, _ in questions
            for step in (1, -1)
            if (key := next_memory_id(question.id, step)) is not None
        }
        neighbours = load(sorted(set(around.values())))
        for question, value in questions:
            for step in (1, -1):
                other = neighbours.get(around.get((question.id, step), ""))
                if other is None or not eligible(other):
                    continue
                if not (follows(question, other) if step == 1 else follows(other, question)):
                    continue
                inherited = value - self.reply_discount
                if is_question(other):
                    inherited -= self.question_penalty
                known = adjusted.get(other.id)
                if known is None:
                    own = Hit(other.id, _logistic(inherited), relevance(other), 0.0)
                    adjusted[other.id] = (inherited, own)
                elif known[0] < inherited:
                    adjusted[other.id] = (inherited, known[1])


def carries(memory: Memory, tags: Sequence[str]) -> bool:
    """The memory carries every one of ``tags`` (case-insensitive, as the index filters)."""
    own = {t.casefold() for t in memory.tags}
    return all(t.casefold() in own for t in tags)


def _within(memory: Memory, windows: Sequence[TimeWindow]) -> bool:
    when = parse_time(memory.occurred_at)
    return any(window.contains(when) for window in windows)
