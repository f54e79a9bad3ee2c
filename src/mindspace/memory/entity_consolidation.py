"""Entity consolidation: a profile's raw observations (Pf) folded into attributes (Pa).

One of the night's memory operations (spec 003 §3, dreaming step 3), beside fact mining
(:mod:`mindspace.memory.mining`) and A-MEM linking (:mod:`mindspace.memory.linking`):
it reads and writes entity profiles through :class:`~mindspace.memory.entities.EntityBook`
and asks the model, and knows nothing of the engine that schedules it
(:mod:`mindspace.engine.night.cycle`).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import RootModel, field_validator

from mindspace.clock import Clock
from mindspace.config import Settings
from mindspace.errors import LLMError
from mindspace.limits import ATTRIBUTE_KEY_CHARS, ATTRIBUTE_VALUE_CHARS
from mindspace.llm.parsing.structured import ask_structured
from mindspace.llm.port import LLM, Message
from mindspace.memory.entities import EntityBook
from mindspace.memory.prompts import ATTRIBUTES_EXAMPLE, ENTITY_CONSOLIDATION_PROMPT
from mindspace.memory.support import is_supported
from mindspace.state.unit import Unit
from mindspace.workspace.persona import PersonaGuard

__all__ = ["ATTRIBUTES_EXPECTED", "EntityAttributes", "run_entity_consolidation_batch"]


async def run_entity_consolidation_batch(
    unit: Unit,
    clock: Clock,
    settings: Settings,
    llm: LLM,
    guard: PersonaGuard,
    batch_size: int = 3,
) -> dict[str, Any]:
    """Fold entities' raw observations (Pf) into attributes (Pa) through the LLM.

    The answer is read strictly as :class:`EntityAttributes` with one repair; an entity
    whose answers stay unusable is listed in ``skipped`` with the reason, and its
    observations stay pending for a later tick.
    """
    book = EntityBook(unit, clock, settings, guard)
    updated: dict[str, dict[str, str]] = {}
    rejected: list[str] = []
    errors: list[str] = []
    skipped: dict[str, str] = {}
    repaired = 0
    for profile in book.pending_consolidation()[:batch_size]:
        observations = [o.text for o in profile.observations if not o.consolidated]
        prompt = ENTITY_CONSOLIDATION_PROMPT.format(
            entity=profile.entity_id,
            observations="\n".join(f"- {text}" for text in observations),
            attributes=json.dumps(profile.attributes, sort_keys=True),
        )
        try:
            answer = await ask_structured(
                llm,
                [Message("user", prompt)],
                EntityAttributes,
                expected=ATTRIBUTES_EXPECTED,
                # Bounded like every other request: a small model may otherwise ramble
                # until the server's own limit (or the timeout).
                max_tokens=settings.llm_max_tokens,
            )
        except LLMError as exc:
            errors.append(f"{profile.entity_id}: {exc}")
            continue
        if answer.value is None:
            # Fallback: the observations stay pending (nothing is folded on a bad answer).
            skipped[profile.entity_id] = f"no usable attributes (after one repair): {answer.reason}"
            continue
        repaired += answer.obtained == "repaired"
        # An attribute must come from the profile: its observations (or an attribute it
        # has already), never from the prompt's example (memory.support).
        said = [o.text for o in profile.observations]
        said += [f"{k} {v}" for k, v in profile.attributes.items()]
        clean = {}
        for key, value in answer.value.root.items():
            if not (guard.is_clean(value) and guard.is_clean(key)):
                rejected.append(f"{key}: {value}")
            elif ATTRIBUTES_EXAMPLE.get(key) == value:
                rejected.append(f"{key}: {value} (the prompt's example)")
            elif not is_supported(value, said, names=[profile.entity_id]):
                rejected.append(f"{key}: {value} (not in the observations)")
            else:
                clean[key] = value
        book.consolidate(profile.entity_id, clean)
        updated[profile.entity_id] = clean
    return {
        "entities": updated,
        "rejected_attributes": rejected,
        "errors": errors,
        "skipped": skipped,
        "repaired": repaired,
    }


class EntityAttributes(RootModel[dict[str, str]]):
    """The exact form of entity consolidation: one JSON object of string to string.

    Keys and values are trimmed (keys to 64 characters, values to 500); pairs with a
    blank key or value are dropped.
    """

    @field_validator("root")
    @classmethod
    def _trimmed(cls, pairs: dict[str, str]) -> dict[str, str]:
        return {
            k.strip()[:ATTRIBUTE_KEY_CHARS]: v.strip()[:ATTRIBUTE_VALUE_CHARS]
            for k, v in pairs.items()
            if k.strip() and v.strip()
        }


ATTRIBUTES_EXPECTED = "one JSON object mapping attribute names to text, e.g. " + json.dumps(
    ATTRIBUTES_EXAMPLE
)
