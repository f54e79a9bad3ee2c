"""Entity profiles (tier 2): created on first contact; observations (Pf) and attributes (Pa).

Observations come two ways. The model notes them with ``update_entity_observation``
(through the persona guard, in the third person). And every message an entity sends in
a tick is kept verbatim, quoted and labelled (``Alice said: "..."``), so what people say
is remembered even by a model that never calls a tool. Verbatim observations are bounded
per profile (the oldest verbatim ones go first) and never displace the model's notes
while verbatim ones remain.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mindspace.clock import Clock, format_time
from mindspace.config import Settings
from mindspace.errors import InvalidArgumentsError, NotFoundError
from mindspace.journal.records import SourceType
from mindspace.memory.records import EntityProfile, Observation, relationship_state
from mindspace.state.unit import Unit
from mindspace.workspace.limits import bounded_text
from mindspace.workspace.persona import PersonaGuard

__all__ = ["MAX_OBSERVATIONS", "SPOKEN_EVENT_VERBS", "EntityBook", "quote_message"]

MAX_OBSERVATIONS = 50
"""Observations kept per entity; consolidation folds older ones into attributes."""

SPOKEN_EVENT_VERBS: dict[str, str] = {
    "message": "said",
    "say": "said",
    "tell": "said",
    "page": "said",
    "whisper": "whispered",
}
"""How a verbatim observation names an event type; other types are shown in brackets."""


def quote_message(entity_id: str, text: str, event_type: str, limit: int) -> str:
    """``Alice said: "<text>"``, the text on one line and cut to ``limit`` characters.

    The quote marks the words as the entity's own: "my sword is broken" in a quote is the
    speaker talking about themselves, never the assistant.
    """
    words = " ".join(text.split())
    if len(words) > limit:
        words = words[: limit - 1].rstrip() + "\u2026"
    verb = SPOKEN_EVENT_VERBS.get(event_type)
    label = f"{entity_id} {verb}" if verb else f"{entity_id} ({event_type})"
    return f'{label}: "{words}"'


def _bounded(observations: Sequence[Observation], verbatim_cap: int) -> tuple[Observation, ...]:
    """At most ``verbatim_cap`` verbatim observations and MAX_OBSERVATIONS in all.

    The oldest verbatim ones are dropped first; the model's own notes go only when no
    verbatim observation is left to drop.
    """
    kept = list(observations)
    verbatim = [i for i, o in enumerate(kept) if o.verbatim]
    drop = set(verbatim[: max(0, len(verbatim) - verbatim_cap)])
    kept = [o for i, o in enumerate(kept) if i not in drop]
    excess = len(kept) - MAX_OBSERVATIONS
    if excess > 0:
        verbatim = [i for i, o in enumerate(kept) if o.verbatim][:excess]
        noted = [i for i, o in enumerate(kept) if not o.verbatim][: excess - len(verbatim)]
        drop = {*verbatim, *noted}
        kept = [o for i, o in enumerate(kept) if i not in drop]
    return tuple(kept)


class EntityBook:
    """Entity profile operations within one unit of work."""

    def __init__(self, unit: Unit, clock: Clock, settings: Settings, guard: PersonaGuard) -> None:
        self.unit = unit
        self.clock = clock
        self.settings = settings
        self.guard = guard

    def all(self) -> list[EntityProfile]:
        """Every profile, by first contact."""
        return self.unit.all(EntityProfile)

    def get(self, entity_id: str) -> EntityProfile | None:
        """One profile, if the entity was ever met."""
        return self.unit.get(EntityProfile, entity_id)

    def meet(self, entity_id: str, entity_type: str = "player") -> EntityProfile:
        """Record an interaction: creates the profile on first contact, counts the rest."""
        now = format_time(self.clock.now())
        profile = self.get(entity_id) or EntityProfile(
            entity_id=entity_id, entity_type=entity_type, first_seen=now, last_seen=now
        )
        relationship = profile.relationship.model_copy(
            update={"interaction_count": profile.relationship.interaction_count + 1}
        )
        profile = profile.model_copy(update={"relationship": relationship, "last_seen": now})
        self.unit.put(profile)
        return profile

    def observe(
        self,
        entity_id: str,
        observation: str,
        *,
        source_type: SourceType = "observation",
        favorability_change: float = 0.0,
        entity_type: str | None = None,
    ) -> EntityProfile:
        """Add an observation (through the persona guard) and adjust favorability."""
        text = bounded_text(observation, "observation", self.settings.max_session_memory_chars)
        self.guard.check(text)
        if not -1.0 <= favorability_change <= 1.0:
            raise InvalidArgumentsError(
                f"favorability_change must be between -1 and 1, not {favorability_change!r}",
                "Use small steps such as 0.05 for a pleasant exchange, -0.1 for a rude one.",
            )
        now = format_time(self.clock.now())
        profile = self.get(entity_id) or EntityProfile(
            entity_id=entity_id, first_seen=now, last_seen=now
        )
        favorability = min(1.0, max(0.0, profile.relationship.favorability + favorability_change))
        relationship = profile.relationship.model_copy(
            update={
                "favorability": round(favorability, 4),
                "state": relationship_state(favorability),
            }
        )
        observations = (
            *profile.observations,
            Observation(text=text, at=now, source_type=source_type),
        )
        update: dict[str, object] = {
            "observations": _bounded(observations, self.settings.entity_raw_observations_max),
            "relationship": relationship,
            "last_seen": now,
        }
        if entity_type:
            update["entity_type"] = entity_type
        profile = profile.model_copy(update=update)
        self.unit.put(profile)
        return profile

    def note_message(
        self, entity_id: str, text: str, *, event_type: str = "message"
    ) -> EntityProfile:
        """Keep a message from ``entity_id`` verbatim on its profile (a raw observation).

        The persona guard is not applied: the quoted words are the entity's, and "my
        sword is broken" from a player is the player's self-reference. What the model
        writes about itself is still refused everywhere it writes (observe, memories,
        attributes). With ``entity_raw_observations_max`` at 0 nothing is kept.
        """
        now = format_time(self.clock.now())
        profile = self.get(entity_id) or EntityProfile(
            entity_id=entity_id, first_seen=now, last_seen=now
        )
        cap = self.settings.entity_raw_observations_max
        if cap == 0 or not text.strip():
            return profile
        quoted = quote_message(
            entity_id, text, event_type, self.settings.entity_raw_observation_chars
        )
        observation = Observation(text=quoted, at=now, source_type="direct", verbatim=True)
        profile = profile.model_copy(
            update={
                "observations": _bounded((*profile.observations, observation), cap),
                "last_seen": now,
            }
        )
        self.unit.put(profile)
        return profile

    def consolidate(self, entity_id: str, attributes: Mapping[str, str]) -> EntityProfile:
        """Fold the pending observations into attributes (Pf -> Pa).

        Raises:
            NotFoundError: no such entity.
        """
        profile = self.get(entity_id)
        if profile is None:
            raise NotFoundError(f"Entity {entity_id!r} is unknown", "Check the entity id.")
        clean = {k.strip(): v.strip() for k, v in attributes.items() if k.strip() and v.strip()}
        self.guard.check_all(clean.values())
        observations = tuple(
            o.model_copy(update={"consolidated": True}) for o in profile.observations
        )
        profile = profile.model_copy(
            update={"attributes": {**profile.attributes, **clean}, "observations": observations}
        )
        self.unit.put(profile)
        return profile

    def pending_consolidation(self) -> list[EntityProfile]:
        """Profiles with observations not yet folded into attributes."""
        return [p for p in self.all() if any(not o.consolidated for o in p.observations)]

    def render(self, entity_ids: Sequence[str]) -> str:
        """Profiles of ``entity_ids`` for the prompt's entity_context component."""
        blocks = []
        for entity_id in dict.fromkeys(entity_ids):
            profile = self.get(entity_id)
            if profile is None:
                continue
            r = profile.relationship
            lines = [
                f"{profile.entity_id} ({profile.entity_type}): {r.state}, favorability "
                f"{r.favorability:.2f}, {r.interaction_count} interactions"
            ]
            lines += [f"  {key}: {value}" for key, value in sorted(profile.attributes.items())]
            # Verbatim messages stay out of the prompt: the conversation history carries
            # them already, and their facts come back as attributes and mined memories.
            recent = [
                o.text for o in profile.observations if not o.consolidated and not o.verbatim
            ][-5:]
            lines += [f"  observed: {text}" for text in recent]
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks)
