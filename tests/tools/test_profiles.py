"""The compact tool profile: few short definitions, the rest one ``more_tools`` away."""

from __future__ import annotations

import json
from collections.abc import Callable

from rich.console import Console

from mindspace import Assistant, ScriptedLLM
from mindspace.config import Settings
from mindspace.hosts.cli.render import status_view
from mindspace.tokens import estimate_tokens
from mindspace.tools import default_registry
from mindspace.tools.profiles import COMPACT_CORE, MORE_TOOLS, listed_schemas


def test_the_compact_definitions_fit_in_1500_tokens_and_the_full_ones_do_not() -> None:
    tools = default_registry().tools()
    full, _ = listed_schemas(tools, "full")
    compact, more = listed_schemas(tools, "compact")
    assert estimate_tokens(json.dumps(full)) > 4_000
    assert estimate_tokens(json.dumps(compact)) <= 1_500
    assert more
    assert [s["function"]["name"] for s in compact] == [*sorted(COMPACT_CORE), MORE_TOOLS]
    # Short: one line each, no parameter descriptions or titles.
    assert all(len(s["function"]["description"]) <= 100 for s in compact)
    assert "title" not in json.dumps(compact)


async def test_a_small_model_reaches_a_tool_it_was_not_listed_through_more_tools(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, settings: Settings
) -> None:
    assistant = make_assistant(
        llm=scripted, settings=settings.model_copy(update={"tool_profile": "compact"})
    )
    scripted.enqueue(tool_calls=[{"name": MORE_TOOLS, "arguments": {}}])
    scripted.enqueue(
        tool_calls=[
            {
                "name": "create_project",
                "arguments": {"project_key": "cellar", "summary": "Restock the cellar"},
            }
        ]
    )
    scripted.enqueue("The cellar project is open.")
    assistant.enqueue_event("Please start a project to restock the cellar.", source_entity="Bob")
    result = await assistant.tick()

    assert result.reply == "The cellar project is open."
    assert result.tool_calls == [(MORE_TOOLS, True), ("create_project", True)]
    listed = [t["function"]["name"] for t in scripted.history[0].tools]
    assert "create_project" not in listed
    assert MORE_TOOLS in listed
    answer = json.loads(next(m for m in scripted.history[1].messages if m.role == "tool").content)
    offered = {t["name"]: t for t in answer["tools"]}
    assert "create_project" in offered
    assert offered["create_project"]["parameters"]["project_key"] == "string"
    assert not set(offered) & set(COMPACT_CORE)
    assert [p.key for p in assistant.views.projects().all()] == ["cellar"]


def test_the_status_names_the_threshold_it_means() -> None:
    status = {
        "token_usage": {"estimated_used": 6800, "model_limit": 10000, "usage_percentage": 68.0},
        "token_advisory": {"level": "warning", "message": "Context filling", "threshold": 80},
    }
    console = Console(width=200, record=True)
    console.print(status_view(status, assistant="barkeep", model="m", database="db"))
    text = console.export_text()
    assert "WARNING - Context filling (critical above 80%)" in text
    assert "threshold 80%" not in text
