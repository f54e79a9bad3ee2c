"""Importance scoring (spec 004 §2): an immediate heuristic, then an LLM upgrade in sleep."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, model_validator

from mindspace.errors import LLMError
from mindspace.journal.pending import MAX_SCORING_ATTEMPTS, pending_entries
from mindspace.journal.records import JournalEntry
from mindspace.llm.parsing.structured import Obtained, ask_structured, parse_structured
from mindspace.llm.port import LLM, Message
from mindspace.llm.traced import scorer_label
from mindspace.state.unit import Unit

__all__ = [
    "BATCH_IMPORTANCE_PROMPT",
    "IMPORTANCE_EXPECTED",
    "IMPORTANCE_PROMPT",
    "MAX_SCORING_ATTEMPTS",
    "ImportanceRating",
    "ImportanceScore",
    "ImportanceScores",
    "PendingScoring",
    "parse_importance",
    "score_importance_batch",
    "score_importance_heuristic",
    "score_importance_llm",
    "score_pending_entries",
]

IMPORTANCE_SYSTEM = "You rate the significance of events. You answer with one integer."
IMPORTANCE_PROMPT = """Rate the significance of this event (1-10):
{content}

1 = mundane routine
5 = moderately notable
10 = extremely significant (major revelation, emotional event)

Return only the integer score."""


def score_importance_heuristic(
    content: str, source_type: str, tags: Sequence[str] | None = None
) -> int:
    """The spec's tier-1 score: base 5, source modifier, keywords, length and punctuation.

    ``tags`` is accepted as in the spec's signature; the spec's rule does not use it.
    Keywords match as substrings of the lowercased content ("player" counts in "players").
    """
    score = 5  # Base score (neutral midpoint)

    # Source type modifiers
    source_modifiers = {
        "direct": +2,
        "observation": +1,
        "inference": 0,
        "environmental": -1,
    }
    score += source_modifiers.get(source_type, 0)

    # High-importance keywords (+2 each, max +4)
    high_keywords = [
        "player", "conflict", "discovery", "secret", "revealed",
        "attack", "danger", "important", "urgent", "critical",
        "death", "birth", "marriage", "betrayal", "alliance",
        "war", "peace", "treasure", "quest",
    ]  # fmt: skip
    keyword_bonus = sum(2 for kw in high_keywords if kw in content.lower())
    score += min(keyword_bonus, 4)

    # Low-importance keywords (-1 each)
    low_keywords = ["routine", "walked", "moved", "entered", "ordinary"]
    score -= sum(1 for kw in low_keywords if kw in content.lower())

    # Content bonuses
    if len(content) > 200:
        score += 1
    if "!" in content or "?" in content:
        score += 1

    return max(1, min(10, score))  # Clamp to 1-10


class ImportanceScore(RootModel[Annotated[int, Field(ge=1, le=10)]]):
    """The exact form of an importance answer: one JSON integer from 1 to 10, nothing else."""


IMPORTANCE_EXPECTED = "the integer score from 1 to 10 (for example: 6)"


def parse_importance(reply: str) -> int:
    """The score in an LLM reply, read strictly (see :mod:`mindspace.llm.parsing.structured`).

    The reply must be one integer from 1 to 10 (alone, or alone in a code block). Prose
    around a number is refused: "the first 2 digits may not match" is no score.

    Raises:
        LLMResponseError: the reply is not a score, with what was wrong.
    """
    return parse_structured(reply, ImportanceScore).root


BATCH_IMPORTANCE_SYSTEM = (
    "You rate the significance of events. You answer with one JSON list of integers."
)
BATCH_IMPORTANCE_HEAD = "Rate the significance of each of these events (1-10):"
BATCH_IMPORTANCE_PROMPT = (
    BATCH_IMPORTANCE_HEAD
    + """
{events}

1 = mundane routine
5 = moderately notable
10 = extremely significant (major revelation, emotional event)

