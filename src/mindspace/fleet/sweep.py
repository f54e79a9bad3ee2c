"""The sweep: every heartbeat, a worker gives a tick to each assistant that needs one.

Ticks are scheduled from three places: a finished tick schedules the next (the queue's
rules), a host's write that makes a tick due defers it in its own commit (the fleet's
triggers, :mod:`mindspace.fleet.triggers`), and this sweep, the safety net: it serves
what the other two miss (a tick's write to another assistant, a store whose triggers
are not installed yet). One query per heartbeat lists the assistants that have no tick
waiting or running, with their revision and whether an event is open.

* An open event: its tick is scheduled at once.
* Otherwise, an assistant whose revision moved since this worker last looked (a new
  goal, a sleep schedule, ``sleep``, a decided approval...), or one it has not seen yet,
  is opened and asked :func:`~mindspace.fleet.queue.is_idle`; if it is not idle, its
  tick is scheduled at once (the tick then keeps its own rate).
* An idle assistant that did not change costs one row of the query and nothing else.

Every worker sweeps; the queue's ``queueing_lock`` makes concurrent sweeps schedule one
tick per assistant. The first sweep of a starting worker sees every assistant: it is
how a restarted fleet resumes.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from mindspace.fleet.queue import TICK_TASK, Fleet, is_idle
from mindspace.storage.tables import assistants, events

__all__ = ["SweepResult", "Sweeper"]

logger = logging.getLogger("mindspace.fleet")

# One round trip. The two NOT EXISTS match procrastinate's partial indexes (queueing_lock
# of 'todo' jobs, lock of 'doing' jobs); open events are few, found by the status index.
_JOBLESS = f"""
SELECT a.key AS key, a.revision AS revision, EXISTS (
           SELECT 1 FROM {events.name} e
            WHERE e.assistant_id = a.id AND e.status IN ('pending', 'processing')
       ) AS has_open_event
  FROM {assistants.name} a
 WHERE NOT EXISTS (
           SELECT 1 FROM procrastinate_jobs j
            WHERE j.queueing_lock = a.key AND j.status = 'todo' AND j.task_name = %(task)s
       )
   AND NOT EXISTS (
           SELECT 1 FROM procrastinate_jobs j
            WHERE j.lock = a.key AND j.status = 'doing' AND j.task_name = %(task)s
       )
"""


@dataclass
class SweepResult:
    """What one sweep did: assistants without a tick, and those it scheduled."""

    jobless: int = 0
    scheduled: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


class Sweeper:
    """Schedules the ticks that nobody else scheduled (see the module docstring).

    Args:
        fleet: The worker's queue (with an opener for assistants).
    """

    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet
        self._seen: dict[str, int] = {}

    async def sweep(self) -> SweepResult:
        """Look once; schedule a tick for every assistant that needs one and has none."""
        result = SweepResult()
        rows = await self.fleet.app.connector.execute_query_all_async(_JOBLESS, task=TICK_TASK)
        result.jobless = len(rows)
        for row in rows:
            key = str(row["key"])
            try:
                if row["has_open_event"] or self._not_idle(key, int(row["revision"])):
                    await self.fleet.schedule(key, 0.0)
                    result.scheduled.append(key)
            except Exception:
                result.failed.append(key)
                logger.exception("Could not open assistant %r; trying again next heartbeat", key)
        return result

    def _not_idle(self, key: str, revision: int) -> bool:
        if revision in (self._seen.get(key), self.fleet.idle_at.get(key)):
            return False  # idle at this revision already (seen here, or after our tick)
        # A store read on the loop, like the ticks' own (the store is synchronous); it
        # happens once per change of an assistant that has no tick.
        busy = not is_idle(self.fleet.assistant(key))
        if not busy:
            self._seen[key] = revision
        return busy
