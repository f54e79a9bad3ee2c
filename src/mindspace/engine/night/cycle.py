"""The sleep tick: compacting, then dreaming (spec 003 §2-5, 004 §6).

A sleep tick is one unit of work committed at its end, so a process killed halfway
through a phase stores nothing of that tick and the next tick redoes it: every journal
entry is scored and consolidated exactly once. Each operation returns a result dict;
the tick returns all of them under their spec names.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Sequence
from datetime import timedelta
from typing import Any, TypeVar

from mindspace.engine.core import EngineCore
from mindspace.engine.modes import (
    OperatingMode,
    check_wake_conditions,
    perform_wake_transition,
)
from mindspace.engine.night.budget import (
    NightBacklog,
    NightBudget,
    night_backlog,
    night_budget,
    unlinked_memories,
)
from mindspace.engine.night.consolidation import run_sleep_consolidation
from mindspace.engine.night.precompaction import extract_then_compact
from mindspace.engine.night.result import SleepProgress, SleepTickResult
from mindspace.engine.night.unmined import all_utterances, unmined_for_tick
from mindspace.engine.records import Event
from mindspace.engine.session import Sessions
from mindspace.errors import MindspaceError
from mindspace.journal.book import prune_low_importance_entries
from mindspace.journal.episodic import EpisodicWeights
from mindspace.journal.evidence import Evidence, JournalEvidence
from mindspace.journal.importance import score_pending_entries
from mindspace.journal.reflection import ContextAsk, reflect_if_due
from mindspace.journal.vectors import embed_pending_entries
from mindspace.memory.entity_consolidation import run_entity_consolidation_batch
from mindspace.memory.judgement import ModelJudge
from mindspace.memory.linking import prune_orphaned_memory_links, run_dreaming_tick
from mindspace.memory.mining import MiningResult, MiningState, mine_conversations
from mindspace.memory.semantic import SemanticMemory
from mindspace.memory.working import WorkingMemoryBook
from mindspace.state.unit import Unit

__all__ = ["MemoryEvidence", "SleepCycle", "SleepTickResult"]

logger = logging.getLogger("mindspace.engine")

T = TypeVar("T")


class MemoryEvidence:
    """Reflection evidence from semantic memory, topped up from the journal."""

    def __init__(self, memory: SemanticMemory, journal: JournalEvidence) -> None:
        self.memory = memory
        self.journal = journal

    async def find(self, question: str, limit: int) -> Sequence[Evidence]:
        """Up to ``limit`` memories for the question, then journal entries to fill up."""
        found = [
            Evidence(r.memory.id, r.memory.content, r.score)
            for r in await self.memory.arecall(question, limit=limit)
        ]
        if len(found) < limit:
            found += list(await self.journal.find(question, limit - len(found)))
        return found[:limit]


class SleepCycle:
    """Runs sleep ticks for one assistant (the caller holds the assistant's lock).

    Args:
        core: The assistant's state and ports.
        sessions: Runs the pre-compaction extraction sessions.
    """

    def __init__(self, core: EngineCore, sessions: Sessions) -> None:
        self.core = core
        self.sessions = sessions
        # Shared with the status views (one queue per cache, built from the store once).
        self._unlinked = unlinked_memories(core.state)

    async def tick(self, pending: Sequence[Event]) -> SleepTickResult:
        """One sleep tick: wake checks, then the current phase's operations, one commit."""
        a = self.core
        unit = a.state.begin()
        state = unit.doc(OperatingMode)
        result = SleepTickResult(phase=state.sleep_phase, phase_after=state.sleep_phase)
        should_wake, reason, deferred = check_wake_conditions(
            unit, a.clock, pending, default_hours=a.settings.sleep_default_hours
        )
        if should_wake:
            perform_wake_transition(
                unit, a.clock, reason, cooldown_minutes=a.settings.wake_cooldown_minutes
            )
            a.state.commit(unit)
            result.woke, result.wake_reason, result.phase_after = True, reason, None
            result.backlog = self._left()  # carried over to the next sleep
            return result
        if deferred:
            result.deferred_wake = reason
            unit.put_doc(unit.doc(OperatingMode).model_copy(update={"wake_deferred": reason}))
        budget = night_budget(unit, a.clock, a.settings, night_backlog(unit, self._unlinked))
        result.budget = budget
        if state.sleep_phase == "compacting":
            await self._traced("compacting", self._compacting(unit, result, budget))
        else:
            await self._traced("dreaming", self._dreaming(unit, result, budget))
        state = unit.doc(OperatingMode)
        unit.put_doc(state.model_copy(update={"sleep_ticks": state.sleep_ticks + 1}))
        result.progress = SleepProgress.of(result.operations)
        if state.wake_deferred and state.sleep_phase == "dreaming":
            # Compacting completed: the deferred wake happens now.
            perform_wake_transition(
                unit,
                a.clock,
                f"{state.wake_deferred} (after compacting)",
                cooldown_minutes=a.settings.wake_cooldown_minutes,
            )
            result.woke = True
            result.wake_reason = unit.doc(OperatingMode).reason
            result.phase_after = None
        else:
            result.phase_after = unit.doc(OperatingMode).sleep_phase
        a.state.commit(unit)
        result.backlog = self._left()
        return result

    def _left(self) -> NightBacklog:
        """The night's work left as committed (this tick's new memories count as unlinked)."""
        return night_backlog(self.core.state.begin(), self._unlinked)

    async def _traced(self, operation: str, work: Awaitable[T]) -> T:
        """Await ``work`` in a ``sleep_operation`` span (a phase, or one operation)."""
        attributes = {"mindspace.assistant": self.core.key, "mindspace.sleep.operation": operation}
        with self.core.tracer.span("sleep_operation", f"mindspace.sleep {operation}", attributes):
            return await work

    def _memory(self, unit: Unit) -> SemanticMemory:
        a = self.core
        calls = a.settings.memory_reconcile_model_calls
        # At night the model may judge close calls between a new fact and a memory.
        judge = ModelJudge(a.llm, max_calls=calls) if calls > 0 else None
        return SemanticMemory(unit, a.clock, a.settings, a.embedder, a.memory_index, judge)

    async def _compacting(self, unit: Unit, result: SleepTickResult, budget: NightBudget) -> None:
        a = self.core
        scoring = await score_pending_entries(
            unit, a.llm, budget.scoring, a.settings.scoring_batch_size
        )
        result.operations["score_pending_entries"] = scoring.to_dict()
        consolidation = await run_sleep_consolidation(
            unit,
            a.clock,
            a.settings,
            self._memory(unit),
            budget.consolidation,
            guard=a.guard,
            sessions=self.sessions,
            scoring_failed=scoring.error is not None,
            ran=result.sessions,
        )
        result.operations["run_sleep_consolidation"] = consolidation
        mining = await self._mine(unit)
        result.operations["mine_conversations"] = mining.to_dict()
        if consolidation["completed"] and mining.completed:
            # Every entry is consolidated (and the day's conversations mined): the phase
            # moves on in this same commit.
            state = unit.doc(OperatingMode)
            unit.put_doc(state.model_copy(update={"sleep_phase": "dreaming"}))

    async def _mine(self, unit: Unit) -> MiningResult:
        """Facts from the conversations not yet mined (memory does not need tool use)."""
        a = self.core
        state = unit.doc(MiningState)
        reach = unmined_for_tick(
            unit,
            state.mined_through,
            a.settings.mining_calls_per_tick,
            a.settings.mining_messages_per_call,
        )
        if reach is None:  # messages not yet committed: the index cannot see them
            said, remaining = all_utterances(unit), None
        else:  # only the threads and messages this tick can reach
            said, remaining = reach
        memory = self._memory(unit)
        return await mine_conversations(
            unit, a.settings, a.llm, a.guard, memory, said, remaining=remaining
        )

    def _asker(self, unit: Unit, result: SleepTickResult) -> ContextAsk:
        """Runs reflection's steps as sessions in their contexts, kept for the viewer."""

        async def ask(context_type: str, task: str, tool_result: str | None) -> str:
            session = await self.sessions.side(unit, context_type, task, tool_result=tool_result)
            result.sessions.append(session)
            return session.loop.reply or ""

        return ask

    async def _dreaming(self, unit: Unit, result: SleepTickResult, budget: NightBudget) -> None:
        a = self.core
        ops = result.operations
        # New memories from this night are committed, so the index holds them.
        ops["run_dreaming_tick"] = run_dreaming_tick(
            unit,
            a.clock,
            a.memory_index,
            a.settings.memory_link_threshold,
            self._unlinked,
            budget.links,
        )
        ops["prune_orphaned_memory_links"] = prune_orphaned_memory_links(unit)
        ops["run_entity_consolidation_batch"] = await run_entity_consolidation_batch(
            unit, a.clock, a.settings, a.llm, a.guard
        )
        evidence = MemoryEvidence(
            self._memory(unit),
            JournalEvidence(unit, a.clock, EpisodicWeights.from_settings(a.settings)),
        )
        try:
            ask = self._asker(unit, result)
            outcome = await self._traced(
                "run_reflection",
                reflect_if_due(unit, a.clock, a.settings, a.llm, a.guard, evidence, ask),
            )
            ops["run_reflection"] = outcome.to_dict() if outcome else {"triggered": False}
        except MindspaceError as exc:
            ops["run_reflection"] = {"triggered": True, "error": str(exc)}
        pruned = prune_low_importance_entries(unit, a.clock, a.settings)
        ops["prune_low_importance_entries"] = {"pruned": [e.id for e in pruned]}
        ops["embed_journal_entries"] = await self._embed_journal(unit)
        working = WorkingMemoryBook(unit, a.clock)
        stale = working.clear_stale_conversations(
            timedelta(minutes=a.settings.stale_conversation_minutes)
        )
        ops["clear_stale_conversations"] = {"cleared": stale}
        threshold = a.settings.compact_sleep_threshold
        done = await extract_then_compact(unit, a, self.sessions, threshold=threshold)
        result.sessions += done.sessions
        ops["run_pre_compaction_extraction"] = done.extraction
        ops["compact_conversation_history"] = done.compaction.to_dict()

    async def _embed_journal(self, unit: Unit) -> dict[str, Any]:
        """Store a batch of journal entry vectors (semantic search_journal reads them)."""
        a = self.core
        if a.embedder is None or a.journal_index is None:
            return {"embedded": 0, "dropped": 0}
        batch = a.settings.sleep_journal_vectors_per_tick
        try:
            return await embed_pending_entries(unit, a.journal_index, a.embedder, batch=batch)
        except MindspaceError as exc:
            # Search embeds what has no stored vector, so the night goes on without them.
            return {"embedded": 0, "dropped": 0, "error": str(exc)}
