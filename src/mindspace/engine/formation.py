"""Memory formation: what a person says is memory before any model reads it.

Every host turns what people say into events (``mindspace chat``, the HTTP API, Evennia
``say``/``talk``/``whisper``, MCP); the tick that takes an event, and the tick that
buffers ambient ones, first calls :func:`form_memories`, in a unit of work of its own
that is committed before the model is called. So whatever the model does next (calls no
tool, answers in prose, times out, fails), what was said is already recallable by
``recall_memories``, ``mindspace memories search`` and the prompt's semantic memories.
The night then refines it (mining, linking, consolidation); it is never the only way in.

For an event of a spoken type (``message``, ``say``, ``tell``, ``page``, ``whisper``)
from an entity that is not the assistant itself:

* a message that states something (:func:`mindspace.memory.utterance.statements`: one
  that only asks, greets or chats is not kept) becomes a memory verbatim, with the
  speaker as ``source_entity``, ``source: "message"``, source type ``direct`` (trust
  0.9) or, for an ambient (overheard) event, ``environmental`` (trust 0.3), the event's
  time as ``occurred_at`` and the host's ``metadata.ref`` (else ``event:<id>``) as
  ``ref``;
* a long message (an assistant's explanation, a pasted text: over
  :data:`PASSAGE_CHARS` characters) is cut by
  :func:`mindspace.memory.chunking.chunk_text` into consecutive passages, each a memory
  with the same ``ref`` (its source turn) and a ``part:<i>/<n>`` tag, so what is said in
  its middle is found by its own words and meaning (the embedder reads only a text's
  first 256 tokens); recall shows a message once, by its best passage;
* the messages around it in the same exchange (same location, at most ten minutes
  apart) are its ``context``, as the night gives a journal memory its neighbouring
  entries: those since the previous memory of the exchange before it (a question that
  was not kept among them), the next ones after it. An answer ("Paris.") is found
  through its question. Only people's words go there, never the assistant's replies;
* an addressed event also meets its speaker and keeps the message as a verbatim
  observation on their profile and in working memory.

The persona guard is not applied to these words: they are the speaker's own, and their
"I" is the speaker's. The assistant's own text never comes this way (events from the
assistant's own names are skipped). Each event is formed once: its id is noted in the
same commit, so a retried or redone event adds nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import ClassVar

from mindspace.clock import parse_time
from mindspace.engine.core import EngineCore
from mindspace.engine.records import Event
from mindspace.journal.importance import score_importance_heuristic
from mindspace.journal.records import SourceType
from mindspace.memory.chunking import chunk_text
from mindspace.memory.entities import SPOKEN_EVENT_VERBS, EntityBook
from mindspace.memory.records import Memory, memory_key
from mindspace.memory.semantic import MemoryDraft, SemanticMemory
from mindspace.memory.utterance import statements
from mindspace.memory.working import WorkingMemoryBook
from mindspace.state.models import Document
from mindspace.state.unit import Unit

__all__ = [
    "EXCHANGE_WINDOW",
    "MESSAGE_SOURCE",
    "PASSAGE_CHARS",
    "Formation",
    "form_memories",
    "formation_ref",
]

MESSAGE_SOURCE = "message"
"""The ``source`` of a memory formed from what a person said."""

EXCHANGE_WINDOW = timedelta(minutes=10)
"""Messages this close in time, at the same place, belong to the same exchange."""

_FORMED_KEPT = 64
"""Event ids remembered as formed: events are taken one at a time, so a retried one is
always among the last few."""

_EXCHANGE_KEPT = 3
"""Most messages quoted as what came before a memory (the last memory's and after)."""

_MAX_REF_CHARS = 128
"""The longest ``ref`` a memory stores (the column's width on every backend)."""

PASSAGE_CHARS = 700
"""Longest passage of a long message. MiniLM reads 256 word pieces (about a thousand
characters of English) and ignores the rest; a passage of 700 fits whole with room for
long words. Not fitted to any data set: a message up to this long stays one memory
(LoCoMo's turns are all shorter)."""

_QUOTED_CHARS = 300
"""How much of a neighbouring message a memory's context quotes (as journal memories)."""


class Formation(Document):
    """Which events were formed, and the last message of the current exchange."""

    name: ClassVar[str] = "formation"

    formed: tuple[str, ...] = ()
    exchange: tuple[str, ...] = ()
    """The exchange's messages (quoted) since the one of ``last_memory``, that one first."""
    last_at: str | None = None
    last_location: str | None = None
    last_memory: str | None = None
    """The exchange's last memory, which gets the messages after it as context."""


def formation_ref(event: Event) -> str:
    """The ``ref`` of the memories formed from ``event``: the host's, else the event id.

    A host's reference longer than a memory's ``ref`` may be (128 characters) is not
    used: the event id points at the same message.
    """
    ref = (event.meta.ref or "").strip()
    return ref if 0 < len(ref) <= _MAX_REF_CHARS else f"event:{event.id}"


async def form_memories(core: EngineCore, unit: Unit, events: Sequence[Event]) -> list[Memory]:
    """Store what the people in ``events`` said as memories, in ``unit``.

    Args:
        core: The assistant (settings, clock, guard, embedder, index).
        unit: The unit of work to write into; the caller commits it before any model call.
        events: Events just taken (addressed) or buffered (ambient), oldest first.

    Returns:
        The memories stored (none for events formed before, questions, filler, events
        of other types or from the assistant itself).
    """
    state = unit.doc(Formation)
    memory = SemanticMemory(unit, core.clock, core.settings, core.embedder, core.memory_index)
    stored: list[Memory] = []
    for event in events:
        if event.id in state.formed:
            continue
        state = state.model_copy(update={"formed": (*state.formed, event.id)[-_FORMED_KEPT:]})
        speaker = event.source_entity
        if not speaker or core.guard.is_own_name(speaker):
            continue
        if not event.ambient:
            # First contact creates the profile; working memory follows the conversation.
            entities = EntityBook(unit, core.clock, core.settings, core.guard)
            entities.meet(speaker)
            entities.note_message(speaker, event.content, event_type=event.type)
            WorkingMemoryBook(unit, core.clock).note_message(
                speaker, event.content, topic=event.meta.topic
            )
        if event.type not in SPOKEN_EVENT_VERBS or not event.content.strip():
            continue
        quoted = memory_key(event.content.strip(), speaker)[:_QUOTED_CHARS]
        before = _exchange(state, event)
        drafts = _drafts(core, event, speaker, "\n".join(before) or None)
        formed = await memory.astore_many(drafts) if drafts else []
        stored += formed
        last = state.last_memory if before else None
        if last is not None:
            _add_context(unit, last, quoted)
        state = state.model_copy(
            update={
                "exchange": (quoted,) if formed else (*before, quoted)[-_EXCHANGE_KEPT:],
                "last_at": event.created_at,
                "last_location": event.location,
                "last_memory": formed[-1].id if formed else last,
            }
        )
    unit.put_doc(state)
    return stored


def _drafts(core: EngineCore, event: Event, speaker: str, before: str | None) -> list[MemoryDraft]:
    """The memories of one message: its statements, cut to the memory limit."""
    kept = statements(event.content)
    if not kept:
        return []
    source_type: SourceType = "environmental" if event.ambient else "direct"
    parts = chunk_text(kept, min(PASSAGE_CHARS, core.settings.max_memory_chars))
    return [
        MemoryDraft(
            content=part,
            tags=(f"part:{n}/{len(parts)}",) if len(parts) > 1 else (),
            source_type=source_type,
            source_entity=speaker,
            importance=score_importance_heuristic(part, source_type),
            importance_method="heuristic",
            source=MESSAGE_SOURCE,
            occurred_at=event.created_at,
            ref=formation_ref(event),
            context=before,
        )
        for n, part in enumerate(parts, start=1)
    ]


def _exchange(state: Formation, event: Event) -> tuple[str, ...]:
    """The quoted messages of the exchange ``event`` continues (none: a new exchange)."""
    if state.last_at is None or state.last_location != event.location:
        return ()
    gap = parse_time(event.created_at) - parse_time(state.last_at)
    if not timedelta(0) <= gap <= EXCHANGE_WINDOW:
        return ()
    return state.exchange


def _add_context(unit: Unit, memory_id: str, quoted: str) -> None:
    """Give the previous message's memory the message after it as context too."""
    previous = unit.get(Memory, memory_id)
    if previous is None or quoted in (previous.context or ""):
        return
    context = f"{previous.context}\n{quoted}" if previous.context else quoted
    unit.put(previous.model_copy(update={"context": context}))
