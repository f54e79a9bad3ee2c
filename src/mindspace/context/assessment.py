"""Layer 3 of the execution pattern: the model's own assessment of a task (spec 002 §3).

When ``task_assessment_enabled`` is on, an event or autonomous tick first asks the model
one short question: how much room does this task need? The answer is the spec's
``llm_assessment`` shape::

    {"recommended_iterations": 2, "recommended_mode": "single_action",
     "recommend_confirm_dangerous": true}

:func:`select_execution_pattern <mindspace.context.patterns.select_execution_pattern>`
applies it restrictively: a recommendation looser than layers 1-2 changes nothing. An
answer that is not one JSON object of those keys with valid values is ignored as a whole
(the layer is skipped and the reason logged); the model's own ``context_signals`` are
never taken, since the runtime measures those itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mindspace.context.patterns import ExecutionPattern
from mindspace.errors import LLMResponseError
from mindspace.llm.parsing.structured import extract_json
from mindspace.llm.port import Message

__all__ = [
    "ASSESSED_CONTEXTS",
    "ASSESSMENT_MAX_TOKENS",
    "ASSESSMENT_PROMPT",
    "AssessmentReading",
    "LLMAssessment",
    "assessment_messages",
    "combine_assessments",
    "read_assessment",
]

ASSESSED_CONTEXTS: tuple[str, ...] = ("tick_event", "tick_autonomous")
"""The task contexts assessed; side sessions (reflection, sub-agents...) are not."""

ASSESSMENT_MAX_TOKENS = 120
"""The answer is one small JSON object."""

ASSESSMENT_PROMPT = """Before you act, assess the task below. Answer with one JSON object
and nothing else, of this shape:
{{"recommended_iterations": <1-{max_iterations}>,
 "recommended_mode": "single_action" | "plan_execute" | "react_loop",
 "recommend_confirm_dangerous": true | false}}

You have at most {max_iterations} tool rounds in mode {mode}; you can only ask for less.
- "single_action" when one reply or one tool call settles the task;
- fewer iterations for a simple task;
- recommend_confirm_dangerous true when an irreversible action is possible and the
  task is unclear."""

_MODES: tuple[str, ...] = ("single_action", "plan_execute", "react_loop")


class LLMAssessment(BaseModel):
    """The model's answer; other keys (``context_signals``...) are ignored."""

    model_config = ConfigDict(extra="ignore", strict=True)

    recommended_iterations: int | None = Field(default=None, ge=1, le=100)
    recommended_mode: Literal["single_action", "plan_execute", "react_loop"] | None = None
    recommend_confirm_dangerous: bool | None = None


@dataclass(frozen=True)
class AssessmentReading:
    """An assessment read from the model's answer, or why it was ignored."""

    assessment: dict[str, Any] | None
    problem: str | None = None


def assessment_messages(task: str, pattern: ExecutionPattern) -> list[Message]:
    """The one short request: the limits layers 1-2 allow, and the task."""
    system = ASSESSMENT_PROMPT.format(max_iterations=pattern.max_iterations, mode=pattern.mode)
    return [Message("system", system), Message("user", task or "(no task text)")]


def read_assessment(text: str) -> AssessmentReading:
    """Read the model's answer strictly; anything malformed yields no assessment."""
    try:
        value = extract_json(text)
    except LLMResponseError as exc:
        return AssessmentReading(None, str(exc))
    if not isinstance(value, dict):
        return AssessmentReading(None, f"expected a JSON object, got {type(value).__name__}")
    try:
        parsed = LLMAssessment.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the value"
        return AssessmentReading(None, f"{where}: {first['msg']}")
    found = parsed.model_dump(exclude_none=True)
    if not found:
        return AssessmentReading(
            None, "none of recommended_iterations, recommended_mode, recommend_confirm_dangerous"
        )
    return AssessmentReading(found)


def combine_assessments(
    first: Mapping[str, Any] | None, second: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """Both assessments at once, each key taking the more restrictive value."""
    if not first or not second:
        merged = dict(first or second or {})
        return merged or None
    merged = {**first, **second}
    one, two = first.get("recommended_iterations"), second.get("recommended_iterations")
    if isinstance(one, int) and isinstance(two, int):
        merged["recommended_iterations"] = min(one, two)
    modes = [m for m in (first.get("recommended_mode"), second.get("recommended_mode")) if m]
    valid = [m for m in modes if m in _MODES]
    if valid:
        merged["recommended_mode"] = min(valid, key=_MODES.index)
    if first.get("recommend_confirm_dangerous") is True:
        merged["recommend_confirm_dangerous"] = True
    signals = {**dict(first.get("context_signals") or {})}
    signals.update(dict(second.get("context_signals") or {}))
    if signals:
        merged["context_signals"] = signals
    return merged
