"""Importance scoring in batches: one LLM call rates up to ``batch_size`` entries."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence

from mindspace import Assistant, ScriptedLLM
from mindspace.errors import LLMConnectionError
from mindspace.journal import JournalBook, score_importance_heuristic, score_pending_entries
from mindspace.journal.importance import BATCH_IMPORTANCE_HEAD, score_importance_batch
from mindspace.llm.port import Message, ToolSchema
from mindspace.llm.scripted import FunctionLLM
from mindspace.offline import OfflineLLM

_EVENT = re.compile(r"^Event (\d+): (.*)$", re.MULTILINE)


async def _journal(assistant: Assistant, *contents: str) -> None:
    for content in contents:
        result = await assistant.call_tool("add_journal_entry", {"content": content})
        assert result["success"] is True, result


def _question(messages: Sequence[Message]) -> str:
    """The scoring question (the first user message; a repair comes after it)."""
    return next(m.content or "" for m in messages if m.role == "user")


def _is_batch(messages: Sequence[Message]) -> bool:
    return _question(messages).startswith(BATCH_IMPORTANCE_HEAD)


def _length_scores(messages: Sequence[Message]) -> list[int]:
    """A made-up rating the tests can predict: the event's length, kept within 1-10."""
    return [min(10, len(body)) for _, body in _EVENT.findall(_question(messages))]


def _entries(assistant: Assistant) -> dict[int, tuple[int, str]]:
    book = JournalBook(assistant._core.read(), assistant.clock, assistant.settings)
    return {e.id: (e.importance, e.importance_method) for e in book.entries()}


