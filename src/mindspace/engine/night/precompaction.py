"""Pre-compaction extraction for every conversation, then its compaction (spec 003 §5).

Compaction replaces a thread's old messages with a summary; before that, the assistant
gets one last chance to journal what they said (the ``pre_compaction`` context, journal
tools only). Once usage reaches the threshold a *round* starts: every thread with
something to compact is queued in :class:`CompactionRound`, and each tick runs at most
``MINDSPACE_PRE_COMPACTION_PER_TICK`` extraction sessions, then compacts the threads
whose old part has been read, and only that part. The round goes on over the next ticks,
asleep (70%) or awake (80%, before the tick's own session), until every queued thread is
compacted, whatever the usage meanwhile: no thread is ever compacted unread.

Read whole: a session's prompt shows the history within its token budget (8,000 tokens
by default), which trims the oldest messages, so the part to compact is read in
*windows* (:mod:`mindspace.engine.night.windows`) of consecutive messages that each fit it,
one session per window, and a thread is compacted only once its last window is read.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import Field

from mindspace.engine.core import EngineCore
from mindspace.engine.loop import SideSession
from mindspace.engine.night.compaction import (
    CompactionResult,
    compact_conversation_history,
    context_usage_percent,
    message_number,
    split_for_compaction,
    thread_messages,
)
from mindspace.engine.night.windows import window_budget, windows
from mindspace.engine.records import ConversationMessage
from mindspace.engine.session import Sessions
from mindspace.errors import LLMError
from mindspace.state.models import Document
from mindspace.state.unit import Unit

__all__ = ["PRE_COMPACTION_TASK", "CompactionRound", "RoundResult", "extract_then_compact"]

logger = logging.getLogger("mindspace.engine")

PRE_COMPACTION_TASK = (
    "Before the conversation history with {entity} is compacted into a summary, journal "
    "any facts about the world, the people and their preferences that are worth keeping "
    "(add_journal_entry, update_entity_observation). Call noop when nothing is left."
)


class CompactionRound(Document):
    """The compaction under way: threads still to compact and how far each was read."""

    name: ClassVar[str] = "compaction_round"

    queued: tuple[str, ...] = ()
    """Entities whose threads this round still compacts, in order."""
    extracted_through: dict[str, int] = Field(default_factory=dict)
    """Per entity, the number of the last message pre-compaction extraction has read."""


@dataclass
class RoundResult:
    """What one tick of a round did: the extraction report and the compaction."""

    extraction: dict[str, Any]
    compaction: CompactionResult
    sessions: list[SideSession] = field(default_factory=list)
    """The extraction sessions, for the context-window viewer."""


async def extract_then_compact(
    unit: Unit, core: EngineCore, sessions: Sessions, *, threshold: float
) -> RoundResult:
    """One tick's share of the round: start it at ``threshold``, extract, compact.

    The extraction report keeps its spec name's shape (``ran``, ``threads`` with each
    entity's tool calls or error) and adds ``queued`` (threads the round still holds).
    A thread whose extraction fails stays queued and uncompacted, for the next tick.
    """
    a = core
    state = unit.doc(CompactionRound)
    usage = context_usage_percent(unit, a.settings)
    if not state.queued and usage < threshold:
        return RoundResult(
            {"ran": False, "reason": "below threshold"}, CompactionResult(False, usage, threshold)
        )
    threads = thread_messages(unit)
    queued = list(state.queued) or list(threads)
    marks = dict(state.extracted_through)
    budget = a.settings.pre_compaction_per_tick
    report: dict[str, Any] = {"ran": True, "threads": {}}
    ready: dict[str, int] = {}
    still: list[str] = []
    done: list[SideSession] = []
    for entity in queued:
        old, _ = split_for_compaction(threads.get(entity, []))
        if not old:
            continue  # nothing (left) to compact in this thread
        last = message_number(old[-1])
        if marks.get(entity, 0) < last:
            if budget <= 0:
                still.append(entity)
                continue
            read, used, outcome, sessions_run = await _read(
                unit, sessions, entity, old, marks.get(entity, 0), budget, core
            )
            budget -= used
            done += sessions_run
            report["threads"][entity] = outcome
            if read:
                marks[entity] = read
            if read < last:
                still.append(entity)
                continue
        ready[entity] = marks[entity]
    compaction = (
        await compact_conversation_history(
            unit, a.clock, a.settings, a.llm, threshold=threshold, force=True, through=ready
        )
        if ready
        else CompactionResult(False, usage, threshold)
    )
    # A thread whose summary failed stays queued: it is read already, so the next tick
    # only retries the summary.
    still += [e for e in ready if e not in compaction.threads]
    report["queued"] = still
    unit.put_doc(CompactionRound(queued=tuple(still), extracted_through=marks))
    return RoundResult(report, compaction, done)


async def _read(
    unit: Unit,
    sessions: Sessions,
    entity: str,
    old: list[ConversationMessage],
    read: int,
    budget: int,
    core: EngineCore,
) -> tuple[int, int, dict[str, Any], list[SideSession]]:
    """Extraction sessions over the unread windows of ``old``, within ``budget`` sessions.

    Returns the number of the last message read, the sessions used, the thread's report
    (tool calls, iterations, windows read, or the error) and the sessions. The pieces of
    one message too long for a window are read in the same tick, past the budget if need
    be, so a message is never left half read.
    """
    task = PRE_COMPACTION_TASK.format(entity=entity or "no one")
    calls: list[tuple[str, bool]] = []
    iterations = 0
    used = 0
    ran: list[SideSession] = []
    outcome: dict[str, Any] = {}
    for window in windows(old, read, window_budget(core.settings)):
        if used >= budget and not window.continues:
            break
        used += 1
        try:
            session = await sessions.side(
                unit, "pre_compaction", task, entity=entity, history=window.messages
            )
        except LLMError as exc:
            outcome["error"] = str(exc)
            break
        ran.append(session)
        calls += [(c.name, c.ok) for c in session.loop.calls]
        iterations += session.loop.iterations
        read = max(read, window.through)
    outcome.update(
        {"tool_calls": calls, "iterations": iterations, "windows": len(ran), "read_through": read}
    )
    return read, used, outcome, ran
