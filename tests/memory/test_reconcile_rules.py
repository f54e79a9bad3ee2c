"""The reconcile rules on their own: what is a question, a restatement, a replacement."""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

import numpy as np
import pytest

from mindspace.memory.reconcile import (
    Fact,
    Near,
    ReconcileRules,
    attributes,
    distinct,
    subject,
)
from mindspace.memory.records import Memory, MemorySource
from mindspace.memory.utterance import is_question

WHEN = "2025-12-06T10:00:00Z"


@pytest.mark.parametrize(
    "text",
    [
        "What do I like to drink?",
        "What do I like to drink",
        "Do you know where I live",
        "Does Dave know where the mill is",
        "Where's the mill?",
        "Is it raining? Should I stay in?",
        'Did she say "yes"?',
    ],
)
def test_questions(text: str) -> None:
    assert is_question(text)


@pytest.mark.parametrize(
    "text",
    [
        "Dave likes to drink red wine",
        "I moved to Berlin. Have you been?",
        "Do not feed the dragon.",
        "Where the river bends, the mill stands",
        "Alice asked where the tavern is.",
        "",
    ],
)
def test_statements(text: str) -> None:
    assert not is_question(text)


def test_whom_a_fact_is_about() -> None:
    assert subject("I live in Paris", "Dave") == "self"
    assert subject("Dave lives in Paris", "Dave") == "self"
    assert subject("My name is Dave", "Dave") == "self"
    assert subject("My sister lives in London", "Dave") == "my sister"
    assert subject("Alice moved to Berlin", "Dave") == "alice"
    assert subject("Alice moved to Berlin", None) == "alice"


def test_single_valued_attributes() -> None:
    assert attributes("I live in Paris") == {"residence"}
    assert attributes("I moved to Berlin last month") == {"residence"}
    assert attributes("I love Paris in the spring") == frozenset()
    assert attributes("I work at the mill") == {"work"}
    assert attributes("I worked on the garden today") == frozenset()
    assert attributes("My favourite colour is green now") == {"favourite:colour"}
    assert attributes("My favorite food is pizza") == {"favourite:food"}


def _memory(key: str, content: str, who: str | None = "Dave", **extra: object) -> Memory:
    fields: dict[str, object] = {"created_at": WHEN, "occurred_at": WHEN, **extra}
    return Memory(id=key, content=content, source_entity=who, **fields)  # type: ignore[arg-type]


def _fact(content: str, who: str | None = "Dave", verbatim: bool = True) -> Fact:
    return Fact(content, who, "2026-01-01T00:00:00Z", 0.9, verbatim)


RULES = ReconcileRules()


def test_a_restatement_adds_or_drops_words_but_swaps_none() -> None:
    oak = _memory("mem_1", "I am allergic to oak")
    assert RULES.decide(_fact("I'm allergic to oak trees"), [Near(oak, 0.93)]).action == "restate"
    reading = _memory("mem_2", "I am reading a book about old ships")
    writing = _fact("I am writing a book about old ships")
    assert RULES.decide(writing, [Near(reading, 0.95)]).action == "add"
    cats = _memory("mem_3", "I have 2 cats")
    assert RULES.decide(_fact("I have 3 cats"), [Near(cats, 0.97)]).action == "add"
    mead = _memory("mem_4", "Dave likes mead")
    assert RULES.decide(_fact("Dave does not like mead"), [Near(mead, 0.95)]).action == "add"
    # Another person's same words are another person's fact.
    other = _memory("mem_5", "I am allergic to oak", who="Ana")
    assert RULES.decide(_fact("I am allergic to oak"), [Near(other, 1.0)]).action == "add"


def test_a_write_up_of_a_quoted_message_is_one_more_source_of_it() -> None:
    said = MemorySource(at=WHEN, verbatim=True)
    kitten = _memory("mem_1", "I adopted a grey kitten named Pebble last weekend!", sources=[said])
    mined = _fact("Dave adopted a grey kitten named Pebble", verbatim=False)
    decision = RULES.decide(mined, [Near(kitten, 0.74)])
    assert (decision.action, decision.targets) == ("restate", ("mem_1",))
    # A word the speaker did not say makes it a fact of its own ...
    assert (
        RULES.decide(
            _fact("Dave adopted a black kitten", verbatim=False), [Near(kitten, 0.7)]
        ).action
        == "add"
    )
    # ... and so does the opposite claim, or the same words from someone else.
    denied = _fact("Dave did not adopt a grey kitten", verbatim=False)
    assert RULES.decide(denied, [Near(kitten, 0.7)]).action == "add"
    ana = _fact("Ana adopted a grey kitten named Pebble", who="Ana", verbatim=False)
    assert RULES.decide(ana, [Near(kitten, 0.7)]).action == "add"
    # In a long message, the sentence that says it decides: another sentence's "not"
    # or number does not make the write-up news.
    long = _memory(
        "mem_3",
        "Work was not easy this week. I adopted a grey kitten named Pebble! We have 2 dogs.",
        sources=[said],
    )
    assert RULES.decide(mined, [Near(long, 0.3)]).action == "restate"
    # Only a quote counts: a write-up is not covered by another write-up.
    noted = _memory("mem_2", "Dave adopted a grey kitten named Pebble last weekend")
    short = _fact("Dave adopted a kitten", verbatim=False)
    assert RULES.decide(short, [Near(noted, 0.7)]).action == "add"