Return only a JSON list of {count} integer scores, one per event, in the order of the
events (for example: {example})."""
)
"""The batch question: events as ``Event <n>: <text>`` lines (line breaks in a text
become spaces, so each event stays on its line)."""

_LINE_BREAK = re.compile(r"[\r\n]")
_Score = Annotated[int, Field(ge=1, le=10)]


class _NumberedScore(BaseModel):
    """The other accepted item form: ``{"id": <event number>, "importance": <score>}``."""

    model_config = ConfigDict(extra="forbid")

    id: int
    importance: _Score


class ImportanceScores(RootModel[list[_Score] | list[_NumberedScore]]):
    """A batch answer: one score per event, as ``[7, 3]`` or
    ``[{"id": 1, "importance": 7}, {"id": 2, "importance": 3}]``.

    Use :meth:`for_count` for the model of a batch of ``count`` events: a list of another
    length, or numbered items that do not cover each event exactly once, is refused.
    """

    count: ClassVar[int] = 0

    @classmethod
    def for_count(cls, count: int) -> type[ImportanceScores]:
        """The model that accepts exactly ``count`` scores (cached per count)."""
        return _scores_model(count)

    @model_validator(mode="after")
    def _one_score_per_event(self) -> ImportanceScores:
        if self.count and len(self.root) != self.count:
            raise ValueError(f"expected {self.count} scores, one per event, got {len(self.root)}")
        numbers = [item.id for item in self.root if isinstance(item, _NumberedScore)]
        if numbers and sorted(numbers) != list(range(1, len(self.root) + 1)):
            raise ValueError(
                f"the ids {numbers!r} must number the events 1 to {len(self.root)}, each once"
            )
        return self

    def scores(self) -> list[int]:
        """The scores in the order of the events."""
        if self.root and isinstance(self.root[0], _NumberedScore):
            numbered = {
                item.id: item.importance for item in self.root if isinstance(item, _NumberedScore)
            }
            return [numbered[n] for n in sorted(numbered)]
        return [item for item in self.root if isinstance(item, int)]


@cache
def _scores_model(count: int) -> type[ImportanceScores]:
    return type(f"ImportanceScores{count}", (ImportanceScores,), {"count": count})


@dataclass(frozen=True)
class ImportanceRating:
    """What the LLM made of one entry.

    Attributes:
        score: The importance to keep: the model's, or the heuristic fallback.
        method: ``llm`` when the model gave a usable score, ``heuristic`` otherwise.
        obtained: How the answer was obtained (``parsed``, ``repaired`` or ``fallback``).
        replies: The raw replies (one, or two when a repair was asked for).
        note: Why a reply was refused, when one was.
    """

    score: int
    method: Literal["llm", "offline", "heuristic"]
    obtained: Obtained
    replies: tuple[str, ...]
    note: str | None = None

    @property
    def usable(self) -> bool:
        """Whether the model gave a score (otherwise the heuristic score stands)."""
        return self.method != "heuristic"


async def score_importance_llm(llm: LLM, content: str, fallback: int) -> ImportanceRating:
    """Ask the LLM to rate ``content``: strict parse, one repair, then ``fallback``.

    A score that falls back keeps the method ``heuristic``; it is never labelled ``llm``.

    Raises:
        LLMError: the model could not be reached.
    """
    prompt = IMPORTANCE_PROMPT.format(content=content)
    answer = await ask_structured(
        llm,
        [Message("system", IMPORTANCE_SYSTEM), Message("user", prompt)],
        ImportanceScore,
        expected=IMPORTANCE_EXPECTED,
        max_tokens=16,
    )
    if answer.value is None:
        fell_back = (
            f"No usable score in {_quoted(answer.replies)} ({answer.reason}); "
            f"the heuristic score {fallback!r} stands"
        )
        return ImportanceRating(fallback, "heuristic", "fallback", answer.replies, fell_back)
    note = None
    if answer.obtained == "repaired":
        note = (
            f"Repaired after the reply {_quoted(answer.replies[:1])} was refused ({answer.reason})"
        )
    method = scorer_label(llm)
    return ImportanceRating(answer.value.root, method, answer.obtained, answer.replies, note)


async def score_importance_batch(
    llm: LLM, contents: Sequence[str]
) -> tuple[list[ImportanceRating] | None, str | None]:
    """Ask the LLM to rate several events in one call: strict parse, one repair.

    Returns:
        One rating per content, in order (method ``llm``, obtained ``parsed`` or
        ``repaired``), and a note when a reply was refused. When neither reply held one
        score per event, the ratings are None and the note says why: the caller then
        rates those events one by one (:func:`score_importance_llm`).

    Raises:
        LLMError: the model could not be reached.
    """
    count = len(contents)
    events = "\n".join(
        f"Event {n}: {_LINE_BREAK.sub(' ', text)}" for n, text in enumerate(contents, 1)
    )
    example = json.dumps([(5 + n) % 10 + 1 for n in range(min(count, 3))])
    prompt = BATCH_IMPORTANCE_PROMPT.format(events=events, count=count, example=example)
    answer = await ask_structured(
        llm,
        [Message("system", BATCH_IMPORTANCE_SYSTEM), Message("user", prompt)],
        ImportanceScores.for_count(count),
        expected=f"a JSON list of {count} integer scores from 1 to 10, one per event",
        max_tokens=8 * count + 16,
    )
    if answer.value is None:
        return None, (
            f"No usable batch of {count} scores in {_quoted(answer.replies)} "
            f"({'; then '.join(answer.errors)}); the events were rated one by one"
        )
    note = None
    if answer.obtained == "repaired":
        note = (
            f"Repaired after the reply {_quoted(answer.replies[:1])} was refused ({answer.reason})"
        )
    ratings = [
        ImportanceRating(score, scorer_label(llm), answer.obtained, answer.replies, note)
        for score in answer.value.scores()
    ]
    return ratings, note


def _quoted(replies: tuple[str, ...]) -> str:
    return " then ".join(repr(r[:80]) for r in replies)


@dataclass
class PendingScoring:
    """What one run of :func:`score_pending_entries` did; ``remaining`` are still pending."""

    scored: list[dict[str, Any]] = field(default_factory=list)
    remaining: int = 0
    error: str | None = None
    llm_calls: int = 0
    batch_fallbacks: list[str] = field(default_factory=list)

    @property
    def llm_scored(self) -> int:
        """Entries that got a score from the model (parsed or repaired) in this run."""
        return sum(1 for s in self.scored if s["importance_method"] in ("llm", "offline"))

    @property
    def kept_heuristic(self) -> int:
        """Entries whose scoring fell back, so they keep their heuristic score."""
        return len(self.scored) - self.llm_scored

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary; ``llm_scored`` never counts a fallback."""
        result: dict[str, Any] = {
            "scored": self.scored,
            "llm_scored": self.llm_scored,
            "kept_heuristic": self.kept_heuristic,
            "remaining": self.remaining,
        }
        if self.batch_fallbacks:
            result["batch_fallbacks"] = self.batch_fallbacks
        if self.error:
            result["error"] = self.error
        return result


