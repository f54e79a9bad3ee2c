"""Duplicates before/after: a conversation with restatements, stored with reconciling off and on.

Twelve people each tell eight facts (four of them near misses of the other four: "I
have a cat called Pepper" beside "I have a dog called Pepper") and three that change, over
several days, in the ways a fact reaches memory:
said verbatim, said again in other words, restated later, and written up in the third
person the way the night's mining does ("Dave prefers red wine" after "I prefer red
wine"). Some facts change ("I live in Paris" ... "I moved to Berlin"), and people ask
questions. Every line carries the id of the fact it states, so the counts are exact:

- ``memories``: how many were stored;
- ``redundant``: memories of a fact that already had one (the same, current fact twice);
- ``wrong_merges``: sources merged into a memory of another fact (false restatements);
- ``stale_current``: changed facts whose old value is still current (no ``valid_to``);
- ``wrong_updates``: memories marked replaced whose fact did not change;
- ``questions_as_facts``: questions written up as facts that were stored;
- recall, for each person and fact asked about (``recall_memories``, limit 5):
  ``top5_repeats`` (results of a fact already shown) and ``current_first`` (for changed
  facts, the new value above the old one).

Runs with the offline MiniLM embedder on a SQLite file. Usage::

    python bench/dedupe.py [--people 12]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from mindspace import Assistant, ManualClock, Settings
from mindspace.embeddings.minilm import MiniLMEmbedder
from mindspace.memory.records import Memory
from mindspace.memory.semantic import MemoryDraft, SemanticMemory
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on

PEOPLE = ["Dave", "Ana", "Bram", "Chloe", "Emeka", "Farah", "Gus", "Hana", "Ivo", "Jun"]
PEOPLE += ["Kemal", "Lise"]

# (fact id, verbatim line, restated line, third-person write-up, question) per fact.
# {n} is the person's name.
FACTS: list[tuple[str, str, str, str, str]] = [
    (
        "allergy",
        "I am allergic to oak",
        "I'm allergic to oak, remember.",
        "{n} is allergic to oak",
        "What am I allergic to?",
    ),
    (
        "wine",
        "I prefer red wine",
        "Red wine is what I prefer",
        "{n} prefers red wine",
        "What do I like to drink?",
    ),
    (
        "dog",
        "I have a dog called Pepper",
        "My dog is called Pepper",
        "{n} has a dog called Pepper",
        "Do you remember my dog's name?",
    ),
    (
        "book",
        "I am reading a book about old ships",
        "I'm reading a book about old ships at the moment",
        "{n} is reading a book about old ships",
        "What am I reading?",
    ),
]
# Near misses: close in words to a fact above, but other facts (merging them is an error).
FACTS += [
    (
        "white",
        "I don't like white wine",
        "White wine is not for me",
        "{n} does not like white wine",
        "Do I like white wine?",
    ),
    (
        "cat",
        "I have a cat called Pepper",
        "My cat is called Pepper",
        "{n} has a cat called Pepper",
        "What is my cat called?",
    ),
    (
        "writing",
        "I am writing a book about old ships",
        "I'm writing a book about old ships these days",
        "{n} is writing a book about old ships",
        "What am I writing?",
    ),
    (
        "dogs",
        "I have two dogs",
        "I've got two dogs",
        "{n} has two dogs",
        "How many dogs do I have?",
    ),
]
# (fact id, old line, new line, question) for facts that change.
CHANGES: list[tuple[str, str, str, str]] = [
    ("home", "I live in Paris", "I moved to Berlin last month", "Where do I live?"),
    ("job", "I work at the mill", "I got a new job at the bakery", "Where do I work?"),
    ("colour", "My favourite colour is blue", "My favourite colour is green now", "What colour?"),
]


@dataclass(frozen=True)
class Line:
    """One write: who, what, its fact id, and how it arrives."""

    who: str
    text: str
    fact: str
    verbatim: bool
    question: bool = False
    newer: bool = False


def conversation(people: list[str]) -> list[list[Line]]:
    """The writes day by day: first statements, then restatements and write-ups, then changes."""
    day1, day2, day3, day4 = [], [], [], []
    for n, who in enumerate(people):
        for at, (fact, said, again, written, asked) in enumerate(FACTS):
            day1.append(Line(who, said, fact, True))
            day2.append(Line(who, written.format(n=who), fact, False))
            if (n + at) % 2 == 0:
                day3.append(Line(who, again, fact, True))
            day3.append(Line(who, asked, f"{fact}?", True, question=True))
        for fact, old, new, asked in CHANGES:
            day1.append(Line(who, old, fact, True))
            day4.append(Line(who, new, f"{fact}:new", True, newer=True))
            day4.append(Line(who, asked, f"{fact}?", True, question=True))
        # What a model writes up from a question: a question again, never a fact.
        day2.append(Line(who, f"What does {who} like to drink?", "wine?", False, question=True))
    return [day1, day2, day3, day4]


async def run(
    people: list[str], reconcile: bool, embedder: MiniLMEmbedder, verbose: bool = False
) -> dict[str, Any]:
    """Feed the conversation into a fresh assistant and count."""
    with tempfile.TemporaryDirectory() as tmp:
        store = SqlStore.from_path(Path(tmp) / "bench.db")
        clock = ManualClock()
        settings = Settings(data_dir=Path(tmp), memory_reconcile=reconcile)
        assistant = assistant_on(
            store,
            "bench",
            llm=OfflineLLM(announce=False),
            clock=clock,
            settings=settings,
            embedder=embedder,
        )
        labels: dict[str, str] = {}  # memory id -> fact id of its first source
        wrong_merges = 0
        refused = 0
        started = time.perf_counter()
        writes = 0
        for day in conversation(people):
            clock.advance(timedelta(days=1))
            for line in day:
                clock.advance(timedelta(minutes=1))
                draft = MemoryDraft(
                    line.text,
                    source_entity=line.who,
                    source_type="direct",
                    verbatim=line.verbatim,
                    source="conversation" if line.verbatim else "mining",
                )
                with assistant._core.transaction() as unit:
                    (written,) = await SemanticMemory(
                        unit, clock, settings, embedder, assistant._core.memory_index
                    ).astore_all([draft])
                writes += 1
                if written.memory is None:
                    refused += 1
                    continue
                key = f"{line.who}/{line.fact}"
                if written.action == "restated":
                    if labels[written.memory.id] != key:
                        wrong_merges += 1
                        if verbose:
                            print(
                                f"wrong merge: {line.text!r} into {written.memory.content!r}",
                                file=sys.stderr,
                            )
                else:
                    labels[written.memory.id] = key
        elapsed = time.perf_counter() - started
        memories = assistant.views.memory_listing(limit=10_000).memories
        current = [m for m in memories if m.current]
        facts = [labels[m.id] for m in current]
        redundant = len(facts) - len(set(facts))
        stale = sum(
            1
            for m in memories
            if labels[m.id].split("/")[1] in {c[0] for c in CHANGES} and m.current
        )
        wrong_updates = sum(
            1
            for m in memories
            if not m.current and labels[m.id].split("/")[1] not in {c[0] for c in CHANGES}
        )
        questions = sum(1 for m in memories if labels[m.id].endswith("?") and not _verbatim(m))
        repeats, current_first, asked_changes = 0, 0, 0
        for who in people:
            for fact, *_ in FACTS:
                found = await _recall(assistant, f"What about {who} and the {fact}?")
                repeats += _repeats(found, labels)
            for fact, old, _new, asked in CHANGES:
                found = await _recall(assistant, f"{who}: {asked} {old}")
                ids = [r["id"] for r in found]
                new_ids = [i for i in ids if labels[i] == f"{who}/{fact}:new"]
                old_ids = [i for i in ids if labels[i] == f"{who}/{fact}"]
                asked_changes += 1
                if new_ids and (not old_ids or ids.index(new_ids[0]) < ids.index(old_ids[0])):
                    current_first += 1
                repeats += _repeats(found, labels)
        store.close()
        return {
            "reconcile": reconcile,
            "writes": writes,
            "refused": refused,
            "memories": len(memories),
            "facts_told": len(set(labels.values())),
            "redundant": redundant,
            "wrong_merges": wrong_merges,
            "stale_current": stale,
            "wrong_updates": wrong_updates,
            "questions_as_facts": questions,
            "top5_repeats": repeats,
            "current_first": f"{current_first}/{asked_changes}",
            "write_ms_mean": round(1000 * elapsed / writes, 2),
        }


def _verbatim(memory: Memory) -> bool:
    return bool(memory.sources) and memory.sources[0].verbatim


async def _recall(assistant: Assistant, query: str) -> list[dict[str, Any]]:
    result = await assistant.call_tool("recall_memories", {"query": query, "limit": 5})
    found: list[dict[str, Any]] = result["memories"]
    return found


def _repeats(found: list[dict[str, Any]], labels: dict[str, str]) -> int:
    """Results whose (current) fact an earlier result already showed."""
    seen: set[str] = set()
    repeats = 0
    for result in found:
        if result["metadata"]["valid_to"]:
            continue  # a replaced value is the fact's past, not a repeat
        label = labels[result["id"]].removesuffix(":new")
        repeats += label in seen
        seen.add(label)
    return repeats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=len(PEOPLE))
    parser.add_argument("--verbose", action="store_true", help="List wrong merges on stderr.")
    args = parser.parse_args()
    people = (PEOPLE * (args.people // len(PEOPLE) + 1))[: args.people]
    embedder = MiniLMEmbedder()
    results = [
        asyncio.run(run(people, reconcile, embedder, args.verbose)) for reconcile in (False, True)
    ]
    print(
        json.dumps(
            {"machine": platform.machine(), "people": len(people), "runs": results}, indent=2
        )
    )


if __name__ == "__main__":
    main()
