"""The offline model knows no story; a scenario plugs its lines in through ``skills=``."""

from __future__ import annotations

from pathlib import Path

from mindspace.llm import Message
from mindspace.offline import OfflineLLM
from mindspace.offline.tavern import TAVERN_SKILLS

_SMALL_TALK = "Summarize the following conversation with Alice as a few short notes.\n\nyou: Hi"


async def test_the_built_in_summary_names_no_place() -> None:
    answer = await OfflineLLM(announce=False).complete([Message("user", _SMALL_TALK)])
    assert answer.text == "Alice and I exchanged a few words."


async def test_scenario_skills_come_before_the_built_in_ones() -> None:
    answer = await OfflineLLM(TAVERN_SKILLS, announce=False).complete(
        [Message("user", _SMALL_TALK)]
    )
    assert answer.text == "Alice and the tavern exchanged a few words."


async def test_a_scenario_skill_passes_on_requests_it_does_not_know() -> None:
    hello = [Message("user", "[say from Alice at Sat 16:00]\nHello there.")]
    plain = await OfflineLLM(announce=False).complete(hello)
    with_scenario = await OfflineLLM(TAVERN_SKILLS, announce=False).complete(hello)
    assert with_scenario == plain


def test_the_offline_model_mentions_no_demo_story() -> None:
    llm_dir = Path(__file__).resolve().parents[2] / "src" / "mindspace" / "llm"
    for path in llm_dir.glob("offline*.py"):
        text = path.read_text().casefold()
        for word in ("tavern", "barkeep", "rusty flagon"):
            assert word not in text, f"{path.name} mentions {word!r}"
