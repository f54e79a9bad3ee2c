"""Persona protection: one guard for every place that stores what the assistant learns.

Session memory, reflection insights, fact extraction and sleep consolidation all keep
facts about the WORLD, PLAYERS and EVENTS. Content that talks about the assistant
itself ("I helped Alice", "The assistant suggested...", "my behavior") is rejected with
a suggestion to rephrase in the third person, so the model can retry.

The rules (measured on a labelled set in tests/workspace/persona_labelled.py; see
docs/memory.md, "The persona guard"):

* Someone else's words are not the assistant's: text in quotes is skipped when
  something outside the quotes says whose words they are (``Alice said "my sword is
  broken"``), and so is a line after a speaker's name (``Alice: I lost my map``),
  unless the speaker is the assistant or the label is a note's (``Note:``).
* First person outside them is a self-reference: ``I`` (and ``I'm``, ``I've``,
  ``I'll``, ``I'd``, ``Im``), a lowercase ``i``, ``me``, ``my``, ``myself``, ``we``,
  ``us``, ``our``, ``ours``, ``ourselves``.
* A capital ``I`` that is not the pronoun is skipped: a roman numeral after a name or a
  numbered noun ("World War I", "King Henry I", "Chapter I", "Henry I founded") and an
  initial ("I. M. Pei").
* "the assistant", "this assistant", "the AI", "the bot", "as an AI" and the
  assistant's own names are third-person self-references.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from mindspace.errors import PersonaViolationError

__all__ = ["PERSONA_ERROR", "PERSONA_SUGGESTION", "PersonaGuard", "PersonaMatch", "guard_figures"]

PERSONA_ERROR = "Content appears to reference assistant actions or identity"
PERSONA_SUGGESTION = (
    "Session memory should contain facts about the WORLD, PLAYERS, "
    "or EVENTS - not what you did. Rephrase in third-person."
)

# A standalone capital "I" (with its contractions) is first person in English prose.
_CAPITAL_I = re.compile(r"(?<![\w'.])I(?:'m|'ve|'ll|'d|m|ve)?(?![\w'])")
# Lowercased text loses the capital: a standalone "i" is the pronoun, except "i.e." and
# a list marker "(i)".
_LOWER_I = re.compile(r"(?<![\w'(])i(?:'m|'ve|'ll|'d)?(?![\w'.)])")
# "mine" is left out: "the silver mine" is far more common in a game world than the
# pronoun. A capital "US" is the country, not the pronoun.
_SELF_WORDS = re.compile(r"\b(?:me|my|myself|we|our|ours|ourselves)\b|\b(?:us|Us)\b", re.I)
_US_COUNTRY = "US"
_THIRD_PERSON_SELF = re.compile(
    r"\b(?:the|this) (?:assistant|ai|bot)\b|\bas an ai\b|^\s*(?:assistant|ai|bot)\s*:",
    re.IGNORECASE | re.MULTILINE,
)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Nouns a roman numeral follows: "World War I", "Chapter I", "Room I".
_NUMBERED = _words(
    "war part chapter act scene book volume vol phase stage type class tier level grade "
    "series mark mk section article appendix round season episode block room hall wing "
    "gate sector zone ward region district division league canto letter bowl plate "
    "figure table unit floor row column track platform tome"
)
# Titles before a regnal name: "King Henry I", "Pope Leo I".
_TITLES = _words(
    "king queen pope emperor empress tsar czar tsarina prince princess duke duchess lord "
    "lady sultan pharaoh saint st count countess baron earl kaiser shah khan archduke "
    "sir dame regent"
)
# Capitalised words that start a sentence before the pronoun: "Then I", "Should I".
_STARTERS = _words(
    "then today yesterday tomorrow tonight now so and but or yes no later once here there "
    "also still sometimes finally afterwards afterward maybe perhaps when while if as "
    "since because although though after before until where why how what who whom which "
    "earlier soon again next first last meanwhile instead otherwise anyway besides indeed "
    "often never always every this that these those thus hence therefore oh well ah hmm "
    "please sure okay ok hey hi hello thanks whatever whenever wherever unless whether "
    "should could would can may might must shall will do did does am was were have had "
    "has is are let once nor yet even just only"
)
# Words after which "I" is surely the pronoun: "Alice told Bob I would come".
_PRONOUN_NEXT = _words(
    "am 'm have 've will 'll would 'd shall should can could must may might do did don't "
    "didn't can't cannot won't wouldn't couldn't shouldn't think feel want need hope wish "
    "guess believe know love like hate"
)
# Verbs of telling before a name and then "I": "Tell Bob I said hello".
_TELLING = _words(
    "tell told telling tells ask asked asks promise promised assure assured show showed "
    "remind reminded warn warned inform informed convince convinced write wrote "
    "persuade persuaded"
)
# Labels before a colon that introduce a note, not someone's words.
_LABELS = _words(
    "note notes reminder todo to-do summary fact facts update observation insight lesson "
    "memory result status warning important reflection plan goal task idea ps edit "
    "question answer thought thoughts journal entry log conclusion decision mistake "
    "feedback self assistant ai bot me i my we"
)

_WORD_BEFORE = re.compile(r"(?:(?P<y>[A-Za-z][\w'-]*)[ \t]+)?(?P<x>[A-Za-z][\w'-]*) $")
_WORD_AFTER = re.compile(r"\s*(?P<w>[A-Za-z][\w']*)")
_INITIAL_AFTER = re.compile(r"\. ?[A-Z]")
_INITIAL_BEFORE = re.compile(r"(?:^|\s)[A-Z]\. ?$")
_SPEAKER = re.compile(
    r"^(?P<speaker>[A-Z][\w'.-]*(?:[ \t]+[\w'.-]+){0,2})[ \t]*:[ \t]+(?P<said>\S.*)$",
    re.MULTILINE,
)
_DOUBLE_QUOTED = re.compile(r'"[^"\n]*"|“[^”\n]*”')
_SINGLE_QUOTED = re.compile(r"(?<![\w])['‘](?=\S)[^'‘’\n]*?(?<=\S)['’](?![\w])")
_CURLY_APOSTROPHE = re.compile(r"(?<=\w)’(?=\w)")


@dataclass(frozen=True)
class PersonaMatch:
    """Where a text refers to the assistant."""

    phrase: str
    start: int


def _blank(text: str, start: int, end: int) -> str:
    # Same length, so positions still point into the original text; "~" is no word, so
    # a blanked quote never looks like a name before an "I".
    return text[:start] + "~" * (end - start) + text[end:]


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
        self._names = tuple(
            re.compile(rf"\b{re.escape(name.strip())}\b", re.IGNORECASE)
            for name in self_names
            if name.strip()
        )

    def find(self, content: str) -> PersonaMatch | None:
        """The first self-reference in ``content``, or None when it is clean."""
        text = _CURLY_APOSTROPHE.sub("'", content)
        found: list[PersonaMatch] = []
        for pattern in (_THIRD_PERSON_SELF, *self._names):
            if (hit := pattern.search(text)) is not None:
                found.append(PersonaMatch(content[hit.start() : hit.end()], hit.start()))
        text = self._others_words(text)
        for pattern, numeral in ((_CAPITAL_I, _not_the_pronoun), (_LOWER_I, _after_numbered_noun)):
            for hit in pattern.finditer(text):
                if not numeral(text, hit.start()):
                    found.append(PersonaMatch(_with_verb(content, hit), hit.start()))
                    break
        for hit in _SELF_WORDS.finditer(text):
            if hit.group(0) == _US_COUNTRY and not text.isupper():
                continue
            found.append(PersonaMatch(content[hit.start() : hit.end()], hit.start()))
            break
        return min(found, key=lambda m: (m.start, -len(m.phrase)), default=None)

    def _others_words(self, text: str) -> str:
        """``text`` with the words of others blanked: attributed quotes, speakers' lines."""
        for found in reversed(list(_SPEAKER.finditer(text))):
            speaker = found.group("speaker")
            labelled = any(word in _LABELS for word in speaker.lower().split())
            if labelled or any(p.search(speaker) for p in self._names):
                continue
            if _CAPITAL_I.search(speaker) or _SELF_WORDS.search(speaker):
                continue  # "Today I learned: ..." is a note, not a speaker
            text = _blank(text, found.start("said"), found.end("said"))
        quotes = [
            (m.start(), m.end())
            for pattern in (_DOUBLE_QUOTED, _SINGLE_QUOTED)
            for m in pattern.finditer(text)
        ]
        blanked = text
        for start, end in quotes:
            blanked = _blank(blanked, start, end)
        # An unattributed quote may be the assistant's own words: only quotes with
        # something outside them that says whose they are are skipped.
        outside = re.sub(r"[~\W]", "", blanked)
        return blanked if outside else text

    def is_own_name(self, name: str) -> bool:
        """Whether ``name`` is one of the assistant's own names (any case)."""
        return any(pattern.fullmatch(name.strip()) for pattern in self._names)

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


