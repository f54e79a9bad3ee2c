"""What a sleep tick did: typed progress for hosts, the operations' results for reports."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from mindspace.engine.loop import SideSession
from mindspace.engine.modes import SleepPhase
from mindspace.engine.night.budget import NightBacklog, NightBudget

__all__ = ["SleepProgress", "SleepTickResult"]


@dataclass(frozen=True)
class SleepProgress:
    """The counts of one sleep tick that hosts show (the night's progress)."""

    scored: int = 0
    """Journal entries the model scored (heuristic fallbacks do not count)."""
    consolidated: int = 0
    """Journal entries moved into semantic memory."""
    consolidation_remaining: int = 0
    """Entries still to consolidate after this tick (compacting)."""
    linked: int = 0
    """Memories given their A-MEM links."""
    links_created: int = 0
    links_remaining: int = 0
    """Memories still to link after this tick (dreaming)."""
    entities_consolidated: int = 0
    reflections: int = 0
    insights: int = 0
    pruned: int = 0

    @classmethod
    def of(cls, ops: dict[str, dict[str, Any]]) -> SleepProgress:
        """Read the counts from a tick's operation results."""
        consolidation = ops.get("run_sleep_consolidation", {})
        dreaming = ops.get("run_dreaming_tick", {})
        reflection = ops.get("run_reflection", {})
        reflected = reflection.get("success") is True
        return cls(
            scored=int(ops.get("score_pending_entries", {}).get("llm_scored", 0)),
            consolidated=int(consolidation.get("processed", 0)),
            consolidation_remaining=int(consolidation.get("remaining", 0)),
            linked=int(dreaming.get("processed", 0)),
            links_created=int(dreaming.get("links_created", 0)),
            links_remaining=int(dreaming.get("remaining", 0)),
            entities_consolidated=len(
                ops.get("run_entity_consolidation_batch", {}).get("entities", {})
            ),
            reflections=1 if reflected else 0,
            insights=len(reflection.get("insights", [])) if reflected else 0,
            pruned=len(ops.get("prune_low_importance_entries", {}).get("pruned", [])),
        )


@dataclass
class SleepTickResult:
    """What one sleep tick did.

    ``operations`` holds each operation's result under its spec name (for reports);
    ``progress`` the typed counts, ``finished`` whether the night's work is done.
    """

    phase: SleepPhase | None
    phase_after: SleepPhase | None
    operations: dict[str, dict[str, Any]] = field(default_factory=dict)
    woke: bool = False
    wake_reason: str | None = None
    deferred_wake: str | None = None
    """Why the assistant would have woken, when the wake waits for compacting to finish."""
    sessions: list[SideSession] = field(default_factory=list)
    """The LLM sessions the tick ran (consolidation, reflection, pre-compaction...), in
    order, for the viewer."""
    progress: SleepProgress = field(default_factory=SleepProgress)
    budget: NightBudget | None = None
    """What the tick was allowed to do (the settings, raised to fit the backlog)."""
    backlog: NightBacklog | None = None
    """The night's work left after this tick (carried over to the next sleep on waking)."""

    @property
    def finished(self) -> bool:
        """The night's work is done: compacting finished, every memory is linked and no
        conversation waits in a compaction round (its windows are read over ticks)."""
        extraction = self.operations.get("run_pre_compaction_extraction", {})
        return (
            not self.woke
            and self.phase_after == "dreaming"
            and "run_dreaming_tick" in self.operations
            and self.progress.links_remaining == 0
            and not extraction.get("queued")
        )

    def to_dict(self) -> dict[str, Any]:
        """The result as a plain dict."""
        return {
            "phase": self.phase,
            "phase_after": self.phase_after,
            "operations": self.operations,
            "woke": self.woke,
            "wake_reason": self.wake_reason,
            "deferred_wake": self.deferred_wake,
            "finished": self.finished,
            "budget": None if self.budget is None else asdict(self.budget),
            "backlog": None if self.backlog is None else self.backlog.to_dict(),
        }
