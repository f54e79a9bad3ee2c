"""What a tool accepts fits the column it is stored in, on every database.

A string argument longer than its column passes on SQLite (which ignores VARCHAR sizes)
and fails on PostgreSQL with a database error. So every limited argument is compared
with the size of the column of the same name, read from a schema built by the
migrations; and a type at the limit is stored, one over it refused, on both backends.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import String, create_engine, inspect

from mindspace import Assistant, ManualClock, Settings
from mindspace.limits import MAX_ENTITY_TYPE_CHARS
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on
from mindspace.tools import default_registry
from mindspace.tools.limits import limit_of

TIGHTER: dict[str, str] = {
    "project_key": "a project key must match PROJECT_KEY_PATTERN (at most 64 characters)",
    "goal_id": "must name an existing goal, whose id was generated (under 64 characters)",
    "parent_id": "must name an existing goal, whose id was generated (under 64 characters)",
}
"""Arguments whose column is smaller than their Limit, and the check that keeps them in."""


def _column_sizes(db: Path) -> dict[str, dict[str, int]]:
    """Column name -> {table: VARCHAR size} in a database the migrations built."""
    SqlStore(f"sqlite:///{db}").close()
    engine = create_engine(f"sqlite:///{db}")
    sizes: dict[str, dict[str, int]] = {}
    try:
        found = inspect(engine)
        for table in found.get_table_names():
            for column in found.get_columns(table):
                kind = column["type"]
                if isinstance(kind, String) and kind.length is not None:
                    sizes.setdefault(column["name"], {})[table] = kind.length
    finally:
        engine.dispose()
    return sizes


def test_every_limited_tool_argument_fits_its_column(tmp_path: Path) -> None:
    sizes = _column_sizes(tmp_path / "schema.db")
    assert sizes["entity_type"] == {"entities": MAX_ENTITY_TYPE_CHARS}
    too_long: list[str] = []
    for tool in default_registry().tools():
        for name, field in tool.args_model.model_fields.items():
            limit = limit_of(field)
            if limit is None or name not in sizes or name in TIGHTER:
                continue
            chars = limit.max_chars(None)
            for table, size in sizes[name].items():
                if chars > size:
                    too_long.append(f"{tool.name}.{name}: {chars} > {table}.{name} ({size})")
    assert too_long == []


@pytest.fixture
def on_backend(backend_url: str, tmp_path: Path) -> Iterator[Assistant]:
    store = SqlStore(backend_url)
    yield assistant_on(
        store,
        "barkeep",
        llm=OfflineLLM(announce=False),
        clock=ManualClock(),
        settings=Settings(data_dir=tmp_path),
    )
    store.close()


async def test_an_entity_type_at_the_limit_is_stored_and_one_over_is_refused(
    on_backend: Assistant,
) -> None:
    fits = "t" * MAX_ENTITY_TYPE_CHARS
    stored = await on_backend.call_tool(
        "update_entity_observation",
        {"entity_id": "Eve", "observation": "Eve came in", "entity_type": fits},
    )
    refused = await on_backend.call_tool(
        "update_entity_observation",
        {"entity_id": "Bob", "observation": "Bob came in", "entity_type": fits + "x"},
    )

    assert stored["success"], stored
    profile = on_backend.views.entity("Eve")
    assert profile is not None
    assert profile.entity_type == fits
    assert refused["success"] is False
    assert "entity_type" in refused["error"]
    assert on_backend.views.entity("Bob") is None
