"""Importance scoring (spec 004 §2): an immediate heuristic, then an LLM upgrade in sleep."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from mindspace.errors import LLMError
from mindspace.journal.records import JournalEntry
from mindspace.llm.port import LLM, Message
from mindspace.state.unit import Unit

__all__ = [
    "IMPORTANCE_PROMPT",
    "MAX_SCORING_ATTEMPTS",
    "ImportanceRating",
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
"""LLM replies without a usable score before an entry stops being retried."""


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


# "1-10", "1 to 10", "out of 10", "/10" describe the scale, not the score.
_SCALE = re.compile(
    r"\b1\s*(?:-|–|to)\s*10\b|\bout\s+of\s+10\b|/\s*10\b|\bscale\s+of\s+10\b", re.IGNORECASE
)
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?")


def parse_importance(reply: str) -> int | None:
    """The score in an LLM reply (not yet clamped), or None when it holds no number.

    The first number that is not part of the scale ("1-10", "out of 10", "/10") wins, so
    "I'd rate it 7 out of 10" gives 7 and "On a scale of 1-10, this is an 8" gives 8.
    Decimals round half up.
    """
    text = _SCALE.sub(" ", reply)
    found = _NUMBER.search(text)
    if found is None:
        return None
    value = float(found.group(0))
    return int(value + 0.5) if value >= 0 else -int(-value + 0.5)


@dataclass(frozen=True)
class ImportanceRating:
    """What the LLM made of one entry."""

    score: int
    method: Literal["llm", "heuristic"]
    reply: str
    parsed: int | None
    note: str | None = None

    @property
    def usable(self) -> bool:
        """Whether the reply held a score (otherwise the heuristic score stands)."""
        return self.method == "llm"


async def score_importance_llm(llm: LLM, content: str, fallback: int) -> ImportanceRating:
    """Ask the LLM to rate ``content``; keep ``fallback`` when the reply holds no number.

    Out-of-range numbers are clamped to 1-10 and the clamp is noted.

    Raises:
        LLMError: the model could not be reached.
    """
    prompt = IMPORTANCE_PROMPT.format(content=content)
    response = await llm.complete(
        [Message("system", IMPORTANCE_SYSTEM), Message("user", prompt)], max_tokens=16
    )
    reply = (response.text or "").strip()
    parsed = parse_importance(reply)
    if parsed is None:
        return ImportanceRating(
            fallback,
            "heuristic",
            reply,
            None,
            f"No score in the reply {reply[:80]!r}; the heuristic score {fallback!r} stands",
        )
    score = max(1, min(10, parsed))
    note = None if score == parsed else f"The reply's score {parsed!r} was clamped to {score!r}"
    return ImportanceRating(score, "llm", reply, parsed, note)


@dataclass
class PendingScoring:
    """What one run of :func:`score_pending_entries` did; ``remaining`` are still pending."""

    scored: list[dict[str, Any]] = field(default_factory=list)
    remaining: int = 0
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary."""
        result: dict[str, Any] = {"scored": self.scored, "remaining": self.remaining}
        if self.error:
            result["error"] = self.error
        return result


async def score_pending_entries(unit: Unit, llm: LLM, max_per_tick: int = 3) -> PendingScoring:
    """Upgrade up to ``max_per_tick`` heuristic scores with the LLM (sleep, compacting phase).

    Entries are taken oldest first; ones whose earlier replies held no score go last, and
    after :data:`MAX_SCORING_ATTEMPTS` such replies an entry keeps its heuristic score for
    good. A failing LLM stops the batch and is reported in ``error``; nothing else changes.
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
