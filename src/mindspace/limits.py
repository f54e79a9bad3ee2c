"""Every limit on text, in one table, with the flows of text from one store into another.

A limit is a number here or the name of a :class:`~mindspace.config.Settings` field (so
an operator can lower it). Text that one store accepted often moves into another whose
limit is smaller: a journal entry (10,000 characters) becomes memories (4,000), a chat
message (16,000) is read by the night's fact mining in lines of 600. :data:`FLOWS` names
every such move and how the larger text passes the smaller limit:

* ``chunked``: split by :func:`mindspace.memory.chunking.chunk_text` at paragraph and
  sentence ends, every piece kept (and pointing at its source);
* ``cut``: shortened with a marker, because the whole text is kept elsewhere and this
  copy is only a label or a hint (each flow says where the whole text stays).

Nothing that a tool or a host accepted is refused further down: tests/engine/
test_limit_flows.py pushes each flow's producer at its maximum through its consumer.

Example:
    >>> LIMITS["memory"].max_chars()
    4000
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from mindspace.config import Settings

__all__ = [
    "ATTRIBUTE_KEY_CHARS",
    "ATTRIBUTE_VALUE_CHARS",
    "CONTEXT_NEIGHBOUR_CHARS",
    "FLOWS",
    "LIMITS",
    "MAX_ENTITY_TYPE_CHARS",
    "MAX_EVENT_CHARS",
    "MAX_ID_CHARS",
    "MAX_JSON_DEPTH",
    "MAX_LABELS",
    "MAX_LABEL_CHARS",
    "MAX_LIST_ITEMS",
    "MAX_SHORT_TEXT_CHARS",
    "MAX_TEXT_CHARS",
    "MINING_LINE_CHARS",
    "MINING_TRANSCRIPT_CHARS",
    "FlowHandling",
    "TextFlow",
    "TextLimit",
]

MAX_JSON_DEPTH = 64
"""Deepest nesting of arrays and objects accepted in a JSON document (HTTP body, ``--args``)."""
MAX_TEXT_CHARS = 100_000
"""Ceiling for any single string; fields whose limit is a setting never exceed it."""
MAX_SHORT_TEXT_CHARS = 1_000
"""Reasons, queries, targets and other one-line text."""
MAX_ID_CHARS = 128
"""Identifiers: entity ids, goal ids, project keys, entity types (VARCHAR(128) columns)."""
MAX_ENTITY_TYPE_CHARS = 32
"""An entity's type (``player``, ``npc``...): the VARCHAR(32) column ``entities.entity_type``."""
MAX_LABEL_CHARS = 64
"""One tag or one related-project key."""
MAX_LABELS = 20
"""Most tags (or related projects) in one list."""
MAX_LIST_ITEMS = 200
"""Most items in any other list argument (facts and patterns of compact_session_memory)."""
MAX_EVENT_CHARS = 16_000
"""Longest event (a chat message, an HTTP event, a host's ``say``) accepted."""
MINING_LINE_CHARS = 600
"""Longest line of a mining transcript; a longer message is sent as several lines."""
MINING_TRANSCRIPT_CHARS = 6_000
"""Most characters of messages in one mining request; a longer batch takes more requests."""
CONTEXT_NEIGHBOUR_CHARS = 300
"""Most characters of a neighbouring journal entry kept as a memory's ``context``."""
ATTRIBUTE_KEY_CHARS = 64
"""Longest entity attribute name."""
ATTRIBUTE_VALUE_CHARS = 500
"""Longest entity attribute value."""


@dataclass(frozen=True)
class TextLimit:
    """One limit: a number, or the Settings field that holds it.

    Args:
        name: The limit's name in :data:`LIMITS`.
        chars: Characters, or the name of a Settings field whose value is the limit.
        what: The text it bounds.
    """

    name: str
    chars: int | str
    what: str

    def max_chars(self, settings: Settings | None = None) -> int:
        """The limit under ``settings`` (the defaults when None), never over MAX_TEXT_CHARS."""
        if isinstance(self.chars, int):
            return self.chars
        # Imported here, not at the top: the input boundary (validation.py) imports this
        # table, and `mindspace --help` must start without pydantic-settings.
        from mindspace.config import Settings

        value = (
            getattr(settings, self.chars)
            if settings is not None
            else Settings.model_fields[self.chars].default
        )
        return min(int(value), MAX_TEXT_CHARS)