async def score_pending_entries(
    unit: Unit, llm: LLM, max_per_tick: int = 3, batch_size: int = 10
) -> PendingScoring:
    """Upgrade up to ``max_per_tick`` heuristic scores with the LLM (sleep, compacting phase).

    Entries are taken oldest first; ones whose earlier scorings fell back go last, and
    after :data:`MAX_SCORING_ATTEMPTS` fallbacks an entry keeps its heuristic score for
    good. They are rated ``batch_size`` at a time, one LLM call per batch
    (:func:`score_importance_batch`); a batch of one, or a batch whose answers were both
    unusable, is rated one entry per call (:func:`score_importance_llm`), and the
    unusable batch is listed in ``batch_fallbacks``. Each report in ``scored`` says how
    the answer was obtained (``structured``: parsed, repaired or fallback; ``batch: true``
    when it came from a batch answer); a fallback stays ``heuristic``. A failing LLM stops
    the run and is reported in ``error``; nothing else changes.

    The entries come from the journal's pending index
    (:func:`~mindspace.journal.pending.pending_entries`): a run costs O(``max_per_tick``),
    not O(journal).
    """
    # The pending index finds the head of the queue without listing the journal.
    pending = pending_entries(unit, "scoring", max_per_tick)
    outcome = PendingScoring()
    chosen = pending.entries
    size = max(1, batch_size)
    settled = 0  # entries that leave the pending set in this run
    for start in range(0, len(chosen), size):
        chunk = chosen[start : start + size]
        try:
            settled += await _score_chunk(unit, llm, chunk, outcome)
        except _StoppedError:
            break
    outcome.remaining = pending.total - settled
    return outcome


class _StoppedError(Exception):
    """The model could not be reached; ``outcome.error`` says so."""


async def _score_chunk(
    unit: Unit, llm: LLM, chunk: Sequence[JournalEntry], outcome: PendingScoring
) -> int:
    """Rate ``chunk`` (one batch call, else one call per entry); returns entries settled."""
    if len(chunk) > 1:
        try:
            ratings, note = await score_importance_batch(llm, [e.content for e in chunk])
        except LLMError as exc:
            ids = [e.id for e in chunk]
            outcome.error = (
                f"The language model failed while rating entry {ids[0]!r} "
                f"(in a batch of entries {ids!r}): {exc}"
            )
            raise _StoppedError from exc
        outcome.llm_calls += 1 if ratings is not None and note is None else 2
        if ratings is not None:
            return sum(
                _record(unit, e, r, outcome, batch=True)
                for e, r in zip(chunk, ratings, strict=True)
            )
        outcome.batch_fallbacks.append(f"Entries {[e.id for e in chunk]!r}: {note}")
    settled = 0
    for entry in chunk:
        try:
            rating = await score_importance_llm(llm, entry.content, entry.importance)
        except LLMError as exc:
            outcome.error = f"The language model failed while rating entry {entry.id!r}: {exc}"
            raise _StoppedError from exc
        outcome.llm_calls += len(rating.replies)
        settled += _record(unit, entry, rating, outcome, batch=False)
    return settled


def _record(
    unit: Unit,
    entry: JournalEntry,
    rating: ImportanceRating,
    outcome: PendingScoring,
    *,
    batch: bool,
) -> int:
    """Store one rating and report it; returns 1 when the entry leaves the pending set."""
    report: dict[str, Any] = {
        "id": entry.id,
        "previous_importance": entry.importance,
        "importance": rating.score,
        "importance_method": rating.method,
        "structured": rating.obtained,
    }
    if batch:
        report["batch"] = True
    if rating.note:
        report["note"] = rating.note
    outcome.scored.append(report)
    if rating.usable:
        update = {"importance": rating.score, "importance_method": rating.method}
        unit.put(entry.model_copy(update=update))
        return 1
    attempts = entry.scoring_attempts + 1
    unit.put(entry.model_copy(update={"scoring_attempts": attempts}))
    return int(attempts >= MAX_SCORING_ATTEMPTS)
