"""The offline model's journal skills: importance ratings, reflection questions, insights.

Each recognises one of the journal's own prompts and answers it by fixed, visible rules
(counting words in the text it was given); nothing is invented beyond that text.

* Importance: the spec's heuristic score of the content, without a source modifier
  (the prompt carries no source); a batch question ("Event <n>: ..." lines) gets a JSON
  list of those scores, one per event in order.
* Questions: about the words that carry the most importance across the entries, and
  the most frequent name.
* Insights: per question, the word shared by most of its evidence, citing exactly the
  evidence that contains it; questions whose evidence shares no word get no insight.
"""

from __future__ import annotations

import json
import re
import string
from collections import Counter
from collections.abc import Sequence

from mindspace.journal.importance import BATCH_IMPORTANCE_HEAD, score_importance_heuristic
from mindspace.llm.port import Message, ToolSchema
from mindspace.text import STOPWORDS, keywords

__all__ = [
    "JOURNAL_SKILLS",
    "batch_importance_skill",
    "importance_skill",
    "insights_skill",
    "questions_skill",
]

_IMPORTANCE_HEAD = "Rate the significance of this event (1-10):"
_QUESTIONS_HEAD = "Generate 3 reflection questions"
_INSIGHTS_HEAD = "Generate insights that answer these reflection questions"

_ENTRY = re.compile(r"^\[(journal_\d+)\] \(importance (\d+)\) (.*)$", re.MULTILINE)
_EVENT = re.compile(r"^Event (\d+): (.*)$", re.MULTILINE)
_EVIDENCE = re.compile(r"^\[([\w.:-]+)\] (.*)$")
_QUESTION = re.compile(r"^Question \d+: (.*)$")
_STRIP = string.punctuation + "“”‘’"

_GENERIC_QUESTIONS = (
    "What patterns appear in player behavior?",
    "How have relationships in the world changed?",
    "What recurring challenges have emerged?",
)


def _user_text(messages: Sequence[Message]) -> str:
    for message in reversed(messages):
        if message.role == "user" and message.content:
            return message.content
    return ""


def _words(text: str) -> list[str]:
    """Content words (:func:`mindspace.text.keywords`) of at least 4 letters."""
    return [w for w in keywords(text) if len(w) >= 4 and w.isalpha()]


def _names(text: str) -> list[str]:
    """Capitalised words after the first word of the text (a rough guess at names)."""
    tokens = [t.strip(_STRIP) for t in text.split()[1:]]
    return [t for t in tokens if t[:1].isupper() and t.isalpha() and t.lower() not in STOPWORDS]


def _as_written(word: str, texts: Sequence[str]) -> str:
    """``word`` as the texts mostly spell it ("Alice" rather than "alice")."""
    forms = Counter(
        token for text in texts for token in (t.strip(_STRIP) for t in text.split())
        if token.lower() == word
    )  # fmt: skip
    return min(forms, key=lambda f: (-forms[f], f)) if forms else word


def importance_skill(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> str | None:
    """Rate an event with the spec's heuristic (no source modifier)."""
    text = _user_text(messages)
    if not text.startswith(_IMPORTANCE_HEAD):
        return None
    body = text[len(_IMPORTANCE_HEAD) :].split("\n\n1 = mundane routine", 1)[0].strip()
    return str(score_importance_heuristic(body, "", []))


def batch_importance_skill(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> str | None:
    """Rate each listed event with the spec's heuristic: a JSON list, in event order."""
    text = _user_text(messages)
    if not text.startswith(BATCH_IMPORTANCE_HEAD):
        return None
    events = text[len(BATCH_IMPORTANCE_HEAD) :].split("\n\n1 = mundane routine", 1)[0]
    scores = [score_importance_heuristic(body, "", []) for _, body in _EVENT.findall(events)]
    return json.dumps(scores)


def questions_skill(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> str | None:
    """Three questions about the most important words and the most frequent name."""
    text = _user_text(messages)
    if not text.startswith(_QUESTIONS_HEAD):
        return None
    weight: Counter[str] = Counter()
    names: Counter[str] = Counter()
    for _, importance, content in _ENTRY.findall(text):
        for word in set(_words(content)):
            weight[word] += int(importance)
        names.update(set(_names(content)))
    ranked = sorted(weight, key=lambda w: (-weight[w], w))
    name = min(names, key=lambda n: (-names[n], n)) if names else None
    contents = [content for _, _, content in _ENTRY.findall(text)]
    themes = [_as_written(w, contents) for w in ranked if name is None or w != name.lower()][:2]
    if not themes:
        return json.dumps(list(_GENERIC_QUESTIONS))
    questions = [f"What patterns connect the events involving '{themes[0]}'?"]
    if name:
        questions.append(f"How is the situation of {name} changing?")
    second = themes[1] if len(themes) > 1 else themes[0]
    questions.append(f"What recurring challenges involve '{second}'?")
    if len(questions) < 3:
        questions.append(_GENERIC_QUESTIONS[1])
    return json.dumps(questions[:3])


def insights_skill(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> str | None:
    """Per question, the word most of its evidence shares, citing that evidence."""
    text = _user_text(messages)
    if not text.startswith(_INSIGHTS_HEAD):
        return None
    # In the reflection_cont context the evidence is the tool result, in the system
    # message; asked directly, it is in the request itself.
    everything = "\n".join(m.content or "" for m in messages)
    blocks: list[tuple[str, list[tuple[str, str]]]] = []
    for line in everything.splitlines():
        asked_line = _QUESTION.match(line)
        if asked_line:
            blocks.append((asked_line.group(1), []))
            continue
        evidence_line = _EVIDENCE.match(line)
        if evidence_line and blocks:
            blocks[-1][1].append((evidence_line.group(1), evidence_line.group(2)))
    insights: list[dict[str, object]] = []
    used: set[str] = set()
    for question, items in blocks:
        asked = set(_words(question))
        counts: Counter[str] = Counter()
        for _, content in items:
            counts.update(set(_words(content)))
        shared = [w for w in counts if counts[w] >= 2 and w not in used]
        if not shared:
            continue
        theme = min(shared, key=lambda w: (-counts[w], w not in asked, w))
        used.add(theme)
        cited = [key for key, content in items if theme in _words(content)]
        shown = _as_written(theme, [content for _, content in items])
        insights.append(
            {
                "insight": f"Events involving '{shown}' recur: {len(cited)} of the "
                f"{len(items)} entries gathered on this question mention it.",
                "evidence": cited,
            }
        )
    return json.dumps(insights)


JOURNAL_SKILLS = (importance_skill, batch_importance_skill, questions_skill, insights_skill)
"""The journal skills, in the order the offline model tries them."""
