"""Entity consolidation reads the model's attributes strictly: parsed, repaired or skipped."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console

from mindspace import Assistant, ScriptedLLM
from mindspace.embeddings import HashingEmbedder
from mindspace.engine.night.result import SleepTickResult
from mindspace.hosts.cli.night_report import night_table
from mindspace.memory.entity_consolidation import run_entity_consolidation_batch
from mindspace.memory.records import EntityProfile


async def _observe(assistant: Assistant, entity: str, *observations: str) -> None:
    for text in observations:
        result = await assistant.call_tool(
            "update_entity_observation", {"entity_id": entity, "observation": text}
        )
        assert result["success"] is True, result


async def _consolidate(assistant: Assistant, llm: ScriptedLLM) -> dict[str, object]:
    with assistant._core.transaction() as unit:
        return await run_entity_consolidation_batch(
            unit, assistant.clock, assistant.settings, llm, assistant._core.guard
        )


def _profile(assistant: Assistant, entity: str) -> EntityProfile:
    profile = assistant._core.read().get(EntityProfile, entity)
    assert profile is not None
    return profile


async def test_attributes_are_parsed_repaired_or_the_entity_is_skipped(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant("keeper", llm=scripted, embedder=HashingEmbedder(256))
    await _observe(assistant, "Alice", "Alice prefers dark ale")
    await _observe(assistant, "Bob", "Bob fears the dark")
    await _observe(assistant, "Carol", "Carol owns the mill")
    scripted.enqueue('{"drink": " dark ale ", "": "dropped"}')  # Alice: parsed
    scripted.enqueue("Bob is afraid of the dark.")  # Bob: refused ...
    scripted.enqueue('Here: {"fears": "the dark"}')  # ... and repaired
    scripted.enqueue("owner of the mill")  # Carol: refused ...
    scripted.enqueue('{"owns": ["the mill"]}')  # ... and refused again: skipped

    report = await _consolidate(assistant, scripted)

    assert report["entities"] == {"Alice": {"drink": "dark ale"}, "Bob": {"fears": "the dark"}}
    assert report["repaired"] == 1
    skipped = report["skipped"]
    assert isinstance(skipped, dict)
    assert list(skipped) == ["Carol"]
    assert "no usable attributes (after one repair)" in skipped["Carol"]
    assert "owns: Input should be a valid string" in skipped["Carol"]
    assert report["errors"] == []
    # Every request, repairs included, is bounded by the reply limit.
    assert [call.max_tokens for call in scripted.history] == [assistant.settings.llm_max_tokens] * 5
    # A skipped entity keeps its observations pending and its attributes untouched.
    carol = _profile(assistant, "Carol")
    assert carol.attributes == {}
    assert [o.consolidated for o in carol.observations] == [False]
    assert all(o.consolidated for o in _profile(assistant, "Alice").observations)

    # The skip is shown as such in the night report, not as attributes updated.
    table = night_table(
        [SleepTickResult("dreaming", "dreaming", {"run_entity_consolidation_batch": report})]
    )
    console = Console(width=200, record=True)
    console.print(table)
    text = console.export_text()
    assert "2 attributes updated on 2 entities: Alice, Bob" in text
    assert "1 entity skipped (no usable answer)" in text

    # The next dreaming tick tries Carol again.
    scripted.enqueue('{"owns": "the mill"}')
    again = await _consolidate(assistant, scripted)
    assert again["entities"] == {"Carol": {"owns": "the mill"}}
    assert _profile(assistant, "Carol").attributes == {"owns": "the mill"}
