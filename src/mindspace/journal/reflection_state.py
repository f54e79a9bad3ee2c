"""The reflection state (spec 004 §3, spec 003 §8): accumulate, trigger, reset."""

from __future__ import annotations

from collections.abc import Collection

from mindspace.clock import Clock, format_time
from mindspace.journal.records import JournalMeta, ReflectionState
from mindspace.state.unit import Unit

__all__ = [
    "check_reflection_trigger",
    "forget_reflection_entries",
    "reset_reflection_state",
    "set_reflection_threshold",
    "update_reflection_state",
]


def update_reflection_state(unit: Unit, importance: float, entry_id: int) -> ReflectionState:
    """Add an entry's importance to the running total and its id to the window."""
    state = unit.doc(ReflectionState)
    state = state.model_copy(
        update={
            "cumulative_importance": state.cumulative_importance + importance,
            "entries_since_reflection": (*state.entries_since_reflection, entry_id),
        }
    )
    unit.put_doc(state)
    return state


def check_reflection_trigger(unit: Unit) -> bool:
    """Whether the cumulative importance has reached the threshold (150 by default)."""
    state = unit.doc(ReflectionState)
    return state.cumulative_importance >= state.threshold


def reset_reflection_state(unit: Unit, clock: Clock) -> ReflectionState:
    """Start a new window after a reflection: total 0, threshold kept, one more reflection."""
    state = unit.doc(ReflectionState)
    now = format_time(clock.now())
    reset = ReflectionState(
        cumulative_importance=0.0,
        threshold=state.threshold,
        last_reflection_time=now,
        reflection_count=state.reflection_count + 1,
        entries_since_reflection=(),
    )
    unit.put_doc(reset)
    unit.put_doc(unit.doc(JournalMeta).model_copy(update={"last_reflection": now}))
    return reset


def set_reflection_threshold(unit: Unit, threshold: float) -> ReflectionState:
    """Change the threshold (kept across resets).

    Raises:
        ValueError: the threshold is not positive.
    """
    if not threshold > 0:
        raise ValueError(f"The reflection threshold must be > 0, got {threshold!r}")
    state = unit.doc(ReflectionState).model_copy(update={"threshold": float(threshold)})
    unit.put_doc(state)
    return state


def forget_reflection_entries(unit: Unit, entry_ids: Collection[int]) -> None:
    """Drop deleted entries from the reflection window (their importance stays counted)."""
    if not entry_ids:
        return
    state = unit.doc(ReflectionState)
    kept = tuple(i for i in state.entries_since_reflection if i not in entry_ids)
    if kept != state.entries_since_reflection:
        unit.put_doc(state.model_copy(update={"entries_since_reflection": kept}))
