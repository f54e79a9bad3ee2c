"""Persona-safe prompts for extracting and consolidating knowledge (spec 003 §1)."""

from __future__ import annotations

import json

__all__ = [
    "ASSISTANT_FACT_EXTRACTION_PROMPT",
    "ATTRIBUTES_EXAMPLE",
    "ENTITY_CONSOLIDATION_PROMPT",
    "SLEEP_CONSOLIDATION_PROMPT",
]

ASSISTANT_FACT_EXTRACTION_PROMPT = """
Extract only objective facts about the world, users, and events.
Use third-person, factual language focused on WORLD STATE, not assistant behavior.

NEVER extract:
- Assistant actions ("The assistant helped", "I did X")
- Assistant personality or identity information

ALWAYS extract:
- World state facts ("The tavern is in the north wing")
- User/player information ("Player Alice prefers formal address")
"""

ATTRIBUTES_EXAMPLE: dict[str, str] = {"hobby": "restoring antique barometers"}
"""The form of an entity-consolidation answer, with a made-up value: an answer that
repeats it is refused (small models copy examples)."""

_EXAMPLE_JSON = json.dumps(ATTRIBUTES_EXAMPLE).replace("{", "{{").replace("}", "}}")

ENTITY_CONSOLIDATION_PROMPT = (
    "Consolidate these observations about {entity} into stable attributes.\n"
    + ASSISTANT_FACT_EXTRACTION_PROMPT
    + """
Observations:
{observations}

Existing attributes (JSON): {attributes}

Return one JSON object mapping short attribute names to values taken from the
observations; {{}} when they state nothing lasting. The form, with a made-up value that
is never an answer: """
    + _EXAMPLE_JSON
)

# The system prompt of the sleep_consolidate context (spec 002 §1): journal entries are
# the assistant's own notes, so facts are extracted from them, never copied.
SLEEP_CONSOLIDATION_PROMPT = (
    "You are asleep, consolidating your journal into long-term memory.\n"
    + ASSISTANT_FACT_EXTRACTION_PROMPT
    + """
Store each fact with store_memory, giving the journal entry it comes from as entry_id.
A fact that mentions you ("I", "me", "my", "the assistant") is rejected: rephrase it
about the world, the people or the events, or leave it out."""
)