async def test_25_entries_in_batches_of_10_take_3_calls(
    make_assistant: Callable[..., Assistant],
) -> None:
    def rate(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> str:
        assert _is_batch(messages)
        return json.dumps(_length_scores(messages))

    llm = FunctionLLM(rate)
    assistant = make_assistant(llm=llm)
    contents = [f"Event text {'x' * (n % 7)}" for n in range(25)]
    await _journal(assistant, *contents)

    with assistant._core.transaction() as unit:
        outcome = await score_pending_entries(unit, llm, max_per_tick=25, batch_size=10)

    assert len(llm.history) == 3  # 10 + 10 + 5
    assert outcome.llm_calls == 3
    assert [len(_EVENT.findall(_question(c.messages))) for c in llm.history] == [10, 10, 5]
    assert outcome.llm_scored == 25
    assert outcome.remaining == 0
    assert all(s["batch"] is True and s["structured"] == "parsed" for s in outcome.scored)
    entries = _entries(assistant)
    assert [entries[n + 1] for n in range(25)] == [(min(10, len(c)), "llm") for c in contents]


async def test_a_malformed_batch_falls_back_to_one_call_per_entry(
    make_assistant: Callable[..., Assistant],
) -> None:
    def rate(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> str:
        if _is_batch(messages):
            return "These all seem fairly routine to me."
        return "7"

    llm = FunctionLLM(rate)
    assistant = make_assistant(llm=llm)
    await _journal(assistant, "One", "Two", "Three")

    with assistant._core.transaction() as unit:
        outcome = await score_pending_entries(unit, llm, max_per_tick=3, batch_size=10)

    # The batch question and its one repair, then one question per entry.
    assert [_is_batch(c.messages) for c in llm.history] == [True, True, False, False, False]
    assert outcome.llm_calls == 5
    assert [(s["id"], s["importance"], s["structured"]) for s in outcome.scored] == [
        (1, 7, "parsed"),
        (2, 7, "parsed"),
        (3, 7, "parsed"),
    ]
    assert not any("batch" in s for s in outcome.scored)
    report = outcome.to_dict()
    assert len(report["batch_fallbacks"]) == 1
    assert "Entries [1, 2, 3]" in report["batch_fallbacks"][0]
    assert "fairly routine" in report["batch_fallbacks"][0]
    assert _entries(assistant) == {1: (7, "llm"), 2: (7, "llm"), 3: (7, "llm")}


async def test_a_wrong_length_list_is_repaired_or_falls_back(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    await _journal(assistant, "One", "Two", "Three", "Four", "Five")
    # First batch (entries 1-3): two scores, then the repair gives three.
    scripted.enqueue("[4, 5]")
    scripted.enqueue("[4, 5, 6]")
    # Second batch (entries 4-5): three scores, then one; each entry is asked alone.
    scripted.enqueue("[2, 3, 9]")
    scripted.enqueue("[2]")
    scripted.enqueue("8")
    scripted.enqueue("9")

    with assistant._core.transaction() as unit:
        outcome = await score_pending_entries(unit, scripted, max_per_tick=5, batch_size=3)

    assert scripted.pending == 0
    assert outcome.llm_calls == 6
    assert [
        (s["id"], s["importance"], s["structured"], s.get("batch")) for s in outcome.scored
    ] == [
        (1, 4, "repaired", True),
        (2, 5, "repaired", True),
        (3, 6, "repaired", True),
        (4, 8, "parsed", None),
        (5, 9, "parsed", None),
    ]
    assert "expected 3 scores, one per event, got 2" in outcome.scored[0]["note"]
    assert "expected 2 scores, one per event, got 3" in outcome.batch_fallbacks[0]
    assert "expected 2 scores, one per event, got 1" in outcome.batch_fallbacks[0]
    assert _entries(assistant) == {
        1: (4, "llm"),
        2: (5, "llm"),
        3: (6, "llm"),
        4: (8, "llm"),
        5: (9, "llm"),
    }


async def test_numbered_scores_are_read_by_their_ids(scripted: ScriptedLLM) -> None:
    scripted.enqueue('[{"id": 2, "importance": 3}, {"id": 1, "importance": 8}]')
    ratings, note = await score_importance_batch(scripted, ["First", "Second"])
    assert note is None
    assert ratings is not None
    assert [(r.score, r.method, r.obtained) for r in ratings] == [
        (8, "llm", "parsed"),
        (3, "llm", "parsed"),
    ]


async def test_a_failing_llm_during_a_batch_stops_and_changes_nothing(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    await _journal(assistant, "One", "Two", "Three")
    scripted.enqueue("[4, 5]")
    scripted.enqueue_error(LLMConnectionError("connection refused"))
    with assistant._core.transaction() as unit:
        outcome = await score_pending_entries(unit, scripted, max_per_tick=3, batch_size=2)
    assert outcome.scored[0]["batch"] is True
    assert [s["id"] for s in outcome.scored] == [1, 2]
    assert outcome.error is not None
    assert "entry 3" in outcome.error  # the last batch has one entry: the single prompt
    assert outcome.remaining == 1
    assert _entries(assistant)[3][1] == "heuristic"


async def test_a_failing_llm_on_a_batch_names_its_entries(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    await _journal(assistant, "One", "Two", "Three")
    scripted.enqueue_error(LLMConnectionError("connection refused"))
    with assistant._core.transaction() as unit:
        outcome = await score_pending_entries(unit, scripted, max_per_tick=3)
    assert outcome.scored == []
    assert outcome.error is not None
    assert "rating entry 1 (in a batch of entries [1, 2, 3])" in outcome.error
    assert "connection refused" in outcome.error
    assert outcome.remaining == 3
    assert {method for _, method in _entries(assistant).values()} == {"heuristic"}


async def test_the_offline_model_answers_the_batch_prompt(
    make_assistant: Callable[..., Assistant],
) -> None:
    contents = [
        "Player Alice revealed the secret of the quest",
        "A routine patrol: the guard walked the ordinary route",
        "The warden entered the hall\nand asked: who is there?",
    ]
    offline = OfflineLLM(announce=False)
    ratings, note = await score_importance_batch(offline, contents)
    assert note is None
    assert ratings is not None
    # The same score the offline model gives each event alone: the heuristic, no source.
    assert [r.score for r in ratings] == [
        score_importance_heuristic(c.replace("\n", " "), "", []) for c in contents
    ]
    assert [r.score for r in ratings] == [9, 2, 7]
    assert all(r.obtained == "parsed" for r in ratings)

    assistant = make_assistant()
    await _journal(assistant, *(f"{c} ({n})" for n in range(4) for c in contents))
    with assistant._core.transaction() as unit:
        outcome = await score_pending_entries(unit, assistant.llm, max_per_tick=12)
    assert outcome.llm_calls == 2  # 10 + 2 entries
    assert outcome.llm_scored == 12
    assert all(s["batch"] is True for s in outcome.scored)
