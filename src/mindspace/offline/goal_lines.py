"""The offline model's reading of the goal tree in a prompt, and of what a request names.

Split from :mod:`mindspace.offline.workspace`: the goal lines of the prompt's ``## Goals``
section, and the content words that match a request to a goal (done-words left out).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mindspace.text import STOPWORDS, words

__all__ = ["REQUEST_STOPWORDS", "GoalLine", "content_words", "goal_lines", "matching_leaves"]

_GOAL = re.compile(
    r"^(?P<indent> *)- (?P<id>goal_\S+) \[\w+\] (?P<desc>.+) - (?P<progress>[\d.]+)% "
    r"\((?P<status>\w+)\)$",
    re.MULTILINE,
)
# Requests add their own filler ("please also work on ...") to the shared stopwords.
REQUEST_STOPWORDS = STOPWORDS | {"also", "please", "work"}
# Words that say *that* something is done, not *what*: never used to match goals.
_GENERIC_WORDS = (
    "finished completed complete done built build ready raised laid installed fixed repaired "
    "stocked furnished inspected gathered planned chosen decided drafted written collected "
    "outlined reviewed found cleaned mended hung painted halfway half started begun begin "
    "checked tested make made set get got"
)
_GENERIC_PREFIXES = frozenset(w[:5] for w in _GENERIC_WORDS.split())


@dataclass(frozen=True)
class GoalLine:
    """One line of the prompt's goal tree."""

    id: str
    description: str
    progress: float
    status: str
    leaf: bool


def goal_lines(prompt: str) -> list[GoalLine]:
    """The goal tree's lines in the prompt's ``## Goals`` section, a leaf marked as such."""
    section = prompt.split("## Goals", 1)[1] if "## Goals" in prompt else ""
    found = list(_GOAL.finditer(section))
    lines: list[GoalLine] = []
    for n, m in enumerate(found):
        depth = len(m.group("indent"))
        child = n + 1 < len(found) and len(found[n + 1].group("indent")) > depth
        lines.append(
            GoalLine(
                m.group("id"),
                m.group("desc"),
                float(m.group("progress")),
                m.group("status"),
                not child,
            )
        )
    return lines


def content_words(text: str) -> set[str]:
    """Content words cut to five letters ("rooms", "kitch"), without done-words."""
    return {
        w[:5] for w in words(text) if w not in REQUEST_STOPWORDS and w[:5] not in _GENERIC_PREFIXES
    }


def matching_leaves(said: str, goals: list[GoalLine]) -> list[GoalLine]:
    """The active leaf goals that share the most of their content words with ``said``."""
    wanted = content_words(said)
    scored: list[tuple[float, GoalLine]] = []
    for goal in goals:
        if not goal.leaf or goal.status != "active":
            continue
        own = content_words(goal.description)
        shared = wanted & own
        if own and shared:
            scored.append((len(shared) / len(own), goal))
    if not scored:
        return []
    best = max(score for score, _ in scored)
    return [goal for score, goal in scored if score == best]