LIMITS: Mapping[str, TextLimit] = {
    limit.name: limit
    for limit in (
        TextLimit("text", MAX_TEXT_CHARS, "any string at all"),
        TextLimit("short_text", MAX_SHORT_TEXT_CHARS, "a reason, a query, a target"),
        TextLimit("id", MAX_ID_CHARS, "an entity id, goal id or project key"),
        TextLimit("entity_type", MAX_ENTITY_TYPE_CHARS, "an entity's type"),
        TextLimit("label", MAX_LABEL_CHARS, "one tag"),
        TextLimit("event", MAX_EVENT_CHARS, "an event's content (a message from a host)"),
        TextLimit("reply", "max_reply_chars", "a reply delivered and stored"),
        TextLimit("journal_entry", "max_journal_entry_chars", "a journal entry or synthesis"),
        TextLimit("memory", "max_memory_chars", "a semantic memory's content"),
        TextLimit("observation", "max_session_memory_chars", "an entity observation"),
        TextLimit("session_memory", "max_session_memory_chars", "a session memory item"),
        TextLimit("raw_observation", "entity_raw_observation_chars", "a quoted message"),
        TextLimit("attribute_key", ATTRIBUTE_KEY_CHARS, "an entity attribute's name"),
        TextLimit("attribute_value", ATTRIBUTE_VALUE_CHARS, "an entity attribute's value"),
        TextLimit("mining_line", MINING_LINE_CHARS, "one line of a mining transcript"),
        TextLimit("mining_transcript", MINING_TRANSCRIPT_CHARS, "one mining request's lines"),
        TextLimit("memory_context", CONTEXT_NEIGHBOUR_CHARS, "a neighbour in a memory's context"),
        TextLimit("goal", "max_goal_description_chars", "a goal description"),
        TextLimit("project_summary", "max_project_summary_chars", "a project summary"),
        TextLimit("project_context", "max_project_context_chars", "a project's context"),
        TextLimit("system_prompt", "max_system_prompt_chars", "the system prompt"),
    )
}
"""Every limit on text, by name."""

FlowHandling = Literal["chunked", "cut"]
"""How a text passes a smaller limit: split into pieces, or shortened (kept whole elsewhere)."""


@dataclass(frozen=True)
class TextFlow:
    """Text stored under one limit that moves into a store under another.

    Args:
        source: The producer's limit (a :data:`LIMITS` name).
        target: The consumer's limit.
        handling: ``chunked`` or ``cut``.
        where: The code that does it, and for a cut where the whole text stays.
    """

    source: str
    target: str
    handling: FlowHandling
    where: str


FLOWS: tuple[TextFlow, ...] = (
    TextFlow(
        "journal_entry",
        "memory",
        "chunked",
        "engine.night.consolidation (the rules) and the offline model: one memory per piece, "
        "each with the entry's id",
    ),
    TextFlow("event", "mining_line", "chunked", "memory.mining: a long message is several lines"),
    TextFlow(
        "event",
        "mining_transcript",
        "chunked",
        "memory.mining: lines past one request's share go in the next request",
    ),
    TextFlow(
        "event",
        "memory",
        "chunked",
        "memory.mining: a mined fact longer than a memory (a message quoted whole) is split",
    ),
    TextFlow(
        "event",
        "raw_observation",
        "cut",
        "memory.entities.quote_message: the whole message stays in the history and is mined",
    ),
    TextFlow(
        "journal_entry",
        "memory_context",
        "cut",
        "memory.extraction.journal_draft: the neighbour is its own entry and memory",
    ),
    TextFlow(
        "observation",
        "attribute_value",
        "cut",
        "memory.entity_consolidation.EntityAttributes: the observations stay on the profile",
    ),
)
"""Every move of text from one limit into a smaller one, and how it passes."""
