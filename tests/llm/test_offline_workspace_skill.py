"""The offline model's workspace skill, through real ticks of the engine."""

from __future__ import annotations

from collections.abc import Callable

from mindspace import Assistant, ManualClock
from mindspace.journal.records import JournalEntry
from mindspace.memory.records import EntityProfile


async def _say(assistant: Assistant, clock: ManualClock, text: str, who: str = "Bob") -> str:
    clock.advance(minutes=5)
    assistant.enqueue_event(text, source_entity=who)
    result = await assistant.tick()
    assert result.status == "done", result.error
    return result.reply or ""


async def test_projects_swaps_progress_and_the_project_log(
    make_assistant: Callable[..., Assistant], clock: ManualClock
) -> None:
    a = make_assistant()
    reply = await _say(
        a, clock, "Could you start a project to build a tavern with a bar, a kitchen and rooms?"
    )
    assert reply == "The build_tavern project is open, Bob, and I've planned 5 steps for it."
    await _say(a, clock, "Please start a project to design quests for the regulars.", "Carol")
    desk = a.views.projects()
    assert desk.active_key() == "build_tavern"
    assert {p.key for p in desk.all()} == {"build_tavern", "design_quests"}

    reply = await _say(a, clock, "The bar is built!")
    assert reply.startswith("Good news, Bob: Build a bar - done.")
    bar = next(g for g in a.views.goals().all() if g.description == "Build a bar")
    assert bar.status == "completed"

    reply = await _say(a, clock, "Let's switch to the quest project.")
    assert reply == "Very well, Bob: the design_quests project is loaded now."
    assert a.views.projects().active_key() == "design_quests"

    entries = a._core.read().all(JournalEntry)
    assert len(entries) == 4  # every exchange that changed the workspace, while a project is on
    assert entries[-1].related_projects == ("design_quests",)
    assert entries[-1].source_entity == "Bob"


async def test_facts_and_thanks_become_observations(
    make_assistant: Callable[..., Assistant], clock: ManualClock
) -> None:
    a = make_assistant()
    assert await _say(a, clock, "I prefer dark ale.", "Alice") == "I'll remember that, Alice."
    assert await _say(a, clock, "Thank you, that was kind!", "Alice") == "You're welcome, Alice."
    alice = a._core.read().get(EntityProfile, "Alice")
    assert alice is not None
    assert [(o.text, o.verbatim) for o in alice.observations] == [
        ('Alice said: "I prefer dark ale."', True),
        ("Alice prefers dark ale", False),
        ('Alice said: "Thank you, that was kind!"', True),
        ("Alice expressed thanks", False),
    ]
    assert alice.relationship.favorability == 0.3
    assert alice.relationship.state == "acquaintance"
    assert a._core.read().all(JournalEntry) == []  # no project: no project log


async def test_with_nothing_to_answer_it_never_makes_progress_nobody_made(
    make_assistant: Callable[..., Assistant], clock: ManualClock
) -> None:
    # It used to mark the first open goal 50% then 100% done with nobody working on it.
    a = make_assistant()
    goal = (await a.call_tool("add_goal", {"description": "Sweep the porch"}))["goal_id"]
    for _ in range(3):
        result = await a.tick()
        assert result.kind == "autonomous"
        assert result.reply == "Waiting for news on 'Sweep the porch' (0% done)."
        clock.advance(minutes=2)
    swept = a.views.goals().get(goal)
    assert (swept.status, swept.progress) == ("active", 0.0)
    reply = await _say(a, clock, "The porch is swept and finished.")
    assert reply.startswith("Good news, Bob: Sweep the porch - done.")
    assert a.views.goals().get(goal).status == "completed"
