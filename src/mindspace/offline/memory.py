"""The offline model's sleep-cycle skills: entity consolidation, summaries, extraction, mining.

Each recognises one of mindspace's own prompts and answers it by rule, so a whole night
of sleep runs without an LLM. The rules are deliberately simple and stay third-person.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from mindspace.limits import MAX_TEXT_CHARS
from mindspace.llm.port import LLMResponse, Message, ToolCall, ToolSchema
from mindspace.memory.chunking import chunk_text
from mindspace.memory.extraction import persona_safe_facts
from mindspace.workspace.persona import PersonaGuard

__all__ = [
    "MEMORY_SKILLS",
    "consolidation_skill",
    "fact_mining_skill",
    "journal_consolidation_skill",
    "pre_compaction_skill",
    "split_clauses",
    "summary_skill",
    "third_person",
]

_CONSOLIDATE = re.compile(r"^Consolidate these observations about (?P<who>.+?) into stable")
_SUMMARIZE = re.compile(r"^Summarize the following conversation with (?P<who>.+?) as")
_PRE_COMPACTION = re.compile(r"conversation history with (?P<who>.+?) is compacted")
_PREFERENCE = re.compile(
    r"\b(?P<verb>prefers|likes|loves|hates|dislikes|wants|enjoys|owns|fears)\s+(?P<what>.+)",
    re.IGNORECASE,
)
_NAME = re.compile(r"'s name is (?P<what>.+)", re.IGNORECASE)
_VERBATIM = re.compile(r'^[^"]+? (?:said|whispered|\([a-z0-9_]+\)): "')
_KEYS = {
    "prefers": "preference",
    "likes": "likes",
    "loves": "loves",
    "hates": "dislikes",
    "dislikes": "dislikes",
    "wants": "wants",
    "enjoys": "enjoys",
    "owns": "owns",
    "fears": "fears",
}


def _last_user(messages: Sequence[Message]) -> str:
    for message in reversed(messages):
        if message.role == "user" and message.content:
            return message.content
    return ""


def consolidation_skill(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> str | None:
    """Observations -> a JSON object of attributes, by simple patterns."""
    text = _last_user(messages)
    if not _CONSOLIDATE.match(text):
        return None
    block = text.split("Observations:", 1)[-1].split("Existing attributes", 1)[0]
    observations = [line[2:].strip() for line in block.splitlines() if line.startswith("- ")]
    # Verbatim messages are first person; their facts reach memory through fact mining.
    observations = [o for o in observations if not _VERBATIM.match(o)]
    attributes: dict[str, str] = {}
    notes: list[str] = []
    for observation in observations:
        clean = observation.rstrip(".")
        if found := _NAME.search(clean):
            attributes["name"] = found.group("what").strip()
        elif found := _PREFERENCE.search(clean):
            key = _KEYS[found.group("verb").lower()]
            value = found.group("what").strip()
            known = [v.casefold() for v in attributes.get(key, "").split("; ")]
            if value.casefold() not in known:  # the same fact observed twice is one value
                attributes[key] = f"{attributes[key]}; {value}" if key in attributes else value
        else:
            notes.append(clean)
    if notes:
        attributes["notes"] = "; ".join(notes[-5:])
    return json.dumps(attributes)


def summary_skill(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> str | None:
    """An extractive summary: what the other party said, in the third person."""
    text = _last_user(messages)
    found = _SUMMARIZE.match(text)
    if not found:
        return None
    who = found.group("who")
    said = []
    for line in text.splitlines():
        if line.startswith("user: "):
            sentence = re.split(r"(?<=[.!?])\s", line[6:].strip())[0]
            said.append(sentence.rstrip(".!?"))
    if not said:
        return f"{who} and I exchanged a few words."
    return f"{who} said: " + "; ".join(said[-6:]) + "."


def pre_compaction_skill(
    messages: Sequence[Message], tools: Sequence[ToolSchema]
) -> LLMResponse | str | None:
    """Journal the other party's last words once, then stop."""
    task = _last_user(messages)
    found = _PRE_COMPACTION.search(task)
    if not found:
        return None
    if any(m.role == "tool" for m in messages[-3:]):
        return LLMResponse(tool_calls=(ToolCall("offline_noop", "noop", "{}"),))
    who = found.group("who")
    history = [m.content for m in messages if m.role == "user" and m.content and m.content != task]
    offered = {str(t.get("function", {}).get("name")) for t in tools}
    if not history or "add_journal_entry" not in offered:
        return LLMResponse(tool_calls=(ToolCall("offline_noop", "noop", "{}"),))
    last = history[-1].replace("\n", " ")[:300]
    entry = {
        "content": f'Before compaction: {who} last said "{last}"',
        "source_type": "direct",
        "source_entity": who,
        "tags": ["pre_compaction"],
    }
    return LLMResponse(
        tool_calls=(ToolCall("offline_journal", "add_journal_entry", json.dumps(entry)),)
    )


