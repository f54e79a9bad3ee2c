"""Importance scoring (spec 004 §2): an immediate heuristic, then an LLM upgrade in sleep."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import Field, RootModel

from mindspace.errors import LLMError
from mindspace.journal.records import JournalEntry
from mindspace.llm.port import LLM, Message
from mindspace.llm.structured import Obtained, ask_structured, parse_structured
from mindspace.state.unit import Unit

__all__ = [
    "IMPORTANCE_EXPECTED",
    "IMPORTANCE_PROMPT",
    "MAX_SCORING_ATTEMPTS",
    "ImportanceRating",
    "ImportanceScore",
    "PendingScoring",
    "parse_importance",
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

MAX_SCORING_ATTEMPTS = 3
"""Scorings that fell back (each one question and one repair) before an entry keeps its
heuristic score for good."""


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
    """The score in an LLM reply, read strictly (see :mod:`mindspace.llm.structured`).

    The reply must be one integer from 1 to 10 (alone, or alone in a code block). Prose
    around a number is refused: "the first 2 digits may not match" is no score.

    Raises:
        LLMResponseError: the reply is not a score, with what was wrong.
    """
    return parse_structured(reply, ImportanceScore).root


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
    method: Literal["llm", "heuristic"]
    obtained: Obtained
    replies: tuple[str, ...]
    note: str | None = None

    @property
    def usable(self) -> bool:
        """Whether the model gave a score (otherwise the heuristic score stands)."""
        return self.method == "llm"


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
    return ImportanceRating(answer.value.root, "llm", answer.obtained, answer.replies, note)


def _quoted(replies: tuple[str, ...]) -> str:
    return " then ".join(repr(r[:80]) for r in replies)


@dataclass
class PendingScoring:
    """What one run of :func:`score_pending_entries` did; ``remaining`` are still pending."""

    scored: list[dict[str, Any]] = field(default_factory=list)
    remaining: int = 0
    error: str | None = None

    @property
    def llm_scored(self) -> int:
        """Entries that got a score from the model (parsed or repaired) in this run."""
        return sum(1 for s in self.scored if s["importance_method"] == "llm")

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
        if self.error:
            result["error"] = self.error
        return result


async def score_pending_entries(unit: Unit, llm: LLM, max_per_tick: int = 3) -> PendingScoring:
    """Upgrade up to ``max_per_tick`` heuristic scores with the LLM (sleep, compacting phase).

    Entries are taken oldest first; ones whose earlier scorings fell back go last, and
    after :data:`MAX_SCORING_ATTEMPTS` fallbacks an entry keeps its heuristic score for
    good. Each report in ``scored`` says how the answer was obtained (``structured``:
    parsed, repaired or fallback); a fallback stays ``heuristic``. A failing LLM stops the
    batch and is reported in ``error``; nothing else changes.
    """
    pending = sorted(
        (
            e
            for e in unit.all(JournalEntry)
            if e.importance_method == "heuristic" and e.scoring_attempts < MAX_SCORING_ATTEMPTS
        ),
        key=lambda e: (e.scoring_attempts, e.id),
    )
    outcome = PendingScoring()
    settled = 0  # entries that leave the pending set in this run
    batch = pending[: max(0, max_per_tick)]
    for entry in batch:
        try:
            rating = await score_importance_llm(llm, entry.content, entry.importance)
        except LLMError as exc:
            outcome.error = f"The language model failed while rating entry {entry.id!r}: {exc}"
            break
        report: dict[str, Any] = {
            "id": entry.id,
            "previous_importance": entry.importance,
            "importance": rating.score,
            "importance_method": rating.method,
            "structured": rating.obtained,
        }
        if rating.note:
            report["note"] = rating.note
        if rating.usable:
            unit.put(
                entry.model_copy(update={"importance": rating.score, "importance_method": "llm"})
            )
            settled += 1
        else:
            attempts = entry.scoring_attempts + 1
            unit.put(entry.model_copy(update={"scoring_attempts": attempts}))
            settled += attempts >= MAX_SCORING_ATTEMPTS
        outcome.scored.append(report)
    outcome.remaining = len(pending) - settled
    return outcome
