"""How much a sleep tick may do: the settings, raised to fit the backlog before the wake."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from mindspace import Assistant, ManualClock, Settings
from mindspace.engine.night.budget import NightBacklog, NightBudget, night_budget


async def budget_after(
    assistant: Assistant, clock: ManualClock, backlog: NightBacklog, minutes: float
) -> NightBudget:
    """The budget ``minutes`` into a 4-hour sleep (240 ticks of a minute)."""
    await assistant.sleep("night", hours=4)
    clock.advance(minutes=minutes)
    return night_budget(assistant._core.read(), clock, assistant.settings, backlog)


async def test_a_quiet_day_gets_the_settings(
    make_assistant: Callable[..., Assistant], clock: ManualClock
) -> None:
    budget = await budget_after(make_assistant(), clock, NightBacklog(40, 40, 0), 0)
    assert budget == NightBudget(scoring=50, consolidation=25, links=5, ticks_left=240)


async def test_a_busy_day_is_spread_over_the_night_in_whole_batches(
    make_assistant: Callable[..., Assistant], clock: ManualClock
) -> None:
    assistant = make_assistant()
    # 10,000 entries over the 120 ticks compacting may take: 84 a tick, rounded up to
    # whole sessions (25) and scoring calls (25).
    first = await budget_after(assistant, clock, NightBacklog(10_000, 10_000, 0), 0)
    assert (first.consolidation, first.scoring) == (100, 100)
    # Compacting must end 120 ticks into the sleep whatever the tick: 60 ticks in, the
    # 6,000 left get the 60 ticks left (100 a tick), not half of the 180 left.
    clock.advance(minutes=60)
    later = night_budget(
        assistant._core.read(), clock, assistant.settings, NightBacklog(0, 6_000, 0)
    )
    assert later.consolidation == 100
    assert later.ticks_left == 180
    # Dreaming spreads the memories over all the ticks left: 9,000 over 180.
    assert (
        night_budget(
            assistant._core.read(), clock, assistant.settings, NightBacklog(0, 0, 9_000)
        ).links
        == 50
    )


async def test_budgets_stop_at_the_catch_up_factor_and_past_the_wake_time(
    make_assistant: Callable[..., Assistant], clock: ManualClock
) -> None:
    # Past the wake time (a wake deferred until compacting completes): at most 20 times.
    late = await budget_after(make_assistant(), clock, NightBacklog(99_999, 99_999, 99_999), 300)
    assert late == NightBudget(scoring=1_000, consolidation=500, links=100, ticks_left=0)


async def test_a_factor_of_one_keeps_the_specs_fixed_budgets(
    make_assistant: Callable[..., Assistant], clock: ManualClock, tmp_path: Path
) -> None:
    fixed = Settings(data_dir=tmp_path, sleep_catch_up_factor=1)
    assistant = make_assistant(settings=fixed)
    budget = await budget_after(assistant, clock, NightBacklog(10_000, 10_000, 10_000), 0)
    assert (budget.scoring, budget.consolidation, budget.links) == (50, 25, 5)
