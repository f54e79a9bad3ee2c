"""The offline model answers questions from what the prompt and recall give it.

A question about the speaker ("what do I like to drink?", "do you remember me?") or about
someone else ("what do you know about Alice?") is answered from the facts mindspace
puts in the prompt: session memory's ``Key facts``, the speaker's profile in ``## Entity
Context`` and the ``## Semantic Memories`` recalled for the event, plus what a
``recall_memories`` call returned. A memory kept verbatim ("I prefer red wine", from
Dave) is read in the third person first ("Dave prefers red wine"). The best facts are
the ones that share the question's topic (with a small lexicon: "drink" finds "wine");
the reply speaks to the speaker in the second person. Nothing here stores anything.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from mindspace.llm.port import Message
from mindspace.offline.memory import split_clauses, third_person
from mindspace.text import STOPWORDS, words

__all__ = [
    "Question",
    "answer",
    "known_facts",
    "question_of",
    "recall_query",
    "to_speaker",
    "tool_results",
]

QuestionKind = Literal["remember", "speaker", "other", "self", "general"]

_WH = re.compile(
    r"^(?:what|who|whom|whose|which|where|when|why|how|do|does|did|is|are|am|was|were|"
    r"have|has|tell me|remind me)\b",
    re.IGNORECASE,
)
_ABOUT = re.compile(
    r"\b(?:about|know|remember|recall|of)\s+(?P<name>[A-Z][\w'-]*)|"
    r"\b(?:who|what) (?:is|was) (?P<name2>[A-Z][\w'-]*)"
)
_ABOUT_YOU = re.compile(
    r"\b(?:who|what) are you\b|\byour name\b|\b(?:about|describe) yourself\b|"
    r"\bwho am I (?:talking|speaking) to\b",
    re.IGNORECASE,
)
_VOCATIVE = re.compile(r"^(?:(?:hey|oi|well|so|and),?\s+)?[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?,\s+")
_MY_NAME = re.compile(r"^You are (?P<name>[^,.:\n]+),", re.MULTILINE)
_MY_DESCRIPTION = re.compile(r"^Your description: (?P<desc>.+)$", re.MULTILINE)
_REMEMBER_ME = re.compile(
    r"\b(?:remember|know|recall|recognise|recognize)\s+(?:me|who I am)\b", re.IGNORECASE
)
_FIRST_PERSON = re.compile(r"(?<![\w'])(?:I|me|my|mine|myself)(?![\w'])", re.IGNORECASE)
_SMALL_TALK = re.compile(r"^how are you\b|^how(?:'s| is) it going\b", re.IGNORECASE)
_NOT_NAMES = frozenset({"I", "Me", "You", "The", "A", "An", "This", "That", "What", "Who"})
_PREFERENCE = re.compile(
    r"\b(?:prefers?|likes?|loves?|enjoys?|favou?rites?|wants?|hates?|dislikes?)\b", re.IGNORECASE
)
# A few everyday topics, so that a question's word finds facts that never use it: each
# line is a topic, the words that ask about it, then the words of facts about it.
_TOPIC_TEXT = """
drink | drink drinks drinking thirsty | wine ale beer mead cider tea coffee water milk juice
  whisky whiskey rum gin vodka brandy lager stout port sherry cocoa grog
eat | eat eats food hungry meal | bread cheese meat stew soup pie fish cake apple apples fruit
  porridge roast dish chicken beef pork