def _with_verb(content: str, hit: re.Match[str]) -> str:
    """The pronoun as matched, with the word after a bare "I" ("I helped"): what gave it away."""
    phrase = content[hit.start() : hit.end()]
    if len(phrase) == 1 and (after := _WORD_AFTER.match(content, hit.end())) is not None:
        return content[hit.start() : after.end()]
    return phrase


def _next_word(text: str, end: int) -> str:
    found = _WORD_AFTER.match(text, end)
    return found.group("w").lower() if found else ""


def _ends_clause(text: str, end: int) -> bool:
    """Whether nothing but punctuation, "of", "and" or "or" follows position ``end``."""
    rest = text[end:].lstrip()
    return not rest or not rest[0].isalpha() or _next_word(text, end) in ("of", "and", "or")


def _after_numbered_noun(text: str, start: int) -> bool:
    """A lowercase "i" after a numbered noun at a clause's end: "part i of the map"."""
    before = _WORD_BEFORE.search(text[:start])
    return (
        before is not None
        and before.group("x").lower() in _NUMBERED
        and _ends_clause(text, start + 1)
    )


def _not_the_pronoun(text: str, start: int) -> bool:
    """Whether the capital "I" at ``start`` is a roman numeral or an initial."""
    end = start + 1
    if text[end : end + 1] == "'" or text[end : end + 1].isalpha():
        return False  # a contraction: "I'm", "Ive"
    if _INITIAL_AFTER.match(text, end) or (
        text[end : end + 1] == "." and _INITIAL_BEFORE.search(text[:start])
    ):
        return True  # "I. M. Pei", "J. I. Rodale"
    before = _WORD_BEFORE.search(text[:start])
    if before is None:
        return False
    x, y = before.group("x"), (before.group("y") or "")
    word = x.lower()
    if word in _NUMBERED:
        # "Chapter I" is a numeral; "the gate I opened" is the pronoun.
        return x[0].isupper() or _ends_clause(text, end)
    if not x[0].isupper() or (x.isupper() and len(x) > 1):
        return False  # "Alice and I"; all-capital text has no names to go by
    if y.lower() in _TITLES:
        return True  # "King Henry I would never..."
    if word in _STARTERS or word.endswith("ly"):
        return False  # "Then I", "Should I", "Honestly I"
    # "Alice told Bob I would come" and "Tell Bob I said hello" are the pronoun; "Henry I
    # founded the abbey" and "the reign of Edward I" are numerals.
    return _next_word(text, end) not in _PRONOUN_NEXT and y.lower() not in _TELLING


def guard_figures(guard: PersonaGuard, labelled: Iterable[tuple[str, bool]]) -> dict[str, Any]:
    """Precision and recall of ``guard`` on ``(sentence, is_self_reference)`` pairs.

    A rejected self-reference is a true positive; a rejected world fact a false
    positive. The misjudged sentences are listed, so a failing figure says why.
    """
    tp = fp = fn = tn = 0
    false_positives: list[str] = []
    false_negatives: list[str] = []
    for sentence, is_self in labelled:
        rejected = not guard.is_clean(sentence)
        if rejected and is_self:
            tp += 1
        elif rejected:
            fp += 1
            false_positives.append(sentence)
        elif is_self:
            fn += 1
            false_negatives.append(sentence)
        else:
            tn += 1
    return {
        "sentences": tp + fp + fn + tn,
        "self_references": tp + fn,
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": tp / (tp + fn) if tp + fn else 1.0,
        "true_positives": tp,
        "true_negatives": tn,
        "false_positives": false_positives,
        "false_negatives": false_negatives,
    }
