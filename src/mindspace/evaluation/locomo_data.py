"""Reading LoCoMo-format conversations and scoring retrieval against their evidence.

LoCoMo (Maharana et al., ACL 2024; CC BY-NC 4.0) holds long conversations between two
speakers in dated sessions, and questions whose answers are tied to dialog turns
(``evidence``: ids like ``D1:3`` = session 1, turn 3). Nothing here is specific to the
dev split: any file in the same format works.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = [
    "CATEGORIES",
    "Question",
    "Sample",
    "Session",
    "Turn",
    "load_samples",
    "normalize_evidence",
    "parse_session_time",
    "score_ranking",
]

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

_ID = re.compile(r"^D(\d+):(\d+)$")


@dataclass(frozen=True)
class Turn:
    """One dialog turn."""

    dia_id: str
    speaker: str
    text: str
    caption: str | None = None

    @property
    def content(self) -> str:
        """What was said, with a shared image described."""
        if self.caption:
            return f"{self.text} [shares a photo of {self.caption}]"
        return self.text


@dataclass(frozen=True)
class Session:
    """A dated session of turns."""

    number: int
    when: datetime
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Question:
    """A question with its category and normalised evidence turn ids."""

    text: str
    category: int
    evidence: tuple[str, ...]


@dataclass
class Sample:
    """One conversation with its questions."""

    sample_id: str
    speakers: tuple[str, str]
    sessions: list[Session]
    questions: list[Question] = field(default_factory=list)
    evidence_dropped: int = 0

    @property
    def turn_ids(self) -> set[str]:
        """Every dialog id in the conversation."""
        return {t.dia_id for s in self.sessions for t in s.turns}


def parse_session_time(text: str) -> datetime:
    """``'1:56 pm on 8 May, 2023'`` -> an aware datetime (UTC; the data has no zone).

    Raises:
        ValueError: the text is not in LoCoMo's format.
    """
    cleaned = " ".join(text.replace(",", " ").split())
    for pattern in ("%I:%M %p on %d %B %Y", "%H:%M on %d %B %Y", "%I:%M %p on %d %b %Y"):
        try:
            return datetime.strptime(cleaned, pattern).replace(tzinfo=UTC)
        except ValueError:
            continue
    raise ValueError(f"Unrecognised session time {text!r}; expected e.g. '1:56 pm on 8 May, 2023'")


def normalize_evidence(raw: Iterable[Any], known: set[str]) -> tuple[list[str], int]:
    """Evidence ids cleaned up (``"D8:6; D9:17"`` splits, ``"D:11:26"`` -> ``"D11:26"``).

    Returns the ids that exist in the conversation and how many were dropped
    (malformed beyond repair, or pointing at turns that do not exist).
    """
    kept: list[str] = []
    dropped = 0
    for item in raw:
        for piece in re.split(r"[;,\s]+", str(item)):
            piece = piece.strip()
            if not piece:
                continue
            fixed = re.sub(r"^D:?(\d+):(\d+)$", r"D\1:\2", piece)
            if _ID.match(fixed) and fixed in known:
                if fixed not in kept:
                    kept.append(fixed)
            else:
                dropped += 1
    return kept, dropped


def load_samples(path: Path) -> list[Sample]:
    """Every conversation in a LoCoMo-format JSON file.

    Raises:
        ValueError: the file is not LoCoMo-shaped (the message says what is missing).
    """
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"Cannot read {str(path)!r} as JSON: {exc}") from exc
    if not isinstance(data, list):
        raise ValueError(f"{str(path)!r} should hold a JSON list of samples")
    return [_sample(item, n) for n, item in enumerate(data)]


def _sample(item: dict[str, Any], n: int) -> Sample:
    try:
        conversation = item["conversation"]
        speakers = (str(conversation["speaker_a"]), str(conversation["speaker_b"]))
    except (KeyError, TypeError) as exc:
        raise ValueError(f"Sample {n} has no conversation/speaker_a/speaker_b") from exc
    sessions = []
    number = 1
    while f"session_{number}_date_time" in conversation:
        turns = conversation.get(f"session_{number}") or []
        if turns:  # some samples list dates of sessions that have no content
            sessions.append(
                Session(
                    number,
                    parse_session_time(conversation[f"session_{number}_date_time"]),
                    tuple(
                        Turn(
                            str(t["dia_id"]),
                            str(t["speaker"]),
                            str(t.get("text", "")),
                            t.get("blip_caption"),
                        )
                        for t in turns
                    ),
                )
            )
        number += 1
    sample = Sample(str(item.get("sample_id", f"sample-{n}")), speakers, sessions)
    known = sample.turn_ids
    for qa in item.get("qa", []):
        evidence, dropped = normalize_evidence(qa.get("evidence", []), known)
        sample.evidence_dropped += dropped
        sample.questions.append(Question(str(qa["question"]), int(qa["category"]), tuple(evidence)))
    return sample


def score_ranking(ranked: Sequence[str], evidence: Sequence[str]) -> dict[str, float]:
    """hit@5, hit@10, recall@5, recall@10 of one ranked list of dialog ids (0-1)."""
    gold = set(evidence)
    scores = {}
    for k in (5, 10):
        top = set(ranked[:k])
        found = len(gold & top)
        scores[f"hit@{k}"] = 1.0 if found else 0.0
        scores[f"recall@{k}"] = found / len(gold) if gold else 0.0
    return scores