live | live lives home from | village town city house born grew
work | work job trade | works smith farmer merchant guard craft
"""
_TOPICS: dict[str, frozenset[str]] = {}
_TOPIC_WORDS: dict[str, str] = {}
for _line in re.split(r"\n(?! )", _TOPIC_TEXT.strip()):
    _name, _asking, _related = (part.split() for part in _line.split("|"))
    _TOPICS[_name[0]] = frozenset([*_asking, *_related])
    _TOPIC_WORDS.update(dict.fromkeys(_asking, _name[0]))
_FILLER_TEXT = """what who whom whose which where when why how do does did is are am was were
    tell remind
    know remember recall like likes prefer prefers love loves enjoy enjoys favourite favorite
    want wants think about me my mine myself you your yours anything something thing things
    usually really still"""
_QUESTION_FILLER = frozenset(_FILLER_TEXT.split())
_SEMANTIC_LINE = re.compile(
    r"^- (?:\[[^\]]*\] )?(?P<text>.+?)(?: \(from (?P<who>[^)]+)\))?(?: trust [\d.]+)?$"
)
_VERBATIM = re.compile(r'^(?P<who>[^"]+?) (?:said|whispered|asked|told \w+): "(?P<said>.*)"\.?$')
_SECOND_PERSON = (
    (r"\bis\b", "are"),
    (r"\bhas\b", "have"),
    (r"\bdoes\b", "do"),
    (r"\bwas\b", "were"),
)


@dataclass(frozen=True)
class Question:
    """A question in a message: who it is about, and what."""

    kind: QuestionKind
    text: str
    subject: str
    topic: frozenset[str]
    """The question's content words, with the lexicon's words for them ("drink": "wine")."""
    asked: tuple[str, ...] = ()
    """The question's own content words, in order."""


def question_of(sentence: str, speaker: str) -> Question | None:
    """The question ``sentence`` asks, or None when it asks none."""
    text = _VOCATIVE.sub("", sentence.strip())  # "Mira, do you ...": whom it addresses
    if not text.endswith("?") and not _WH.match(text):
        return None
    found = _ABOUT.search(text)
    name = (found.group("name") or found.group("name2")) if found else None
    if _ABOUT_YOU.search(text):
        kind: QuestionKind = "self"
    elif _REMEMBER_ME.search(text):
        kind = "remember"
    elif name and name not in _NOT_NAMES and name.casefold() != speaker.casefold():
        kind = "other"
    elif _FIRST_PERSON.search(text):
        kind = "speaker"
    else:
        kind = "general"
    subject = name if kind == "other" and name else speaker
    asked = tuple(dict.fromkeys(_content_words(text, subject)))
    return Question(kind, text, subject, _topic(asked), asked)


def recall_query(question: Question) -> str:
    """What to ask ``recall_memories`` for: the subject and the question's topic."""
    if question.kind == "general":
        return question.text[:200]
    related = sorted(question.topic - set(question.asked))[:10]
    return " ".join([question.subject, *question.asked, *related])[:200]


def known_facts(prompt: str, recalled: Iterable[dict[str, Any]], subject: str) -> list[str]:
    """Every fact about ``subject`` in the prompt and the recalled memories, third person."""
    found: list[str] = []
    for text, source in [*_prompt_facts(prompt, subject), *_recalled(recalled)]:
        for fact in _as_facts(text, source):
            if _about(fact, subject) or (source or "").casefold() == subject.casefold():
                found.append(fact)
    seen: set[str] = set()
    unique: list[str] = []
    for fact in found:
        key = fact.casefold().rstrip(".")
        if key not in seen:
            seen.add(key)
            unique.append(fact.rstrip("."))
    return unique


def answer(
    question: Question, facts: Sequence[str], speaker: str, *, met_before: bool, prompt: str = ""
) -> str:
    """The reply to ``question`` from ``facts`` (already about its subject).

    A question about the assistant itself is answered from the prompt: its name (``You
    are NAME``) and, in a game, its description (``Your description: ...``).
    """
    if question.kind == "self":
        return about_me(prompt, speaker)
    best = _ranked(question, facts)
    if question.kind == "remember":
        if best:
            return f"Of course, {speaker}! {to_speaker(best[:3], speaker)}"
        if met_before:
            return f"Yes, {speaker}, we have spoken before, though you haven't told me much yet."
        return f"I don't believe we've met, {speaker}. What brings you here?"
    if question.kind == "other":
        if best:
            return f"Here is what I know about {question.subject}: {'; '.join(best[:4])}."
        return f"I know nothing about {question.subject} yet, {speaker}."
    if question.kind == "speaker":
        if best:
            return f"{to_speaker(best[:3], speaker)[:-1]}, {speaker}."
        return f"You haven't told me that yet, {speaker}."
    if _SMALL_TALK.match(question.text):
        return f"Well enough, thank you, {speaker}. What can I do for you?"
    if best:
        return f"From what I remember: {'; '.join(best[:3])}."
    return f"I'm afraid I don't know, {speaker}."


