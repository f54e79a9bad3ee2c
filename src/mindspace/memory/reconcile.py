"""Reconcile a new fact with the memories nearest it: add it, restate one, or replace one.

Every memory write goes through this (``store_memory``, what people said, the night's
consolidation and mining: :meth:`mindspace.memory.semantic.SemanticMemory.astore_all`).
Like Mem0's ADD / NOOP / UPDATE, with Zep/Graphiti's bi-temporal validity for updates:

- **refuse**: a question is not a fact (:func:`~mindspace.memory.utterance.is_question`,
  the one rule of what asks). A speaker's own words quoted verbatim are kept even when
  they ask something (they are a record of what was said, and recall ranks questions
  below answers), never a fact written as a question.
- **restate** (NOOP): the same speaker said the same thing again: one memory, one more
  source. Same words, or a near-identical claim (cosine at or above
  ``same_threshold``), or a paraphrase with the same content words once the speaker's
  name and "I" are set aside ("Dave prefers red wine" from Dave = Dave's "I prefer red
  wine"), with the same numbers and the same polarity ("likes" is not "does not like").
- **update**: the same speaker's newer fact about the same single-valued attribute
  (where they live, work, their partner, age, name, a favourite thing), or one that
  says it changed ("now", "no longer", "moved", "switched"), replaces the current one:
  the old memory keeps its text and gets ``valid_to`` and ``superseded_by``.
- **add**: anything else.

These rules need no model. Where a model is available (the night), it is asked about
the close calls only (:mod:`mindspace.memory.judgement`); an answer that does not parse
or names no candidate leaves the rules' decision.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from mindspace.embeddings.port import Vectors
from mindspace.memory.records import Memory
from mindspace.memory.utterance import is_question, sentences
from mindspace.text import normalized, tokenize

__all__ = [
    "Action",
    "Decision",
    "Fact",
    "Near",
    "ReconcileRules",
    "attributes",
    "content_terms",
    "distinct",
    "same_claim",
    "subject",
]

Action = Literal["add", "restate", "update", "refuse"]

_CLAUSE = re.compile(r"[,;:]\s+|\s+(?:but|and|so|because|while|although)\s+", re.IGNORECASE)
_NUMBER = re.compile(
    r"\d+(?:[.,]\d+)?|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    r"|twenty|thirty|hundred|thousand|dozen|once|twice)\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(r"\b(?:not|no|never|none|nothing|nobody|neither|nor)\b|n't\b", re.I)


def same_claim(a: str, b: str) -> bool:
    """Two texts claim alike: the same numbers and the same polarity.

    Embeddings barely tell 50 gold from 80 gold, or "likes" from "does not like": a
    fact with other numbers or the opposite polarity is news, not a restatement.
    """
    same_numbers = _numbers(a) == _numbers(b)
    same_polarity = len(_NEGATION.findall(a)) % 2 == len(_NEGATION.findall(b)) % 2
    return same_numbers and same_polarity


def _numbers(text: str) -> list[str]:
    return sorted(n.casefold() for n in _NUMBER.findall(text))


@lru_cache(maxsize=4096)
def content_terms(text: str, speaker: str | None) -> frozenset[str]:
    """The stemmed content words of a fact, without its speaker's name.

    "I prefer red wine" from Dave and "Dave prefers red wine" both give
    ``{"prefer", "red", "wine"}``: "I" is a stopword, the name is set aside.
    """
    own = set(tokenize(speaker)) if speaker else set()
    return frozenset(t for t in tokenize(text) if t not in own)


# Single-valued attributes of a person: a newer value replaces the older one. A
# favourite is an attribute per thing ("favourite colour" and "favourite food" are two).
_ATTRIBUTE_CUES: dict[str, re.Pattern[str]] = {
    name: re.compile(pattern, re.IGNORECASE)
    for name, pattern in {
        "residence": r"\b(?:live[sd]?|living|reside[sd]?|residing)\s+(?:in|at|on|near)\b"
        r"|\bmov(?:e|ed|ing)\s+(?:to|into|back)\b|\brelocat\w*|\bhometown\b|\bhome is\b",
        "work": r"\b(?:work|works|working)\s+(?:at|for|as)\b|\bjob\b|\bemploy(?:ed|er)\b"
        r"|\bhired\b|\bcareer\b|\bprofession\b|\boccupation\b",
        "partner": r"\b(?:married|engaged|dating|divorced|single|girlfriend|boyfriend|partner"
        r"|husband|wife|fianc\w*)\b",
        "age": r"\b\d+\s+years?\s+old\b|\bturned\s+\d+\b|\bmy age\b",
        "name": r"\bname is\b|\bnamed\b|\bgoes by\b|\bnickname\b",
        "contact": r"\bphone number\b|\bemail\b|\baddress is\b",
    }.items()
}
_FAVOURITE = re.compile(r"\bfavou?rite\s+([^\W\d_]+)", re.IGNORECASE)
_CHANGE = re.compile(
    r"\b(?:now|no longer|any ?more|moved|switched|changed|instead|these days|nowadays|"
    r"quit|left|new|currently)\b",
    re.IGNORECASE,
)
_OWN = frozenset(
    [
        "name",
        "favourite",
        "favorite",
        "job",
        "phone",
        "email",
        "address",
        "age",
        "birthday",
        "husband",
        "wife",
        "partner",
        "girlfriend",
        "boyfriend",
        "fiance",
        "fiancee",
        "home",
        "hometown",
        "work",
        "employer",
    ]
)


@lru_cache(maxsize=4096)
def attributes(text: str) -> frozenset[str]:
    """The single-valued attributes a fact is about (``residence``, ``favourite:colour``...)."""
    named = {name for name, cue in _ATTRIBUTE_CUES.items() if cue.search(text)}
    named.update(f"favourite:{m.group(1).casefold()}" for m in _FAVOURITE.finditer(text))
    return frozenset(named)


@lru_cache(maxsize=4096)
def subject(text: str, speaker: str | None) -> str:
    """Whom a fact is about: ``"self"`` (its speaker), or the words naming someone else.

    "I live in Paris" and "Dave lives in Paris" from Dave, "My name is Dave": ``self``;
    "My sister lives in London": ``"my sister"``; "Alice moved": ``"alice"``.
    """
    found = normalized(text).split()
    if not found:
        return ""
    own = normalized(speaker).split() if speaker else []
    first = found[0]
    if first in {"i", "im", "ive", "id", "ill"} or (own and found[: len(own)] == own):
        return "self"
    if first == "my" and len(found) > 1:
        return "self" if found[1] in _OWN else f"my {found[1]}"
    return first


def _says_change(text: str) -> bool:
    """The text says something changed ("now", "no longer", "moved", "switched")."""
    return bool(_CHANGE.search(text))


@dataclass(frozen=True)
class Fact:
    """The new fact being written.

    Attributes:
        content: Its text.
        source_entity: Who said it (None: the world, or the assistant's own note).
        occurred_at: When it was said.
        source_trust: How far it is trusted.
        verbatim: The speaker's own words, quoted as they came.
    """

    content: str
    source_entity: str | None
    occurred_at: str
    source_trust: float = 0.8
    verbatim: bool = False


@dataclass(frozen=True)
class Near:
    """A memory near the new fact: its cosine similarity (None: no comparable vectors)."""

    memory: Memory
    similarity: float | None


@dataclass(frozen=True)
class Decision:
    """What to do with a new fact.

    Attributes:
        action: ``add``, ``restate`` (one more source of ``targets[0]``), ``update``
            (``targets`` are replaced by the new fact) or ``refuse``.
        targets: The memories restated or replaced.
        reason: Why, in a few words (shown in the night's report and tool results).
        by: Who decided: the rules, or the model within what the rules allow.
    """

    action: Action
    targets: tuple[str, ...] = ()
    reason: str = ""
    by: Literal["rules", "model"] = "rules"


@dataclass(frozen=True)
class ReconcileRules:
    """The model-independent rules and their thresholds.

    Attributes:
        same_threshold: Cosine at or above which the same speaker's claim restates a memory.
        paraphrase_threshold: Least cosine of a paraphrase restating a memory when their
            content words (speaker set aside) overlap by ``paraphrase_overlap`` or more.
        paraphrase_overlap: Jaccard overlap of content words for a paraphrase.
        update_threshold: Least cosine of a newer fact replacing a memory about the same
            single-valued attribute.
        change_threshold: Least cosine of a newer fact that says it changed replacing a
            memory it shares content words with.
        min_verbatim_terms: A verbatim line with fewer content words ("Thanks!", "Wow,
            great") is talk, not a fact: it restates nothing and replaces nothing.
        trust_margin: A fact this much less trusted never replaces a memory.
    """

    same_threshold: float = 0.92
    paraphrase_threshold: float = 0.75
    paraphrase_overlap: float = 0.6
    update_threshold: float = 0.45
    change_threshold: float = 0.7
    min_verbatim_terms: int = 2
    trust_margin: float = 0.2

    def decide(self, fact: Fact, near: Sequence[Near]) -> Decision:
        """The rules' decision for ``fact`` given the memories ``near`` it (best first)."""
        if is_question(fact.content):
            if not fact.verbatim:
                return Decision("refuse", reason="a question is not a fact")
            # Asked in so many words: a record of what was said, restating no fact.
            return Decision("add", reason="a question, kept as said")
        terms = content_terms(fact.content, fact.source_entity)
        if not terms or (fact.verbatim and len(terms) < self.min_verbatim_terms):
            return Decision("add", reason="too few content words to compare")
        same = [n for n in near if _same_speaker(fact, n.memory) and n.memory.current]
        wanted = normalized(fact.content)
        for n in same:
            if normalized(n.memory.content) == wanted:
                return Decision("restate", (n.memory.id,), "the same words")
        for n in same:
            if self._restates(fact, terms, n):
                return Decision("restate", (n.memory.id,), "the same claim")
        for n in same:
            if not fact.verbatim and self._quoted_in(fact, terms, n):
                return Decision("restate", (n.memory.id,), "said in the speaker's own words")
        replaced = tuple(n.memory.id for n in same if self._replaces(fact, terms, n))
        if replaced:
            return Decision("update", replaced, "a newer value of the same attribute")
        return Decision("add", reason="new")

    def close_calls(self, fact: Fact, near: Sequence[Near]) -> list[Near]:
        """The same speaker's current memories near enough to ask a model about."""
        return [
            n
            for n in near
            if _same_speaker(fact, n.memory)
            and n.memory.current
            and n.similarity is not None
            and n.similarity >= self.update_threshold
        ]

    def _restates(self, fact: Fact, terms: frozenset[str], near: Near) -> bool:
        other = near.memory
        if not same_claim(fact.content, other.content) or near.similarity is None:
            return False
        if near.similarity < self.paraphrase_threshold or is_question(other.content):
            return False
        theirs = content_terms(other.content, other.source_entity)
        if terms - theirs and theirs - terms:
            # A word swapped for another ("writing" for "reading", "cat" for "dog") is
            # another fact, however close the vectors; a restatement adds or drops words.
            return False
        return near.similarity >= self.same_threshold or (
            _overlap(terms, theirs) >= self.paraphrase_overlap
        )

    def _quoted_in(self, fact: Fact, terms: frozenset[str], near: Near) -> bool:
        """A fact drawn from what its speaker said, every content word of it in their words.

        The night's mining writes "Ana adopted a grey kitten" from Ana's "I adopted a
        grey kitten last weekend!", which formation already keeps word for word: that is
        one thing said, so the write-up becomes one more source of the quote, not a
        second memory that pushes other facts out of recall. A write-up that adds a word
        the speaker did not say is kept as a fact of its own.
        """
        other = near.memory
        if not (other.sources and other.sources[0].verbatim):
            return False
        if len(terms) < self.min_verbatim_terms or is_question(other.content):
            return False
        # One sentence of the quote says it all: its numbers and polarity decide (a long
        # message's other sentences may well have a "not" or a number of their own).
        for sentence in sentences(other.content):
            if terms <= content_terms(sentence, other.source_entity):
                # ... and within it the clause that does ("It's a lot to take in, but
                # I'm not scared": the "not" is the other clause's).
                said = next(
                    (
                        clause
                        for clause in _CLAUSE.split(sentence)
                        if terms <= content_terms(clause, other.source_entity)
                    ),
                    sentence,
                )
                return same_claim(fact.content, said)
        if near.similarity is not None and near.similarity < self.update_threshold:
            return False
        return terms <= content_terms(other.content, other.source_entity) and same_claim(
            fact.content, other.content
        )

    def _replaces(self, fact: Fact, terms: frozenset[str], near: Near) -> bool:
        other = near.memory
        if near.similarity is None or fact.source_trust < other.source_trust - self.trust_margin:
            return False
        if _is_talk(other, self.min_verbatim_terms) or is_question(other.content):
            return False
        if subject(fact.content, fact.source_entity) != subject(other.content, other.source_entity):
            return False
        shared = attributes(fact.content) & attributes(other.content)
        if shared and near.similarity >= self.update_threshold:
            return True
        theirs = content_terms(other.content, other.source_entity)
        return (
            _says_change(fact.content)
            and near.similarity >= self.change_threshold
            and bool(terms & theirs)
        )


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def _same_speaker(fact: Fact, memory: Memory) -> bool:
    """Both come from the same entity, or both from none (the world, the assistant)."""
    if fact.source_entity is None or memory.source_entity is None:
        return fact.source_entity is None and memory.source_entity is None
    return fact.source_entity.casefold() == memory.source_entity.casefold()


def _is_talk(memory: Memory, least: int) -> bool:
    """A verbatim line too short to hold a fact."""
    verbatim = bool(memory.sources) and memory.sources[0].verbatim
    return verbatim and len(content_terms(memory.content, memory.source_entity)) < least


def distinct(memories: Sequence[Memory], threshold: float, limit: int | None = None) -> list[int]:
    """The positions of ``memories`` (best first) that say something new.

    A memory restating a better-ranked one is left out: the same speaker's same words,
    or a near-identical claim (cosine of their vectors at or above ``threshold``, same
    numbers and polarity, no word swapped for another); or, from another speaker, the
    same words about someone else (two people telling the same news). Stores written
    before reconciling kept such copies; recall shows each fact once.

    Args:
        memories: The memories, best first.
        threshold: The cosine at or above which two claims can be one.
        limit: Only the first ``limit`` positions are wanted (None: all). A memory is
            compared with the kept ones before it only, so the first ``limit`` come out
            the same; the memories after the last of them are never looked at.
    """
    kept: list[_Said] = []
    positions: list[int] = []
    if limit is not None and limit <= 0:
        return positions
    for i, memory in enumerate(memories):
        # Each memory's words, speaker and claim are worked out once, not once per pair
        # (recall compares up to ~45 hits on every tick), and only for those reached.
        said = _Said(memory)
        if not any(_same_fact(said, other, threshold) for other in kept):
            kept.append(said)
            positions.append(i)
            if len(positions) == limit:
                break
    return positions


class _Said:
    """What :func:`distinct` compares of one memory, each part computed when first needed."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.vector: Vectors | None = memory.vector()
        self.words = normalized(memory.content)
        self.speaker = None if memory.source_entity is None else memory.source_entity.casefold()
        self._claim: tuple[list[str], int] | None = None

    @property
    def claim(self) -> tuple[list[str], int]:
        """The numbers and the polarity (negations, mod 2) that :func:`same_claim` compares."""
        if self._claim is None:
            text = self.memory.content
            self._claim = (_numbers(text), len(_NEGATION.findall(text)) % 2)
        return self._claim


def _same_fact(a: _Said, b: _Said, threshold: float) -> bool:
    same_words = a.words == b.words
    if a.speaker is None or b.speaker is None:
        same_speaker = a.speaker is None and b.speaker is None
    else:
        same_speaker = a.speaker == b.speaker
    if not same_speaker:
        return (
            same_words
            and subject(a.memory.content, a.memory.source_entity) != "self"
            and subject(b.memory.content, b.memory.source_entity) != "self"
        )
    if same_words:
        return True
    va, vb = a.vector, b.vector
    if va is None or vb is None or a.memory.embedder != b.memory.embedder:
        return False
    if va.shape != vb.shape or float(va @ vb) < threshold or a.claim != b.claim:
        return False
    mine, theirs = (
        content_terms(a.memory.content, a.memory.source_entity),
        content_terms(b.memory.content, b.memory.source_entity),
    )
    return not (mine - theirs and theirs - mine)  # no word swapped for another
