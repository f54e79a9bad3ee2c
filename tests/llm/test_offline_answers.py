"""The offline model through real ticks: facts kept per clause, questions answered from
memory and never stored, requests to tell treated as questions, in-character refusals.
"""

from __future__ import annotations

from collections.abc import Callable

from mindspace import Assistant, ManualClock
from mindspace.offline.answers import known_facts


async def _say(assistant: Assistant, clock: ManualClock, text: str, who: str = "Dave") -> str:
    clock.advance(minutes=5)
    assistant.enqueue_event(text, source_entity=who)
    result = await assistant.tick()
    assert result.status == "done", result.error
    return result.reply or ""


async def test_every_fact_of_a_message_is_kept_and_no_question_is(
    make_assistant: Callable[..., Assistant], clock: ManualClock
) -> None:
    a = make_assistant()
    reply = await _say(a, clock, "Hello! My name is Dave and I prefer red wine. I think so.")
    assert reply == "Hello, Dave! I'll remember that you prefer red wine."
    await _say(a, clock, "I'm a smith, and my sister lives in Oakvale.")
    await _say(a, clock, "What do I like to drink? Can you tell me what my trade is?")
    assert a.views.session_memory().key_facts == (
        "Dave prefers red wine",
        "Dave is a smith",
        "Dave's sister lives in Oakvale",
    )
    assert a.views.goals().all() == []  # "can you tell me ..." asks, it is no work


async def test_questions_are_answered_from_memory(
    make_assistant: Callable[..., Assistant], clock: ManualClock
) -> None:
    a = make_assistant()
    stored = await a.call_tool(
        "store_memory", {"content": "Alice grew up by the sea", "source_entity": "Alice"}
    )
    assert stored["success"] is True
    await _say(a, clock, "I prefer red wine and I hate turnips.")
    assert await _say(a, clock, "What do I like to drink?") == "You prefer red wine, Dave."
    assert await _say(a, clock, "Can you tell me what I like to drink?") == (
        "You prefer red wine, Dave."
    )
    remembered = await _say(a, clock, "Do you remember me?")
    assert remembered.startswith("Of course, Dave! ")
    assert "you hate turnips" in remembered
    alice = await _say(a, clock, "What do you know about Alice?")
    assert alice == "Here is what I know about Alice: Alice grew up by the sea."
    assert await _say(a, clock, "What do you know about Zed?") == (
        "I know nothing about Zed yet, Dave."
    )
    assert await _say(a, clock, "Who are you?") == "I'm barkeep, Dave. What can I do for you?"
    assert await _say(a, clock, "Do you remember me?", who="Mira") == (
        "I don't believe we've met, Mira. What brings you here?"
    )


async def test_a_refused_fact_gets_an_in_character_reply(
    make_assistant: Callable[..., Assistant], clock: ManualClock
) -> None:
    a = make_assistant()
    # A fact the persona guard would refuse is never sent; the reply never quotes a tool.
    for _ in range(2):
        reply = await _say(a, clock, "Remember that the assistant made me laugh.")
        assert "did not work" not in reply
        assert "Content appears" not in reply


def test_verbatim_memories_are_read_in_the_third_person() -> None:
    # What a person said, kept word for word, is a fact about them once rewritten.
    recalled = [
        {"content": 'Dave said: "I prefer red wine. What is on tap?"', "metadata": {}},
        {"content": "I hate turnips", "metadata": {"source_entity": "Dave"}},
        {"content": "Alice likes dark ale", "metadata": {"source_entity": "Alice"}},
    ]
    prompt = "Key facts:\n- Dave is a smith\n\n## Entity Context\nDave (player): x\n"
    assert known_facts(prompt, recalled, "Dave") == [
        "Dave is a smith",
        "Dave prefers red wine",
        "Dave hates turnips",
    ]
