"""The goal tree: ids, progress rollup to every ancestor, auto-completion, decomposition.

Invariants kept after every operation (and checked by a property test):

* a goal with subtasks has ``progress`` = mean of its subtasks' progress (two decimals,
  clamped to 0-100), and
* it is ``completed`` exactly when every one of its subtasks is. An abandoned subtask is
  not completed, as in the spec, so a parent with one stays open until it is resolved.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import RootModel, field_validator

from mindspace.clock import format_time
from mindspace.errors import (
    InvalidArgumentsError,
    InvalidStateError,
    LLMError,
    NotFoundError,
    ToolFailedError,
)
from mindspace.llm.parsing.structured import ask_structured, parse_structured, repair_structured
from mindspace.llm.port import LLM, Message
from mindspace.workspace.desk import Desk
from mindspace.workspace.limits import bounded_text
from mindspace.workspace.records import Counters, Goal, GoalPriority, GoalStatus
from mindspace.workspace.session_memory import record_completed_tasks

__all__ = [
    "DECOMPOSE_EXPECTED",
    "DECOMPOSE_PROMPT",
    "MAX_SUBTASKS",
    "MIN_SUBTASKS",
    "Decomposition",
    "FirstAnswer",
    "GoalBook",
    "GoalUpdate",
    "Subtasks",
    "parse_subtasks",
]

FirstAnswer = Callable[[str], Awaitable[tuple[Sequence[Message], str]]]
"""Asks the decomposition prompt somewhere else (the ``goal_decompose`` context); returns
the messages it sent and the model's answer."""

MIN_SUBTASKS = 3
MAX_SUBTASKS = 7

DECOMPOSE_SYSTEM = "You plan work. You answer with one JSON array of strings and nothing else."
DECOMPOSE_PROMPT = """Break down this goal into 3-7 actionable subtasks:
Goal: {description}
Return JSON array of subtask descriptions."""
DECOMPOSE_EXPECTED = (
    'a JSON array of 3 to 7 distinct subtask description strings, e.g. ["Draw the plan", '
    '"Buy the timber", "Raise the walls"]'
)


@dataclass
class GoalUpdate:
    """What an update changed: the goal, the ancestors rolled up, and completions."""

    goal: Goal
    ancestors: list[Goal] = field(default_factory=list)
    newly_completed: list[Goal] = field(default_factory=list)


@dataclass(frozen=True)
class Decomposition:
    """The subtasks a decomposition added, and whether the model's answer needed a repair."""

    subtasks: list[Goal]
    obtained: Literal["parsed", "repaired"]


