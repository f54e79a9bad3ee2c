"""How much one sleep tick does: the night's work sized by what the day left.

The spec gives each sleep tick a fixed budget (score a few entries, consolidate 5,
link 5). A fixed budget is a fixed capacity: 240 ticks of a 4-hour night link 1,200
memories, so a day busier than that never catches up. Here the per-tick settings are
the floor; when the backlog would not fit in the ticks left before the wake time, a
tick takes its share of the backlog instead, up to ``sleep_catch_up_factor`` times the
setting. Compacting is planned to end within the first half of the ticks left, so
dreaming (linking the new memories) gets the other half. What a night cannot finish
stays pending, is shown by :func:`night_backlog` (``mindspace status``, the HTTP status,
the dashboard) and is taken up first by the next sleep.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from mindspace.clock import Clock, parse_time
from mindspace.config import Settings
from mindspace.engine.modes import OperatingMode, SleepSchedule
from mindspace.journal.pending import pending_entries
from mindspace.memory.linking import UnlinkedMemories
from mindspace.state.unit import StateCache, Unit

__all__ = [
    "COMPACTING_SHARE",
    "NightBacklog",
    "NightBudget",
    "night_backlog",
    "night_budget",
    "sleep_tick_seconds",
    "unlinked_memories",
]

COMPACTING_SHARE = 0.5
"""The part of the ticks left before the wake time that compacting is planned to take;
the rest is dreaming's, which links the memories compacting made."""


@dataclass(frozen=True)
class NightBacklog:
    """The night's work still to do.

    Attributes:
        unscored: Journal entries still waiting for an LLM importance score.
        unconsolidated: Journal entries not yet moved to semantic memory.
        unlinked: Memories not yet given A-MEM links.
    """

    unscored: int
    unconsolidated: int
    unlinked: int

    @property
    def empty(self) -> bool:
        """Whether no night work is left."""
        return not (self.unscored or self.unconsolidated or self.unlinked)

    def to_dict(self) -> dict[str, int]:
        """The counts as a plain dict."""
        return asdict(self)


@dataclass(frozen=True)
class NightBudget:
    """What one sleep tick may do.

    Attributes:
        scoring: Journal entries to score.
        consolidation: Journal entries to consolidate.
        links: Memories to link.
        ticks_left: Sleep ticks left before the wake time, this one included (None for
            a sleep without a wake time).
    """

    scoring: int
    consolidation: int
    links: int
    ticks_left: int | None


def unlinked_memories(cache: StateCache) -> UnlinkedMemories:
    """The unlinked-memories queue of ``cache``, created (and listening) on first use.

    One per cache, so the sleep cycle and the status views share it and a status call
    does not scan the store.
    """
    return cache.derived(UnlinkedMemories)


def night_backlog(unit: Unit, unlinked: UnlinkedMemories) -> NightBacklog:
    """What is left of the night's work, as ``unit`` sees the journal (O(1) once built)."""
    return NightBacklog(
        unscored=pending_entries(unit, "scoring", 0).total,
        unconsolidated=pending_entries(unit, "consolidation", 0).total,
        unlinked=len(unlinked),
    )


def sleep_tick_seconds(unit: Unit, settings: Settings) -> float:
    """Seconds between sleep ticks: the sleep schedule's rate, else the setting."""
    scheduled = unit.doc(SleepSchedule).tick_rate_sleep
    return scheduled if scheduled is not None else settings.tick_rate_sleep


def night_budget(
    unit: Unit, clock: Clock, settings: Settings, backlog: NightBacklog
) -> NightBudget:
    """This tick's budgets: the settings, raised to the backlog's share of the ticks left.

    Compacting plans to end :data:`COMPACTING_SHARE` of the way from the sleep's start to
    its wake time (a fixed point, so the plan does not recede as the night goes on) and
    scores at least as many entries as it consolidates (only scored entries move);
    dreaming spreads the unlinked memories over the ticks left before the wake time.
    Budgets are rounded up to whole scoring batches and consolidation sessions. Past a
    deadline (a wake deferred until compacting completes) a budget is at its most.
    """
    factor = settings.sleep_catch_up_factor
    state = unit.doc(OperatingMode)
    if state.wake_at is None:
        return NightBudget(
            settings.sleep_scoring_per_tick,
            settings.sleep_consolidation_per_tick,
            settings.sleep_links_per_tick,
            None,
        )
    now, wake = clock.now(), parse_time(state.wake_at)
    rate = sleep_tick_seconds(unit, settings)
    start = parse_time(state.since) if state.since is not None else now
    compacting_end = start + (wake - start) * COMPACTING_SHARE
    ticks_left = max(0, math.ceil((wake - now).total_seconds() / rate))
    compacting_left = max(0, math.ceil((compacting_end - now).total_seconds() / rate))

    def share(base: int, size: int, ticks: int, step: int = 1) -> int:
        wanted = size if ticks < 1 else math.ceil(size / ticks)
        if wanted <= base:
            return base
        wanted = math.ceil(wanted / step) * step  # whole batches: no half-empty calls
        return min(base * factor, wanted)

    consolidation = share(
        settings.sleep_consolidation_per_tick,
        backlog.unconsolidated,
        compacting_left,
        settings.sleep_consolidation_batch_size,
    )
    scoring = max(
        share(
            settings.sleep_scoring_per_tick,
            backlog.unscored,
            compacting_left,
            settings.scoring_batch_size,
        ),
        min(consolidation, settings.sleep_scoring_per_tick * factor),
    )
    links = share(settings.sleep_links_per_tick, backlog.unlinked, ticks_left)
    return NightBudget(scoring, consolidation, links, ticks_left)
