"""Projects: pageable context slots (spec 000 §1, data flow 001 §1)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from mindspace.clock import format_time
from mindspace.errors import ConflictError, InvalidArgumentsError, InvalidStateError, NotFoundError
from mindspace.workspace.desk import Desk
from mindspace.workspace.limits import bounded_text
from mindspace.workspace.records import Project, ProjectsState

__all__ = ["PROJECT_KEY_PATTERN", "ProjectDesk", "SwapOutcome"]

PROJECT_KEY_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
_KEY = re.compile(PROJECT_KEY_PATTERN)


@dataclass(frozen=True)
class SwapOutcome:
    """Which project was paged out and which one was loaded."""

    old: Project | None
    new: Project


class ProjectDesk(Desk):
    """Project operations within one unit of work.

    Args:
        unit: Where reads and writes go.
        clock: The time source for ``created_at``/``last_active``.
        settings: Length limits.
    """

    def all(self) -> list[Project]:
        """Every project, in creation order."""
        return self.unit.all(Project)

    def active_key(self) -> str | None:
        """The key of the loaded project, if any."""
        return self.unit.doc(ProjectsState).active

    def active(self) -> Project | None:
        """The loaded project, if any."""
        key = self.active_key()
        return self.unit.get(Project, key) if key else None

    def get(self, key: str) -> Project:
        """The project ``key``.

        Raises:
            NotFoundError: with ``available_projects``.
        """
        project = self.unit.get(Project, key)
        if project is None:
            raise NotFoundError(
                f"Project {key!r} does not exist",
                "Use one of available_projects, or create_project first.",
                available_projects=[p.key for p in self.all()],
            )
        return project

    def create(self, key: str, summary: str, initial_context: str) -> Project:
        """Create a project; it becomes active when no project is loaded.

        Raises:
            InvalidArgumentsError: a malformed key, or text empty or too long.
            ConflictError: the key is taken.
        """
        if not _KEY.match(key):
            raise InvalidArgumentsError(
                f"Invalid project_key {key!r}",
                "Use 1-64 letters, digits, '_', '-' or '.', starting with a letter or digit "
                "(for example 'build_tavern').",
                field="project_key",
            )
        if self.unit.get(Project, key) is not None:
            raise ConflictError(
                f"Project {key!r} already exists",
                f"Choose another project_key, or swap_project({key!r}) to continue it.",
                existing_projects=[p.key for p in self.all()],
            )
        summary = bounded_text(summary, "summary", self.settings.max_project_summary_chars)
        context = initial_context.strip()
        if len(context) > self.settings.max_project_context_chars:
            bounded_text(context, "initial_context", self.settings.max_project_context_chars)
        now = format_time(self.clock.now())
        activate = self.active_key() is None
        project = Project(
            key=key,
            summary=summary,
            context=context,
            status="active" if activate else "paused",
            created_at=now,
            last_active=now,
        )
        self.unit.put(project)
        if activate:
            self.unit.put_doc(ProjectsState(active=key))
        return project

    def swap(self, key: str, current_project_update: str | None) -> SwapOutcome:
        """Page the active project out (saving ``current_project_update``) and ``key`` in.

        Swapping to the project that is already active follows the spec's steps too: the
        update is saved into it and it stays active (``old`` and ``new`` are both it).

        Raises:
            NotFoundError: ``key`` does not exist (with ``available_projects``).
        """
        target = self.get(key)
        old = self.active()
        now = format_time(self.clock.now())
        if old is not None and old.key == key:
            same: dict[str, object] = {"last_active": now}
            if current_project_update is not None:
                same["context"] = self._context(current_project_update, "current_project_update")
            kept = old.model_copy(update=same)
            self.unit.put(kept)
            return SwapOutcome(kept, kept)
        if old is not None:
            changes: dict[str, object] = {"status": "paused", "last_active": now}
            if current_project_update is not None:
                changes["context"] = self._context(current_project_update, "current_project_update")
            old = old.model_copy(update=changes)
            self.unit.put(old)
        new = target.model_copy(update={"status": "active", "last_active": now})
        self.unit.put(new)
        self.unit.put_doc(ProjectsState(active=key))
        return SwapOutcome(old, new)

    def update_active(
        self, context_update: str, summary: str | None, completed: bool
    ) -> tuple[Project, bool]:
        """Replace the active project's context (and summary); optionally complete it.

        Returns the project and whether it was unloaded because it completed.

        Raises:
            InvalidStateError: no project is active.
        """
        project = self.active()
        if project is None:
            raise InvalidStateError(
                "No project is active",
                "create_project to start one, or swap_project to load an existing one.",
                available_projects=[p.key for p in self.all()],
            )
        changes: dict[str, object] = {
            "context": self._context(context_update, "context_update"),
            "last_active": format_time(self.clock.now()),
        }
        if summary is not None:
            changes["summary"] = bounded_text(
                summary, "summary", self.settings.max_project_summary_chars
            )
        if completed:
            changes["status"] = "completed"
        project = project.model_copy(update=changes)
        self.unit.put(project)
        if completed:
            self.unit.put_doc(ProjectsState(active=None))
        return project, completed

    def _context(self, text: str, field: str) -> str:
        return bounded_text(text, field, self.settings.max_project_context_chars)