class GoalBook(Desk):
    """Goal operations within one unit of work.

    Args:
        unit: Where reads and writes go.
        clock: The time source for ``created``/``updated``.
        settings: Limits on descriptions and completed tasks.
    """

    # -- reads -------------------------------------------------------------------------
    def all(self) -> list[Goal]:
        """Every goal, in creation order."""
        return self.unit.all(Goal)

    def active(self) -> list[Goal]:
        """Goals still active."""
        return [g for g in self.all() if g.status == "active"]

    def get(self, goal_id: str) -> Goal:
        """The goal ``goal_id``.

        Raises:
            NotFoundError: with the ids of active goals to choose from.
        """
        goal = self.unit.get(Goal, goal_id)
        if goal is None:
            known = [g.id for g in self.active()][:20]
            raise NotFoundError(
                f"Goal {goal_id!r} does not exist",
                "Use one of the active goal ids, or add_goal to create it.",
                goal_id=goal_id,
                active_goal_ids=known,
            )
        return goal

    def tree(self) -> Iterator[tuple[Goal, int]]:
        """Goals depth-first from each root, with their depth."""
        goals = {g.id: g for g in self.all()}

        def walk(goal: Goal, depth: int) -> Iterator[tuple[Goal, int]]:
            yield goal, depth
            for child_id in goal.subtask_ids:
                child = goals.get(child_id)
                if child is not None:
                    yield from walk(child, depth + 1)

        for goal in goals.values():
            if goal.parent_id is None or goal.parent_id not in goals:
                yield from walk(goal, 0)

    # -- writes ------------------------------------------------------------------------
    def add(
        self,
        description: str,
        priority: GoalPriority = "medium",
        *,
        parent_id: str | None = None,
        auto_generated: bool = False,
    ) -> Goal:
        """Add a goal (a subtask when ``parent_id`` is given) and roll up its ancestors."""
        text = bounded_text(description, "description", self.settings.max_goal_description_chars)
        parent = self.get(parent_id) if parent_id is not None else None
        now = format_time(self.clock.now())
        goal = Goal(
            id=self._next_id(),
            description=text,
            priority=priority,
            created=now,
            updated=now,
            parent_id=parent_id,
            auto_generated=auto_generated,
        )
        self.unit.put(goal)
        if parent is not None:
            self.unit.put(
                parent.model_copy(
                    update={"subtask_ids": (*parent.subtask_ids, goal.id), "updated": now}
                )
            )
            self._rollup(parent.id)
        return goal

    def update(
        self,
        goal_id: str,
        *,
        status: GoalStatus | None = None,
        progress: float | None = None,
    ) -> GoalUpdate:
        """Change a goal's status and/or progress, then roll up every ancestor.

        Raises:
            InvalidArgumentsError: nothing to change, or completed with progress below 100.
            InvalidStateError: the change would break the tree's invariants.
        """
        if status is None and progress is None:
            raise InvalidArgumentsError(
                "update_goal needs 'status' or 'progress'",
                "Pass status ('active', 'completed', 'abandoned') and/or progress (0-100).",
            )
        goal = self.get(goal_id)
        before = {g.id: g.status for g in self.all()}
        if goal.subtask_ids:
            self._check_parent_update(goal, status, progress)
        if status == "completed":
            if progress is not None and progress != 100:
                raise InvalidArgumentsError(
                    f"A completed goal has progress 100, not {progress!r}",
                    "Omit progress when completing a goal, or pass 100.",
                )
            progress = 100.0
        changes: dict[str, object] = {"updated": format_time(self.clock.now())}
        if status is not None:
            changes["status"] = status
        if progress is not None and not goal.subtask_ids:
            changes["progress"] = _clamp(progress)
        updated = goal.model_copy(update=changes)
        self.unit.put(updated)
        ancestors = self._rollup(goal.parent_id)
        newly = [
            g for g in (updated, *ancestors) if g.status == "completed" and before[g.id] != g.status
        ]
        record_completed_tasks(self.unit, newly, self.clock, self.settings.max_completed_tasks)
        return GoalUpdate(updated, ancestors, newly)

    async def decompose(
        self, goal_id: str, llm: LLM, first: FirstAnswer | None = None
    ) -> Decomposition:
        """Ask the LLM for 3-7 subtasks of ``goal_id`` and add them under it.

        With ``first``, the question is asked through it (the engine runs it in the
        ``goal_decompose`` context); ``llm`` then only makes the one repair request.

        Raises:
            InvalidStateError: the goal is not active, or already has subtasks.
            ToolFailedError: the LLM failed, or neither its answer nor the one repair was a
                JSON array of 3-7 distinct subtasks (nothing is added then).
        """
        goal = self.get(goal_id)
        if goal.status != "active":
            raise InvalidStateError(
                f"Goal {goal_id!r} is {goal.status}; only active goals can be decomposed",
                "Decompose an active goal, or add_goal for new work.",
                goal_id=goal_id,
                status=goal.status,
            )
        if goal.subtask_ids:
            raise InvalidStateError(
                f"Goal {goal_id!r} already has {len(goal.subtask_ids)} subtasks",
                "Decompose one of its subtasks instead, or add_goal with parent_id to add one.",
                goal_id=goal_id,
                subtask_ids=list(goal.subtask_ids),
            )
        prompt = DECOMPOSE_PROMPT.format(description=goal.description)
        try:
            if first is None:
                answer = await ask_structured(
                    llm,
                    [Message("system", DECOMPOSE_SYSTEM), Message("user", prompt)],
                    Subtasks,
                    expected=DECOMPOSE_EXPECTED,
                )
            else:
                sent, text = await first(prompt)
                answer = await repair_structured(
                    llm, sent, text, Subtasks, expected=DECOMPOSE_EXPECTED
                )
        except LLMError as exc:
            raise ToolFailedError(
                f"The language model could not decompose goal {goal_id!r}: {exc}",
                "Try again later, or add the subtasks yourself with add_goal(parent_id=...).",
            ) from exc
        if answer.value is None:
            raise ToolFailedError(
                f"The language model gave no usable subtasks for goal {goal_id!r} "
                f"(after one repair): {answer.reason}",
                "Call decompose_goal again, or add the subtasks with add_goal(parent_id=...).",
                goal_id=goal_id,
                structured="fallback",
                llm_replies=[r[:500] for r in answer.replies],
            )
        limit = self.settings.max_goal_description_chars
        added = [
            self.add(text[:limit], goal.priority, parent_id=goal_id, auto_generated=True)
            for text in answer.value.root
        ]
        return Decomposition(added, "repaired" if answer.obtained == "repaired" else "parsed")

    # -- internals ---------------------------------------------------------------------
    def _next_id(self) -> str:
        tick = self.unit.doc(Counters).tick_count
        index = len(self.all())
        while self.unit.get(Goal, f"goal_{tick}_{index}") is not None:
            index += 1
        return f"goal_{tick}_{index}"

    def _check_parent_update(
        self, goal: Goal, status: GoalStatus | None, progress: float | None
    ) -> None:
        if progress is not None:
            raise InvalidStateError(
                f"Goal {goal.id!r} has subtasks, so its progress is their average",
                "Update the subtasks' progress instead: " + ", ".join(goal.subtask_ids),
                goal_id=goal.id,
                subtask_ids=list(goal.subtask_ids),
            )
        subtasks = [self.get(i) for i in goal.subtask_ids]
        open_ids = [s.id for s in subtasks if s.status != "completed"]
        if status == "completed" and open_ids:
            raise InvalidStateError(
                f"Goal {goal.id!r} cannot be completed while subtasks {open_ids!r} are not",
                "Complete those subtasks first; the goal completes itself when they are done.",
                goal_id=goal.id,
                incomplete_subtask_ids=open_ids,
            )
        if status in ("active", "abandoned") and not open_ids:
            raise InvalidStateError(
                f"Every subtask of goal {goal.id!r} is completed, so the goal is completed",
                "Reopen a subtask with update_goal(status='active') to reopen this goal.",
                goal_id=goal.id,
            )

    def _rollup(self, parent_id: str | None) -> list[Goal]:
        changed: list[Goal] = []
        now = format_time(self.clock.now())
        while parent_id is not None:
            parent = self.unit.get(Goal, parent_id)
            if parent is None:
                break
            subtasks = [s for s in (self.unit.get(Goal, i) for i in parent.subtask_ids) if s]
            if subtasks:
                mean = sum(s.progress for s in subtasks) / len(subtasks)
                all_done = all(s.status == "completed" for s in subtasks)
                status: GoalStatus = parent.status
                if all_done:
                    status = "completed"
                elif parent.status == "completed":
                    status = "active"
                parent = parent.model_copy(
                    update={"progress": _clamp(round(mean, 2)), "status": status, "updated": now}
                )
                self.unit.put(parent)
                changed.append(parent)
            parent_id = parent.parent_id
        return changed


def _clamp(progress: float) -> float:
    return min(100.0, max(0.0, float(progress)))


class Subtasks(RootModel[list[str]]):
    """The exact form of a decomposition: a JSON array of 3-7 distinct, non-blank strings.

    Whitespace inside each item is collapsed; blank or repeated items (case-insensitive)
    are refused rather than dropped, so the repair request can say which.
    """

    @field_validator("root")
    @classmethod
    def _distinct_subtasks(cls, items: list[str]) -> list[str]:
        clean = [" ".join(item.split()) for item in items]
        if any(not item for item in clean):
            raise ValueError("every subtask must be a non-blank description")
        if len({item.casefold() for item in clean}) != len(clean):
            raise ValueError("the subtasks must all be different")
        if not MIN_SUBTASKS <= len(clean) <= MAX_SUBTASKS:
            raise ValueError(f"give {MIN_SUBTASKS} to {MAX_SUBTASKS} subtasks, not {len(clean)}")
        return clean


def parse_subtasks(text: str) -> list[str]:
    """Subtask descriptions from an LLM reply, read strictly as :class:`Subtasks`.

    Raises:
        LLMResponseError: the reply is not a JSON array of 3-7 distinct strings.
    """
    return parse_structured(text, Subtasks).root