def about_me(prompt: str, speaker: str) -> str:
    """Who the assistant is, in its own words: its name and its description."""
    # The last "You are NAME": a host's or operator's prompt comes after the built-in one.
    names = [found.group("name").strip() for found in _MY_NAME.finditer(prompt)]
    name = names[-1] if names else None
    desc = found.group("desc").strip() if (found := _MY_DESCRIPTION.search(prompt)) else ""
    if desc == "(none)":
        desc = ""
    intro = f"I'm {name}" if name else "I'm the one you're talking to"
    if desc:
        return f"{intro}, {speaker}. {_first_person(desc, name)}"
    return f"{intro}, {speaker}. What can I do for you?"


def _first_person(desc: str, name: str | None) -> str:
    """A description as its own words: "A stout dwarf behind the bar." -> "A stout ..."."""
    text = desc.rstrip()
    if name:
        text = re.sub(rf"^{re.escape(name)} is\b", "I am", text)
    return text if text.endswith((".", "!", "?")) else text + "."


# -- reading the prompt and the recall results ------------------------------------------
def _prompt_facts(prompt: str, subject: str) -> list[tuple[str, str | None]]:
    facts: list[tuple[str, str | None]] = []
    facts += [(line, None) for line in _block(prompt, "Key facts:")]
    facts += _profile(prompt, subject)
    for line in _section(prompt, "## Semantic Memories").splitlines():
        if (found := _SEMANTIC_LINE.match(line.strip())) is not None:
            facts.append((found.group("text"), found.group("who")))
    return facts


def _block(prompt: str, title: str) -> list[str]:
    if title not in prompt:
        return []
    lines: list[str] = []
    for line in prompt.split(title, 1)[1].splitlines()[1:]:
        if not line.startswith("- "):
            break
        lines.append(line[2:].strip())
    return lines


def _section(prompt: str, title: str) -> str:
    if title not in prompt:
        return ""
    return prompt.split(title, 1)[1].split("\n## ", 1)[0]


def _profile(prompt: str, subject: str) -> list[tuple[str, str | None]]:
    facts: list[tuple[str, str | None]] = []
    inside = False
    for line in _section(prompt, "## Entity Context").splitlines():
        if not line.startswith("  "):
            inside = line.startswith(f"{subject} (")
            continue
        if not inside:
            continue
        key, _, value = line.strip().partition(": ")
        if key == "observed":
            facts.append((value, None))
        elif value:
            facts.append((_attribute(subject, key, value), None))
    return facts


_ATTRIBUTE_VERBS = {
    "preference": "prefers",
    "likes": "likes",
    "loves": "loves",
    "dislikes": "dislikes",
    "wants": "wants",
    "enjoys": "enjoys",
    "owns": "owns",
    "fears": "fears",
}


def _attribute(subject: str, key: str, value: str) -> str:
    if key in _ATTRIBUTE_VERBS:
        return f"{subject} {_ATTRIBUTE_VERBS[key]} {value}"
    if key == "name":
        return f"{subject}'s name is {value}"
    return f"{subject}'s {key.replace('_', ' ')}: {value}"


def _recalled(results: Iterable[dict[str, Any]]) -> list[tuple[str, str | None]]:
    found: list[tuple[str, str | None]] = []
    for memory in results:
        metadata = memory.get("metadata") or {}
        source = metadata.get("source_entity") if isinstance(metadata, dict) else None
        found.append((str(memory.get("content", "")), source if isinstance(source, str) else None))
    return found