# -- fact mining ---------------------------------------------------------------------------
_MINING = re.compile(r"^Extract facts from this conversation with (?P<who>.+?)\.\n")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_FIRST_PERSON = re.compile(r"(?<![\w'])(?:I|[Mm]y|[Mm]e|[Mm]yself)(?![\w])|(?<![\w'])I'")
_STILL_FIRST = re.compile(r"(?<![\w'])(?:I|we|us|our|ours)(?![\w'])|\b(?:me|my|myself)\b", re.I)
_SMALL_TALK = re.compile(
    r"^(?:thanks|thank|please|hello|hi|hey|good (?:morning|afternoon|evening|night)|"
    r"let's|bye|goodbye|cheers|yes|no|ok|okay)\b",
    re.IGNORECASE,
)
_CLAUSE = re.compile(r",?\s+(?:and|but)\s+(?=(?:I|my|I'm|I've)\b)", re.IGNORECASE)
_TELLING = re.compile(r"^(?:remember|note|know|mind)(?: that|,)\s+", re.IGNORECASE)
_ADDRESSED = re.compile(r"\b(?:you|your|yours|yourself)\b", re.IGNORECASE)
_ADVERB = r"(?:also|really|always|never|often|usually|just|still|only|even|truly)"
_I_VERB = re.compile(rf"(?<![\w'])I\s+(?:(?P<adv>{_ADVERB})\s+)?(?P<verb>[A-Za-z][\w']*)")
_CONTRACTIONS = {"I'm": "is", "I've": "has", "I'll": "will", "I'd": "would"}
_SAME = frozenset(
    [
        "can",
        "could",
        "will",
        "would",
        "shall",
        "should",
        "may",
        "might",
        "must",
        "did",
        "didn't",
        "was",
        "wasn't",
        "had",
        "hadn't",
        "can't",
        "cannot",
        "won't",
        "wouldn't",
        "couldn't",
        "shouldn't",
        "mustn't",
    ]
)
_IRREGULAR = {
    "am": "is",
    "have": "has",
    "do": "does",
    "don't": "doesn't",
    "haven't": "hasn't",
    "go": "goes",
}
_PAST = frozenset(
    [
        "was",
        "had",
        "got",
        "went",
        "sold",
        "bought",
        "told",
        "made",
        "lost",
        "found",
        "gave",
        "took",
        "saw",
        "met",
        "left",
        "came",
        "ran",
        "broke",
        "paid",
        "spent",
        "won",
        "knew",
        "thought",
        "brought",
        "caught",
        "fought",
        "sent",
        "lent",
        "built",
        "wrote",
        "ate",
        "drank",
        "forgot",
        "became",
        "began",
        "fell",
        "felt",
        "kept",
        "heard",
        "held",
        "said",
        "sat",
        "stood",
        "taught",
        "wore",
        "owed",
    ]
)
_IMPORTANT = re.compile(
    r"allerg|name|owe|debt|budget|birthday|afraid|fear|hate|never|married|sister|brother|"
    r"friend|secret|sick|\bill\b|died|danger",
    re.IGNORECASE,
)


