"""Persona-safe prompts for extracting and consolidating knowledge (spec 003 §1)."""

from __future__ import annotations

__all__ = ["ASSISTANT_FACT_EXTRACTION_PROMPT", "ENTITY_CONSOLIDATION_PROMPT"]

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

ENTITY_CONSOLIDATION_PROMPT = (
    "Consolidate these observations about {entity} into stable attributes.\n"
    + ASSISTANT_FACT_EXTRACTION_PROMPT
    + """
Observations:
{observations}

Existing attributes (JSON): {attributes}

Return one JSON object mapping short attribute names to values, e.g.
{{"preferred_address": "formal", "drink": "dark ale"}}."""
)
