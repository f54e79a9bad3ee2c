"""Stage-1 relevance on paraphrases: what people told the assistant reaches the prompt.

The figures come from the labelled set in ``mindspace/evaluation/paraphrases.json``
(definitions in ``mindspace.evaluation.paraphrase``), measured through ``store_memory``
and the prompt a tick assembles for each question, with the default MiniLM embedder.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from mindspace import Assistant
from mindspace.config import Settings
from mindspace.embeddings.minilm import MiniLMEmbedder
from mindspace.evaluation.paraphrase import load_paraphrase_set, run_paraphrase_recall
from mindspace.llm.scripted import FunctionLLM


async def test_paraphrased_questions_bring_their_facts_and_little_else() -> None:
    report = await run_paraphrase_recall(embedder=MiniLMEmbedder())
    print(json.dumps(report, indent=2))  # the figures, for `pytest -s`
    for split in ("calibration", "heldout"):
        figures = report[split]
        assert figures["reach_rate"] >= 0.9, (split, figures)
        assert figures["unrelated_share"] < 0.2, (split, figures)


def test_the_labelled_set_is_large_enough_and_split() -> None:
    labelled = load_paraphrase_set()
    assert len(labelled.facts) >= 70
    assert len(labelled.split("heldout")) >= 20
    assert len(labelled.split("calibration")) + len(labelled.split("heldout")) == len(
        labelled.facts
    )
    assert any(f.source_entity for f in labelled.facts)  # some as the player said them
    assert len(labelled.filler) >= 20


async def _prompt_memories(assistant: Assistant, speaker: str, message: str) -> str:
    assistant.enqueue_event(message, source_entity=speaker)
    result = await assistant.tick()
    assert result.prompt is not None
    [component] = [c for c in result.prompt.components if c.key == "semantic_memories"]
    return component.content


async def test_a_player_asking_about_themselves_gets_their_fact_not_anothers(
    make_assistant: Callable[..., Assistant],
) -> None:
    # The report behind issue 11: the oak memory scored 0.668 against 0.7 and was left out.
    assistant = make_assistant(
        "keeper", embedder=MiniLMEmbedder(), llm=FunctionLLM(lambda m, t: "Noted.")
    )
    for fact in (
        "Alice is allergic to oak",
        "Bob is allergic to hazelnuts",
        "Alice's favourite drink is spiced plum cider",
        "The north bridge was repaired last spring",
    ):
        assert (await assistant.call_tool("store_memory", {"content": fact}))["success"]

    shown = await _prompt_memories(assistant, "Alice", "do you remember I'm allergic to oak?")
    assert "Alice is allergic to oak" in shown
    assert "hazelnuts" not in shown
    assert "north bridge" not in shown

    shown = await _prompt_memories(assistant, "Bob", "could the pastries make me ill?")
    assert "Bob is allergic to hazelnuts" in shown
    assert "oak" not in shown


async def test_the_spec_cut_alone_misses_the_paraphrase(
    make_assistant: Callable[..., Assistant], settings: Settings
) -> None:
    # Why the defaults differ from spec 003: with its plain 0.7 cut the fact never shows.
    assistant = make_assistant(
        "keeper",
        embedder=MiniLMEmbedder(),
        llm=FunctionLLM(lambda m, t: "Noted."),
        settings=settings.model_copy(
            update={"memory_relevance_threshold": 0.7, "memory_speaker_query_weight": 0.0}
        ),
    )
    assert (await assistant.call_tool("store_memory", {"content": "Alice is allergic to oak"}))[
        "success"
    ]
    shown = await _prompt_memories(assistant, "Alice", "do you remember I'm allergic to oak?")
    assert "oak" not in shown
