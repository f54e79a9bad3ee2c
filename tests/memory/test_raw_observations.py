"""Every message from an entity is kept verbatim on its profile (spec 003 Pf), in the tick."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from mindspace import Assistant, ManualClock, ScriptedLLM, Settings
from mindspace.errors import LLMConnectionError
from mindspace.memory.entities import MAX_OBSERVATIONS, EntityBook
from mindspace.memory.records import EntityProfile
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on


def _profile(assistant: Assistant, entity: str) -> EntityProfile | None:
    return assistant._core.read().get(EntityProfile, entity)


async def _say(assistant: Assistant, llm: ScriptedLLM, text: str, **kwargs: Any) -> None:
    llm.enqueue("Noted.")
    assistant.enqueue_event(text, source_entity="Alice", **kwargs)
    result = await assistant.tick()
    assert result.status == "done", result.error


async def test_a_plain_text_turn_leaves_the_words_on_the_profile_at_once(
    make_assistant: Callable[..., Assistant], db_path: Path
) -> None:
    llm = ScriptedLLM()
    assistant = make_assistant(llm=llm)
    await _say(assistant, llm, "I'm allergic to oak,\n so no oak chairs please.")
    await _say(assistant, llm, "A secret: Bob hides the key.", type="whisper")

    # A second process sees it: it was committed with the tick.
    store = SqlStore.from_path(db_path)
    try:
        profile = (
            assistant_on(store, "barkeep", llm=OfflineLLM(announce=False))
            ._core.read()
            .get(EntityProfile, "Alice")
        )
    finally:
        store.close()
    assert profile is not None
    assert [(o.text, o.source_type, o.verbatim) for o in profile.observations] == [
        ('Alice said: "I\'m allergic to oak, so no oak chairs please."', "direct", True),
        ('Alice whispered: "A secret: Bob hides the key."', "direct", True),
    ]
    assert profile.relationship.interaction_count == 2
    assert not any(o.consolidated for o in profile.observations)


async def test_a_players_self_reference_is_kept_but_the_model_still_cannot_write_one(
    make_assistant: Callable[..., Assistant],
) -> None:
    llm = ScriptedLLM()
    assistant = make_assistant(llm=llm)
    await _say(assistant, llm, "My sword is broken and I need it by dawn.")
    profile = _profile(assistant, "Alice")
    assert profile is not None
    assert profile.observations[-1].text == (
        'Alice said: "My sword is broken and I need it by dawn."'
    )

    refused = await assistant.call_tool(
        "update_entity_observation",
        {"entity_id": "Alice", "observation": "I helped Alice with my own sword"},
    )
    assert refused["success"] is False
    assert "assistant" in refused["error"]
    profile = _profile(assistant, "Alice")
    assert profile is not None
    assert len(profile.observations) == 1  # nothing stored on refusal


async def test_verbatim_observations_are_capped_oldest_first_and_cut_to_length(
    make_assistant: Callable[..., Assistant], tmp_path: Path
) -> None:
    llm = ScriptedLLM()
    settings = Settings(
        data_dir=tmp_path, entity_raw_observations_max=3, entity_raw_observation_chars=40
    )
    assistant = make_assistant(llm=llm, settings=settings)
    noted = await assistant.call_tool(
        "update_entity_observation",
        {"entity_id": "Alice", "observation": "Alice prefers dark ale"},
    )
    assert noted["success"] is True
    for n in range(5):
        await _say(assistant, llm, f"Message number {n} from the square.")
    await _say(assistant, llm, "word " * 30)

    profile = _profile(assistant, "Alice")
    assert profile is not None
    texts = [o.text for o in profile.observations]
    assert texts[0] == "Alice prefers dark ale"  # the model's note outlives older messages
    assert texts[1:] == [
        'Alice said: "Message number 3 from the square."',
        'Alice said: "Message number 4 from the square."',
        'Alice said: "' + ("word " * 8).strip() + '\u2026"',
    ]
    assert len(texts[-1]) == len('Alice said: ""') + 40


async def test_the_models_notes_are_kept_before_verbatim_messages_at_the_total_cap(
    make_assistant: Callable[..., Assistant], clock: ManualClock
) -> None:
    assistant = make_assistant()
    with assistant._core.transaction() as unit:
        book = EntityBook(unit, clock, assistant.settings, assistant._core.guard)
        for n in range(10):
            book.note_message("Alice", f"message {n}")
        for n in range(MAX_OBSERVATIONS - 5):
            book.observe("Alice", f"Alice mentioned fact number {n}")
    profile = _profile(assistant, "Alice")
    assert profile is not None
    assert len(profile.observations) == MAX_OBSERVATIONS
    noted = [o for o in profile.observations if not o.verbatim]
    verbatim = [o.text for o in profile.observations if o.verbatim]
    assert len(noted) == MAX_OBSERVATIONS - 5
    assert verbatim == [f'Alice said: "message {n}"' for n in range(5, 10)]


async def test_a_failed_tick_keeps_the_observation_once(
    make_assistant: Callable[..., Assistant],
) -> None:
    # What was said is committed before the model is called (engine/formation.py): a
    # failed model call loses nothing, and running the event again adds nothing.
    llm = ScriptedLLM()
    assistant = make_assistant(llm=llm)
    llm.enqueue_error(LLMConnectionError("the endpoint is down"))
    event = assistant.enqueue_event("I'm allergic to oak.", source_entity="Alice")
    result = await assistant.tick()
    assert result.status == "failed"
    profile = _profile(assistant, "Alice")
    assert profile is not None
    assert [o.text for o in profile.observations] == ['Alice said: "I\'m allergic to oak."']
    await assistant.retry_event(event.id)
    llm.enqueue("Noted.")
    assert (await assistant.tick()).status == "done"
    profile = _profile(assistant, "Alice")
    assert profile is not None
    assert len(profile.observations) == 1
    assert profile.relationship.interaction_count == 1


async def test_ambient_chatter_is_not_an_observation(
    make_assistant: Callable[..., Assistant],
) -> None:
    assistant = make_assistant(llm=ScriptedLLM())
    assistant.enqueue_event(
        "Bob mutters that his cart is broken.",
        source_entity="Bob",
        metadata={"classification": "ambient"},
    )
    result = await assistant.tick()
    assert result.ambient_buffered == 1
    assert _profile(assistant, "Bob") is None


async def test_verbatim_messages_stay_out_of_the_prompts_entity_context(
    make_assistant: Callable[..., Assistant],
) -> None:
    llm = ScriptedLLM()
    assistant = make_assistant(llm=llm)
    await _say(assistant, llm, "I'm allergic to oak.")
    await assistant.call_tool(
        "update_entity_observation", {"entity_id": "Alice", "observation": "Alice is a smith"}
    )
    await _say(assistant, llm, "Hello again.")
    prompt = "\n".join(m.content or "" for m in llm.history[-1].messages)
    assert "observed: Alice is a smith" in prompt
    assert 'Alice said: "' not in prompt


async def test_zero_keeps_no_verbatim_messages(
    make_assistant: Callable[..., Assistant], tmp_path: Path
) -> None:
    llm = ScriptedLLM()
    settings = Settings(data_dir=tmp_path, entity_raw_observations_max=0)
    assistant = make_assistant(llm=llm, settings=settings)
    await _say(assistant, llm, "I'm allergic to oak.")
    profile = _profile(assistant, "Alice")
    assert profile is not None
    assert profile.observations == ()
    assert profile.relationship.interaction_count == 1
