"""The night: everything a sleep tick does, in one room (spec 003 §2-5, 004 §6).

- :mod:`~mindspace.engine.night.cycle`: :class:`SleepCycle`, the sleep tick (wake checks,
  then the compacting or dreaming operations, one commit).
- :mod:`~mindspace.engine.night.result`: what a tick did (typed progress, the operations'
  results under their spec names).
- :mod:`~mindspace.engine.night.budget`: how much a tick does (the backlog and its share
  of the ticks left before the wake time).
- :mod:`~mindspace.engine.night.consolidation`: journal entries into semantic memory in
  the ``sleep_consolidate`` context.
- :mod:`~mindspace.engine.night.unmined`: which conversation messages mining reads.
- :mod:`~mindspace.engine.night.compaction`, :mod:`~mindspace.engine.night.precompaction`
  and :mod:`~mindspace.engine.night.windows`: pre-compaction extraction and conversation
  compaction (operations 7 and 8; the awake tick runs the same round at 80%).

The operations on memory that need no engine (fact mining, A-MEM linking, entity
consolidation) live in :mod:`mindspace.memory`, those on the journal (importance scoring,
reflection, pruning) in :mod:`mindspace.journal`; this room schedules them and runs the
ones that need a session (a ReAct loop in a context type). The domain never imports it
(``domain-below-engine`` in pyproject.toml).
"""