def _conjugate(verb: str) -> str:
    lower = verb.lower()
    if lower in _IRREGULAR:
        return _IRREGULAR[lower]
    if lower in _SAME or lower in _PAST or lower.endswith("ed") or "'" in lower:
        return verb
    if lower.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if lower.endswith("y") and len(lower) > 1 and lower[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def third_person(sentence: str, who: str) -> str | None:
    """``sentence`` (spoken by ``who``) in the third person, or None without first person.

    "I'm allergic to oak" from Alice becomes "Alice is allergic to oak"; "I traded my
    sword" becomes "Alice traded their sword"; "My budget is 50 gold" becomes "Alice's
    budget is 50 gold".
    """
    text = sentence.replace("\u2019", "'").strip()
    if not _FIRST_PERSON.search(text):
        return None
    for short, verb in _CONTRACTIONS.items():
        text = re.sub(rf"(?<![\w']){re.escape(short)}(?![\w'])", f"{who} {verb}", text)

    def subject(found: re.Match[str]) -> str:
        adverb = f"{found.group('adv')} " if found.group("adv") else ""
        return f"{who} {adverb}{_conjugate(found.group('verb'))}"

    text = _I_VERB.sub(subject, text)
    text = re.sub(r"(?<![\w'])I(?![\w'])", who, text)
    text = re.sub(r"\bMy\b", f"{who}'s", text)
    text = re.sub(r"\bmy\b", "their", text)
    text = re.sub(r"\b[Mm]yself\b", "themselves", text)
    text = re.sub(r"\b[Mm]e\b", "them", text)
    return text[:1].upper() + text[1:]


def split_clauses(sentence: str) -> list[str]:
    """ "My name is Dave and I prefer red wine" -> its two first-person clauses."""
    parts = [p.strip() for p in _CLAUSE.split(sentence) if p.strip()]
    return [p[:1].upper() + p[1:] for p in parts]


def _facts_of(line: str, who: str) -> list[dict[str, object]]:
    facts: list[dict[str, object]] = []
    for sentence in _SENTENCE_END.split(line.strip()):
        sentence = sentence.strip()
        if not sentence or sentence.endswith("?") or len(sentence.split()) < 3:
            continue
        if _SMALL_TALK.match(sentence) or _ADDRESSED.search(sentence):
            continue  # requests, thanks and talk about the assistant are not facts
        sentence = _TELLING.sub("", sentence)
        for clause in split_clauses(sentence):
            rewritten = third_person(clause, who)
            fact = (rewritten or clause).rstrip(".!").strip()
            fact = fact[:1].upper() + fact[1:]
            if _STILL_FIRST.search(fact) or len(fact.split()) < 3:
                continue
            if fact.casefold() in (
                f"{who}'s name is {who}".casefold(),
                f"{who} is {who}".casefold(),
            ):
                continue  # the speaker's own name says nothing new
            facts.append(
                {
                    "fact": fact,
                    "entity": who if rewritten else None,
                    "importance": 7 if _IMPORTANT.search(fact) else 5,
                }
            )
    return facts


def fact_mining_skill(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> str | None:
    """The mining prompt -> a JSON array of the speaker's statements in the third person.

    Only the speaker's own lines are read (never the assistant's replies); questions,
    small talk and sentences about the assistant are left out.
    """
    text = _last_user(messages)
    found = _MINING.match(text)
    if not found:
        return None
    who = found.group("who")
    facts: list[dict[str, object]] = []
    for line in text.splitlines():
        if line.startswith(f"{who}: "):
            facts += _facts_of(line[len(who) + 2 :], who)
    return json.dumps(facts)


# -- journal consolidation (the sleep_consolidate context) ----------------------------------
_JOURNAL_TASK = "Consolidate these journal entries into long-term memory."
_JOURNAL_LINE = re.compile(
    r"^\[(?P<id>\d+)\] \((?:direct from (?P<speaker>[^,]+)|[^)]*?)(?:, [^)]*)?\) (?P<text>.+)$",
    re.MULTILINE,
)


def journal_consolidation_skill(
    messages: Sequence[Message], tools: Sequence[ToolSchema]
) -> LLMResponse | None:
    """Store each entry's persona-safe facts with ``store_memory``, then stop.

    The facts are those of :func:`~mindspace.memory.extraction.persona_safe_facts`: an
    entry without self-reference word for word, otherwise its clean sentences and the
    known first-person shapes rewritten in the third person.
    """
    task = next((m.content for m in messages if m.content and _JOURNAL_TASK in m.content), None)
    if task is None:
        return None
    offered = {str(t.get("function", {}).get("name")) for t in tools}
    if any(m.role == "tool" for m in messages) or "store_memory" not in offered:
        return LLMResponse(tool_calls=(ToolCall("offline_noop", "noop", "{}"),))
    guard = PersonaGuard()
    limit = _content_limit(tools, "store_memory")
    calls = [
        ToolCall(
            f"offline_store_{found.group('id')}_{n}",
            "store_memory",
            json.dumps({"content": piece, "entry_id": int(found.group("id")), "tags": tags}),
        )
        for found in _JOURNAL_LINE.finditer(task)
        for n, (piece, tags) in enumerate(
            piece
            for fact in persona_safe_facts(found.group("text"), guard)
            for piece in _pieces(fact, limit)
        )
    ]
    return LLMResponse(tool_calls=tuple(calls) or (ToolCall("offline_noop", "noop", "{}"),))


def _pieces(fact: str, limit: int) -> list[tuple[str, list[str]]]:
    """A fact within ``limit``: itself, or its pieces each tagged ``part:i/n``."""
    pieces = chunk_text(fact, limit)
    if len(pieces) == 1:
        return [(pieces[0], [])]
    return [(p, [f"part:{i}/{len(pieces)}"]) for i, p in enumerate(pieces, 1)]


def _content_limit(tools: Sequence[ToolSchema], name: str) -> int:
    """The ``maxLength`` of tool ``name``'s ``content`` argument (a fact longer is split)."""
    for tool in tools:
        function = tool.get("function", {})
        if function.get("name") == name:
            content = function.get("parameters", {}).get("properties", {}).get("content", {})
            return int(content.get("maxLength", MAX_TEXT_CHARS))
    return MAX_TEXT_CHARS


MEMORY_SKILLS = (
    journal_consolidation_skill,
    consolidation_skill,
    summary_skill,
    pre_compaction_skill,
    fact_mining_skill,
)
