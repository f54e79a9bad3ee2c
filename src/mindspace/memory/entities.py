"""Entity profiles (tier 2): created on first contact; observations (Pf) and attributes (Pa)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mindspace.clock import Clock, format_time
from mindspace.config import Settings
from mindspace.errors import InvalidArgumentsError, NotFoundError
from mindspace.memory.records import EntityProfile, Observation, SourceType, relationship_state
from mindspace.state.unit import Unit
from mindspace.workspace.limits import bounded_text
from mindspace.workspace.persona import PersonaGuard

__all__ = ["MAX_OBSERVATIONS", "EntityBook"]

MAX_OBSERVATIONS = 50
"""Raw observations kept per entity; consolidation folds older ones into attributes."""


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
            "observations": observations[-MAX_OBSERVATIONS:],
            "relationship": relationship,
            "last_seen": now,
        }
        if entity_type:
            update["entity_type"] = entity_type
        profile = profile.model_copy(update=update)
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
            recent = [o.text for o in profile.observations if not o.consolidated][-5:]
            lines += [f"  observed: {text}" for text in recent]
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks)
