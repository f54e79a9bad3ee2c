"""Taking events: the commit that keeps what was said before the model is called.

Split from :mod:`mindspace.engine.tick` (which runs the tick). An awake tick that takes
an event commits, before any model call, one unit of work: the event marked
``processing`` with its attempt counted, the speaker's words as memory
(:func:`~mindspace.engine.formation.form_memories`), and the overheard (ambient) events
that came with it, buffered and done. A model call that fails or times out afterwards
loses nothing that was said; the tick's own commit follows it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from mindspace.clock import format_time
from mindspace.engine.core import EngineCore
from mindspace.engine.formation import form_memories
from mindspace.engine.records import BufferedMessage, ContextBuffer, Event
from mindspace.errors import ConcurrencyError
from mindspace.state.unit import Unit

__all__ = ["buffer_ambient", "committed", "take_event"]

logger = logging.getLogger("mindspace.engine")

T = TypeVar("T")


async def committed(core: EngineCore, body: Callable[[Unit], Awaitable[T]]) -> T:
    """Run ``body`` in a unit and commit it; what ``body`` returned. Redone on fresh state
    when another process won the commit (at most ``conflict_retries`` times; the caller
    holds the lock).

    The first attempt reads the state as the tick's refresh under the lock left it: a
    commit from elsewhere since then fails the revision check, and the redo refreshes.
    """
    retries = core.settings.conflict_retries
    for attempt in range(retries + 1):
        try:
            with core.transaction(refresh=attempt > 0) as unit:
                # Returning from inside the block commits the unit on the way out.
                return await body(unit)
        except ConcurrencyError as exc:
            if attempt >= retries:
                raise
            logger.info("A commit of %r's tick lost a race (%s); redoing it", core.key, exc)
    raise AssertionError("unreachable: the last attempt returns or raises")


async def buffer_ambient(core: EngineCore, ambient: list[Event]) -> None:
    """Commit overheard events on a tick that takes no event (else :func:`take_event`)."""
    if ambient:
        await committed(core, lambda unit: _buffer(core, unit, ambient))


async def _buffer(core: EngineCore, unit: Unit, ambient: list[Event]) -> None:
    """Keep overheard events in ``unit``: as memory, in the context buffer, and done."""
    now = format_time(core.clock.now())
    # Overheard words are memory too (environmental, below the prompt's trust).
    await form_memories(core, unit, ambient)
    buffer = unit.doc(ContextBuffer)
    added = tuple(
        BufferedMessage(at=e.created_at, source=e.source_entity, text=e.content) for e in ambient
    )
    keep = core.settings.context_buffer_size
    unit.put_doc(ContextBuffer(messages=(*buffer.messages, *added)[-keep:]))
    for event in ambient:
        unit.put(event.model_copy(update={"status": "done", "updated_at": now}))


async def take_event(core: EngineCore, event: Event, ambient: list[Event]) -> tuple[str, ...]:
    """Commit ``event`` taken (as given: ``processing``, its attempt counted) and what its
    speaker said as memory, with the overheard events beside it; the memories' ids.

    Raises:
        Exception: whatever formation or the commit raised. Nothing of the unit was
            written then, so the attempt is counted on its own first: an event whose
            words cannot be kept is still given up after ``max_event_attempts``.
    """

    async def take(unit: Unit) -> tuple[str, ...]:
        if ambient:
            await _buffer(core, unit, ambient)
        unit.put(event)
        return tuple(m.id for m in await form_memories(core, unit, [event]))

    try:
        return await committed(core, take)
    except Exception:
        try:
            core.queue.mark(event, status="processing", attempts=event.attempts)
        except Exception:
            logger.exception("Could not count attempt %d of event %r", event.attempts, event.id)
        raise
