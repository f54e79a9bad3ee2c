"""Project tools: create_project, list_projects, swap_project, update_project."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from mindspace.tools.base import NoArgs, Tool, ToolArgs, ToolCategory, ToolContext
from mindspace.tools.limits import Identifier, Limit, ShortText
from mindspace.workspace.records import Project

__all__ = ["CreateProject", "ListProjects", "SwapProject", "UpdateProject"]

Summary = Annotated[str, Limit("max_project_summary_chars")]
Context = Annotated[str, Limit("max_project_context_chars")]


def _summary(project: Project) -> dict[str, Any]:
    return {
        "key": project.key,
        "summary": project.summary,
        "status": project.status,
        "created_at": project.created_at,
        "last_active": project.last_active,
    }


class CreateProjectArgs(ToolArgs):
    project_key: Identifier = Field(description="Short unique key, e.g. 'build_tavern'.")
    summary: Summary = Field(description="One line saying what the project is.")
    initial_context: Context = Field(default="", description="What is known so far.")


class CreateProject(Tool[CreateProjectArgs]):
    name = "create_project"
    description = (
        "Create a project slot for long-running work, with a summary and initial context. "
        "It becomes the active project when none is active."
    )
    category = ToolCategory.SAFE_CHAIN

    async def execute(self, ctx: ToolContext, args: CreateProjectArgs) -> dict[str, Any]:
        project = ctx.projects.create(args.project_key, args.summary, args.initial_context)
        return {
            "success": True,
            "project_key": project.key,
            "status": project.status,
            "active": project.status == "active",
            "message": f"Project {project.key!r} created"
            + (" and loaded" if project.status == "active" else " (paused)"),
        }


class ListProjects(Tool[NoArgs]):
    name = "list_projects"
    description = "List all projects with their summaries and status, and which one is active."
    category = ToolCategory.SAFE_CHAIN
    cacheable = True
    reads = frozenset({"project", "doc:projects"})

    async def execute(self, ctx: ToolContext, args: NoArgs) -> dict[str, Any]:
        desk = ctx.projects
        projects = desk.all()
        return {
            "success": True,
            "active": desk.active_key(),
            "count": len(projects),
            "projects": [_summary(p) for p in projects],
        }


class SwapProjectArgs(ToolArgs):
    project_key: Identifier = Field(description="The project to load.")
    current_project_update: Context | None = Field(
        default=None, description="Progress to save into the project being paged out."
    )
    reasoning: ShortText | None = Field(default=None, description="Why you are switching.")


class SwapProject(Tool[SwapProjectArgs]):
    name = "swap_project"
    description = (
        "Switch to another project: the active one is paused with current_project_update "
        "saved as its context, and the target's context is restored."
    )
    category = ToolCategory.SAFE_CHAIN

    async def execute(self, ctx: ToolContext, args: SwapProjectArgs) -> dict[str, Any]:
        outcome = ctx.projects.swap(args.project_key, args.current_project_update)
        return {
            "success": True,
            "old_project": outcome.old.key if outcome.old else None,
            "new_project": outcome.new.key,
            "new_project_summary": outcome.new.summary,
            "new_project_context": outcome.new.context,
        }


class UpdateProjectArgs(ToolArgs):
    context_update: Context = Field(description="The active project's new context (replaces it).")
    summary: Summary | None = Field(default=None, description="A new summary, if it changed.")
    completed: bool = Field(default=False, description="Mark the project completed and unload it.")


class UpdateProject(Tool[UpdateProjectArgs]):
    name = "update_project"
    description = "Save the active project's context without swapping (optionally complete it)."
    category = ToolCategory.SAFE_CHAIN

    async def execute(self, ctx: ToolContext, args: UpdateProjectArgs) -> dict[str, Any]:
        project, unloaded = ctx.projects.update_active(
            args.context_update, args.summary, args.completed
        )
        return {
            "success": True,
            "project_key": project.key,
            "status": project.status,
            "context": project.context,
            "message": "Project completed; no project is active now"
            if unloaded
            else "Project context saved",
        }
