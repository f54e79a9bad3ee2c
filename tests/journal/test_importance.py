"""Importance scoring: the spec's heuristic (spec 004 §2), LLM parsing and pending upgrades."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mindspace import Assistant, ScriptedLLM
from mindspace.errors import LLMConnectionError, LLMResponseError
from mindspace.journal import (
    JournalBook,
    parse_importance,
    score_importance_heuristic,
    score_importance_llm,
    score_pending_entries,
)


@pytest.mark.parametrize(
    ("content", "source_type", "expected"),
    [
        # 5 base + 2 direct + 2 "player"; no low keyword, 54 chars, no !/? -> 9
        ("Player Alice prefers formal address and dislikes jokes", "direct", 9),
        # 5 base - 1 environmental; no high keyword; -1 routine -1 walked -1 ordinary -> 1
        ("A routine patrol: the guard walked the ordinary route", "environmental", 1),
        # 5 + 1 observation; revealed, secret, treasure, danger = +8 capped at +4; "!" +1
        # -> 11, clamped to 10
        ("Bob revealed a secret: the treasure map leads to danger!", "observation", 10),
        # 5 + 0 inference; no high keyword; -1 "moved" -> 4
        ("The merchant moved his stall to the square", "inference", 4),
        # substrings count: "war" inside "warden" +2; "entered" -1 -> 5 + 0 + 2 - 1 = 6
        ("The warden entered the hall", "inference", 6),
        # 5 + 1 observation; 201 characters +1 -> 7
        ("a" * 201, "observation", 7),
        # exactly 200 characters earns nothing; "?" +1; unknown source type +0 -> 6
        ("b" * 199 + "?", "gossip", 6),
    ],
)
def test_the_heuristic_scores_worked_out_by_hand(
    content: str, source_type: str, expected: int
) -> None:
    assert score_importance_heuristic(content, source_type, []) == expected


@given(st.text(max_size=400), st.sampled_from(["direct", "observation", "inference", "x"]))
def test_the_heuristic_always_stays_within_1_and_10(content: str, source_type: str) -> None:
    assert 1 <= score_importance_heuristic(content, source_type, None) <= 10


async def test_add_journal_entry_uses_the_heuristic_when_no_importance_is_given(
    assistant: Assistant,
) -> None:
    result = await assistant.call_tool(
        "add_journal_entry",
        {
            "content": "Bob revealed a secret: the treasure map leads to danger!",
            "source_type": "observation",
        },
    )
    assert (result["importance"], result["importance_method"]) == (10, "heuristic")


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("7", 7),
        (" 10\n", 10),
        ("```json\n8\n```", 8),
        ("```\n3\n```", 3),
    ],
)
def test_a_score_is_read_only_in_its_exact_form(reply: str, expected: int) -> None:
    assert parse_importance(reply) == expected


@pytest.mark.parametrize(
    "reply",
    [
        "the first 2 digits may not match",  # once read as importance 2, labelled llm
        "I'd rate this a 7 out of 10.",
        "Score: 8/10",
        "On a scale of 1-10, this event is a 6.",
        "7.6",
        "15",
        "0",
        "-2",
        '"7"',
        "true",
        "high importance",
        "",
        "```python\n7\n```",
    ],
)
def test_anything_but_the_exact_form_is_refused(reply: str) -> None:
    with pytest.raises(LLMResponseError):
        parse_importance(reply)


async def test_a_score_is_parsed_repaired_or_falls_back_with_its_label(
    scripted: ScriptedLLM,
) -> None:
    scripted.enqueue("6")
    scripted.enqueue("the first 2 digits may not match")
    scripted.enqueue("7")
    scripted.enqueue("This is fairly notable - I'd give it a 7 out of 10.")
    scripted.enqueue("Seven, really.")

    parsed = await score_importance_llm(scripted, "Alice found the lost sword", fallback=5)
    assert (parsed.score, parsed.method, parsed.obtained, parsed.note) == (6, "llm", "parsed", None)

    repaired = await score_importance_llm(scripted, "The king died", fallback=5)
    assert (repaired.score, repaired.method, repaired.obtained) == (7, "llm", "repaired")
    assert repaired.replies == ("the first 2 digits may not match", "7")
    assert repaired.note is not None
    assert "'the first 2 digits may not match' was refused" in repaired.note
    # The repair request shows the model its answer and what was wrong with it.
    repair = scripted.history[2]
    assert repair.messages[-2].role == "assistant"
    assert repair.messages[-2].content == "the first 2 digits may not match"
    assert "could not be used: the answer holds no JSON value" in repair.last_user_text
    assert "the integer score from 1 to 10" in repair.last_user_text

    fell_back = await score_importance_llm(scripted, "A cat slept", fallback=4)
    assert (fell_back.score, fell_back.method, fell_back.obtained) == (4, "heuristic", "fallback")
    assert fell_back.note is not None
    assert "the heuristic score 4 stands" in fell_back.note
    assert len(scripted.history) == 5  # exactly one repair per scoring, never more

    prompt = scripted.history[0].last_user_text
    assert prompt.startswith("Rate the significance of this event (1-10):\nAlice found the lost")
    assert prompt.endswith("Return only the integer score.")


async def _journal(assistant: Assistant, *contents: str) -> None:
    for content in contents:
        await assistant.call_tool("add_journal_entry", {"content": content})


async def test_pending_entries_are_upgraded_three_per_tick_one_call_each(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    await _journal(assistant, "One", "Two", "Three", "Four")
    await assistant.call_tool("add_journal_entry", {"content": "Manual", "importance": 2})
    for reply in ("3", "The score is 9", "9", "20", "twenty"):
        scripted.enqueue(reply)

    with assistant._core.transaction() as unit:
        # batch_size=1: the single-entry path, which a malformed batch falls back to.
        outcome = await score_pending_entries(unit, scripted, batch_size=1)

    report = outcome.to_dict()
    notes = [s.pop("note", None) for s in report["scored"]]
    assert report == {
        "scored": [
            {
                "id": 1,
                "previous_importance": 6,
                "importance": 3,
                "importance_method": "llm",
                "structured": "parsed",
            },
            {
                "id": 2,
                "previous_importance": 6,
                "importance": 9,
                "importance_method": "llm",
                "structured": "repaired",
            },
            {
                "id": 3,
                "previous_importance": 6,
                "importance": 6,
                "importance_method": "heuristic",
                "structured": "fallback",
            },
        ],
        "llm_scored": 2,
        "kept_heuristic": 1,
        "remaining": 2,  # entry 3 will be tried again, entry 4 was not reached
    }
    assert notes[0] is None
    assert "'The score is 9' was refused" in str(notes[1])
    assert "'20' then 'twenty'" in str(notes[2])
    entries = {
        e.id: e
        for e in JournalBook(assistant._core.read(), assistant.clock, assistant.settings).entries()
    }
    assert [(entries[i].importance, entries[i].importance_method) for i in range(1, 6)] == [
        (3, "llm"),
        (9, "llm"),
        (6, "heuristic"),
        (6, "heuristic"),
        (2, "manual"),
    ]
    assert entries[3].scoring_attempts == 1


async def test_an_unusable_reply_keeps_the_heuristic_and_goes_to_the_back(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    await _journal(assistant, "One", "Two")
    scripted.enqueue("no idea")
    scripted.enqueue("still no idea")
    with assistant._core.transaction() as unit:
        first = await score_pending_entries(unit, scripted, max_per_tick=1)
    assert first.scored[0]["importance_method"] == "heuristic"
    assert first.scored[0]["structured"] == "fallback"
    assert first.scored[0]["importance"] == 6
    assert "no idea" in first.scored[0]["note"]
    assert first.remaining == 2

    scripted.enqueue("5")
    with assistant._core.transaction() as unit:
        second = await score_pending_entries(unit, scripted, max_per_tick=1)
    assert second.scored[0]["id"] == 2  # entry 1 failed once, so entry 2 goes first


async def test_a_failing_llm_stops_the_batch_and_changes_nothing_more(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    await _journal(assistant, "One", "Two")
    scripted.enqueue("4")
    scripted.enqueue_error(LLMConnectionError("connection refused"))
    with assistant._core.transaction() as unit:
        outcome = await score_pending_entries(unit, scripted, batch_size=1)
    assert [s["id"] for s in outcome.scored] == [1]
    assert outcome.error is not None
    assert "entry 2" in outcome.error
    assert outcome.remaining == 1
    second = JournalBook(assistant._core.read(), assistant.clock, assistant.settings).get(2)
    assert (second.importance_method, second.scoring_attempts) == ("heuristic", 0)


async def test_the_offline_model_rates_with_the_heuristic(assistant: Assistant) -> None:
    await _journal(assistant, "Player Alice revealed the secret of the quest")
    with assistant._core.transaction() as unit:
        outcome = await score_pending_entries(unit, assistant.llm)
    # offline: 5 base, no source modifier, player/revealed/secret/quest capped at +4 -> 9
    assert outcome.scored == [
        {
            "id": 1,
            "previous_importance": 10,
            "importance": 9,
            "importance_method": "offline",  # rules, not a model: labelled as such
            "structured": "parsed",
        }
    ]
