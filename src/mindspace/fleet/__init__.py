"""The worker fleet: assistants' ticks as jobs on a PostgreSQL task queue (procrastinate).

An adapter, like :mod:`mindspace.storage`: the core never imports it, and hosts reach it
only through :mod:`mindspace.runtime` (``mindspace worker``, ``mindspace serve --ticks
queue``). See docs/scale-out.md for the rules it keeps:

* one ``tick`` job per assistant at a time across every worker (procrastinate ``lock``),
  at most one waiting (``queueing_lock``);
* each tick schedules the next at the assistant's rate (awake 5 s, asleep 60 s), at once
  after an event, with backoff after failures; idle assistants schedule nothing;
* a host's write that makes a tick due (an event, ``sleep``/``wake``, a schedule, a
  goal, a new assistant) defers it in its own commit (triggers on the store's tables),
  whatever process wrote it; every worker's sweep each heartbeat is the safety net;
* a job whose worker died mid-tick is retried by another worker (heartbeats), and the
  tick's unit of work is atomic, so its event is handled exactly once.
"""

from __future__ import annotations

from mindspace.fleet.connection import conninfo_of, require_postgres
from mindspace.fleet.dispatch import QueueDispatch
from mindspace.fleet.queue import TICK_TASK, Fleet, is_idle
from mindspace.fleet.worker import AssistantSource, WorkerOptions, run_worker

__all__ = [
    "TICK_TASK",
    "AssistantSource",
    "Fleet",
    "QueueDispatch",
    "WorkerOptions",
    "conninfo_of",
    "is_idle",
    "require_postgres",
    "run_worker",
]