def _as_facts(text: str, source: str | None) -> list[str]:
    """``text`` as third-person facts: a verbatim line is unquoted, questions are dropped."""
    if (found := _VERBATIM.match(text.strip())) is not None:
        text, source = found.group("said"), found.group("who")
    facts: list[str] = []
    for sentence in re.split(r"(?<=[.!?])\s+", text.strip()):
        sentence = sentence.strip()
        if not sentence or sentence.endswith("?"):
            continue
        if _FIRST_PERSON.search(sentence):
            if source is None:
                continue
            # "Mira, I prefer red wine": the name the words were said to is no fact.
            sentence = _VOCATIVE.sub("", sentence)
            for clause in split_clauses(sentence):
                rewritten = third_person(clause, source)
                if rewritten and not _FIRST_PERSON.search(rewritten):
                    facts.append(rewritten.rstrip(".!"))
        else:
            facts.append(sentence.rstrip(".!"))
    return facts


def _about(fact: str, subject: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(subject)}(?![\w])", fact, re.IGNORECASE) is not None


# -- ranking and phrasing -----------------------------------------------------------------
def _content_words(text: str, subject: str) -> list[str]:
    return [
        w
        for w in words(text)
        if w not in STOPWORDS and w not in _QUESTION_FILLER and w != subject.casefold()
    ]


def _topic(asked: Iterable[str]) -> frozenset[str]:
    found = set(asked)
    for word in list(found):
        if word in _TOPIC_WORDS:
            found |= _TOPICS[_TOPIC_WORDS[word]]
    return frozenset(found)


def _ranked(question: Question, facts: Sequence[str]) -> list[str]:
    wants_preference = _PREFERENCE.search(question.text) is not None
    scored: list[tuple[int, int, str]] = []
    for n, fact in enumerate(facts):
        shared = len(question.topic & set(words(fact)))
        preference = 1 if _PREFERENCE.search(fact) else 0
        if question.topic and not shared:
            continue  # a question with a topic wants facts on that topic
        if wants_preference and not preference and not shared:
            continue
        scored.append((-(shared * 2 + preference), n, fact))
    return [fact for _, _, fact in sorted(scored)]


def to_speaker(facts: Sequence[str], speaker: str) -> str:
    """Facts about the speaker, said to them: "Dave prefers red wine" -> "You prefer red wine"."""
    said = []
    for fact in facts:
        said.append(_second_person(fact, speaker))
    text = "; ".join(said)
    return text[:1].upper() + text[1:] + "."


def _second_person(fact: str, speaker: str) -> str:
    name = re.escape(speaker)
    text = re.sub(rf"^{name}'s\b", "your", fact)
    text = re.sub(rf"(?<![\w]){name}'s\b", "your", text)
    found = re.match(
        rf"^{name} (?P<adv>(?:also|really|always|never|often|usually|still) )?"
        r"(?P<verb>[\w']+)",
        text,
    )
    if found is not None:
        verb = found.group("verb")
        for pattern, replacement in _SECOND_PERSON:
            if re.fullmatch(pattern, verb):
                verb = replacement
                break
        else:
            verb = _base_form(verb)
        text = f"you {found.group('adv') or ''}{verb}{text[found.end() :]}"
    text = re.sub(rf"(?<![\w]){name}(?![\w])", "you", text)
    return re.sub(r"\btheir\b", "your", text)


def _base_form(verb: str) -> str:
    if verb.endswith("ies") and len(verb) > 4:
        return verb[:-3] + "y"
    if verb.endswith(("ches", "shes", "sses", "xes", "zes", "oes")):
        return verb[:-2]
    if verb.endswith("s") and not verb.endswith("ss"):
        return verb[:-1]
    return verb


def tool_results(messages: Sequence[Message], start: int) -> list[tuple[str, dict[str, Any]]]:
    """The (tool name, parsed result) pairs after ``messages[start]``."""
    names: dict[str, str] = {}
    results: list[tuple[str, dict[str, Any]]] = []
    for message in messages[start + 1 :]:
        for call in message.tool_calls:
            names[call.id] = call.name
        if message.role == "tool" and message.tool_call_id in names:
            try:
                parsed = json.loads(message.content or "{}")
            except json.JSONDecodeError:
                parsed = {"success": False, "error": message.content}
            results.append(
                (names[message.tool_call_id], parsed if isinstance(parsed, dict) else {})
            )
    return results