def test_a_question_restates_and_replaces_nothing() -> None:
    cat = _memory("mem_1", "I have a cat called Pepper")
    asked = RULES.decide(_fact("What is my cat called?"), [Near(cat, 0.8)])
    assert asked.action == "add"
    written_up = RULES.decide(_fact("What is Dave's cat called?", verbatim=False), [])
    assert written_up.action == "refuse"
    question = _memory("mem_2", "Where do I live?")
    assert RULES.decide(_fact("I live in Paris"), [Near(question, 0.8)]).action == "add"


def test_a_newer_value_of_the_same_attribute_replaces_the_current_one() -> None:
    paris = _memory("mem_1", "I live in Paris")
    decision = RULES.decide(_fact("I moved to Berlin"), [Near(paris, 0.72)])
    assert (decision.action, decision.targets) == ("update", ("mem_1",))
    sister = _fact("My sister lives in London")
    assert RULES.decide(sister, [Near(paris, 0.6)]).action == "add"
    gone = _memory("mem_2", "I live in Rome", valid_to=WHEN, superseded_by="mem_1")
    assert RULES.decide(_fact("I moved to Berlin"), [Near(gone, 0.72)]).action == "add"
    toyota = _memory("mem_3", "I drive a Toyota")
    honda = RULES.decide(_fact("I drive a Honda now"), [Near(toyota, 0.81)])
    assert honda.action == "update"
    rumour = Fact("I moved to Berlin", "Dave", WHEN, 0.3, False)
    assert RULES.decide(rumour, [Near(paris, 0.72)]).action == "add"  # trusted far less


def test_talk_is_not_compared() -> None:
    thanks = _memory("mem_1", "Thanks!", sources=(MemorySource(at=WHEN, verbatim=True),))
    assert RULES.decide(_fact("Thanks!"), [Near(thanks, 1.0)]).action == "add"


def _bridge_and_homes() -> list[Memory]:
    """Six memories with one vector: two people's news of a bridge, their homes, more."""
    vector = np.eye(8, dtype=np.float32)[0].tobytes()
    said = [
        ("The bridge collapsed", "Ned"),
        ("The bridge collapsed.", "Ana"),
        ("I live in Paris", "Ned"),
        ("I live in Paris", "Ana"),
        ("The bridge has collapsed", "Ned"),
        ("The bridge has 3 arches", "Ned"),
    ]
    return [
        _memory(f"mem_{n}", text, who, embedding=vector, embedder="e")
        for n, (text, who) in enumerate(said, start=1)
    ]


def test_recall_leaves_out_a_result_that_restates_a_better_one() -> None:
    found = _bridge_and_homes()
    # Two people's news about a bridge is one fact; their own homes are two; the same
    # speaker's near-identical claim is one; other numbers are news.
    assert distinct(found, 0.92) == [0, 2, 3, 5]


class _Watched(Sequence[Memory]):
    """Memories that note which positions were read."""

    def __init__(self, memories: list[Memory]) -> None:
        self.memories = memories
        self.read: set[int] = set()

    def __len__(self) -> int:
        return len(self.memories)

    @overload
    def __getitem__(self, at: int) -> Memory: ...
    @overload
    def __getitem__(self, at: slice) -> Sequence[Memory]: ...
    def __getitem__(self, at: int | slice) -> Memory | Sequence[Memory]:
        if isinstance(at, slice):
            raise AssertionError("distinct reads one memory at a time")
        if at < len(self.memories):
            self.read.add(at)
        return self.memories[at]


def test_a_page_of_distinct_memories_stops_reading_once_full() -> None:
    found = _bridge_and_homes()
    # The first results of a page are those of the whole list, restatements left out.
    for limit in range(1, 6):
        assert distinct(found, 0.92, limit) == distinct(found, 0.92)[:limit]
    watched = _Watched(found)
    assert distinct(watched, 0.92, 2) == [0, 2]
    assert watched.read == {0, 1, 2}  # the memories after the page's last are not read
