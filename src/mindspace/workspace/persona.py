"""Persona protection: one guard for every place that stores what the assistant learns.

Session memory, reflection insights and fact extraction all keep facts about the
WORLD, PLAYERS and EVENTS. Content that talks about the assistant itself ("I helped
Alice", "The assistant suggested...", "my behavior") is rejected with a suggestion to
rephrase in the third person, so the model can retry.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from mindspace.errors import PersonaViolationError

__all__ = ["PERSONA_ERROR", "PERSONA_SUGGESTION", "PersonaGuard"]

PERSONA_ERROR = "Content appears to reference assistant actions or identity"
PERSONA_SUGGESTION = (
    "Session memory should contain facts about the WORLD, PLAYERS, "
    "or EVENTS - not what you did. Rephrase in third-person."
)

# A standalone capital "I" (with its contractions) is first person in English prose.
_FIRST_PERSON_I = r"(?<![\w'])I(?:'m|'ve|'ll|'d)?(?![\w'])"
# Lowercased text loses the capital, so match "i" only before a verb-like word.
_LOWER_I = (
    r"\bi (?:am|was|were|did|do|helped|help|should|need|will|would|have|had|think|feel|"
    r"suggested|told|said|can|could|must|want|learned|made|tried|gave|asked|noticed)\b"
)
# "mine" is left out: "the silver mine" is far more common in a game world than the pronoun.
_SELF_WORDS = r"\b(?:me|my|myself)\b"
_THIRD_PERSON_SELF = r"\b(?:the|this) (?:assistant|ai|bot)\b|\bas an ai\b"

_DEFAULT_PATTERNS: tuple[tuple[str, int], ...] = (
    (_FIRST_PERSON_I, 0),
    (_LOWER_I, re.IGNORECASE),
    (_SELF_WORDS, re.IGNORECASE),
    (_THIRD_PERSON_SELF, re.IGNORECASE),
)


@dataclass(frozen=True)
class PersonaMatch:
    """Where a text refers to the assistant."""

    phrase: str
    start: int


class PersonaGuard:
    """Detects self-referential content.

    Args:
        self_names: The assistant's own names (``"Barkeep"``); a sentence about one of
            them is a third-person self-reference too.
        suggestion: The suggestion sent back on rejection.
    """

    def __init__(
        self, self_names: Iterable[str] = (), *, suggestion: str = PERSONA_SUGGESTION
    ) -> None:
        self.suggestion = suggestion
        compiled = [re.compile(pattern, flags) for pattern, flags in _DEFAULT_PATTERNS]
        compiled.extend(
            re.compile(rf"\b{re.escape(name.strip())}\b", re.IGNORECASE)
            for name in self_names
            if name.strip()
        )
        self._patterns = tuple(compiled)

    def find(self, content: str) -> PersonaMatch | None:
        """The first self-reference in ``content``, or None when it is clean."""
        earliest: PersonaMatch | None = None
        for pattern in self._patterns:
            found = pattern.search(content)
            if found is None:
                continue
            candidate = PersonaMatch(found.group(0), found.start())
            if earliest is None or (candidate.start, -len(candidate.phrase)) < (
                earliest.start,
                -len(earliest.phrase),
            ):
                earliest = candidate
        return earliest

    def is_clean(self, content: str) -> bool:
        """Whether ``content`` is free of self-reference."""
        return self.find(content) is None

    def check(self, content: str) -> None:
        """Raise when ``content`` refers to the assistant.

        Raises:
            PersonaViolationError: with the spec's ``error``, ``suggestion`` and
                ``rejected_content`` (and ``matched``, the phrase that gave it away).
        """
        match = self.find(content)
        if match is not None:
            raise PersonaViolationError(
                PERSONA_ERROR,
                self.suggestion,
                rejected_content=content,
                matched=match.phrase,
            )

    def check_all(self, contents: Iterable[str]) -> None:
        """:meth:`check` each item, stopping at the first violation."""
        for content in contents:
            self.check(content)
