"""Running one tool call: lookup, validation, cache, a savepoint, and the result.

Each call runs in a child unit of the caller's unit (a savepoint): its writes reach the
caller only when the tool succeeds, so a failing tool leaves no partial write behind.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from mindspace.clock import Clock
from mindspace.errors import ToolError, ToolExecutionError
from mindspace.state.unit import Unit
from mindspace.tools.base import Tool, ToolArgs, ToolCategory, ToolContext
from mindspace.tools.registry import RawArguments, ToolRegistry

__all__ = ["ToolOutcome", "ToolResultCache", "ToolRunner"]

AnyTool = Tool[Any]


@dataclass(frozen=True)
class ToolOutcome:
    """One finished tool call."""

    name: str
    result: dict[str, Any]
    category: ToolCategory | None = None
    cached: bool = False
    error: ToolError | None = None
    """The error the tool raised, when it failed with one (a host maps it to a status)."""

    @property
    def error_type(self) -> str | None:
        """The failing error's class name, if any."""
        return type(self.error).__name__ if self.error is not None else None

    @property
    def http_status(self) -> int:
        """200 on success, else the error's ``http_status`` (400 for a plain failure)."""
        if self.ok:
            return 200
        return self.error.http_status if self.error is not None else 400

    @property
    def ok(self) -> bool:
        """Whether the tool reported success."""
        return self.result.get("success") is True


@dataclass
class _Entry:
    result: dict[str, Any]
    expires: datetime
    versions: dict[str, tuple[int, int]]


class ToolResultCache:
    """Results of cacheable tools, valid until their TTL passes or what they read changes.

    Args:
        clock: The time source for TTLs.
        default_ttl: Seconds, for tools that do not set ``cache_ttl``.
    """

    def __init__(self, clock: Clock, default_ttl: float) -> None:
        self.clock = clock
        self.default_ttl = default_ttl
        self._entries: dict[tuple[str, str], _Entry] = {}

    def get(self, tool: AnyTool, key: str, unit: Unit) -> dict[str, Any] | None:
        """A still-valid cached result, or None."""
        entry = self._entries.get((tool.name, key))
        if entry is None:
            return None
        stale = (
            self.clock.now() >= entry.expires
            or any(unit.cache.version(t) != v for t, v in entry.versions.items())
            or bool(tool.reads & unit.touched_topics())
        )
        if stale:
            if not (tool.reads & unit.touched_topics()):
                del self._entries[(tool.name, key)]
            return None
        return copy.deepcopy(entry.result)

    def put(self, tool: AnyTool, key: str, unit: Unit, result: dict[str, Any]) -> None:
        """Remember ``result`` unless it reflects writes that are not committed yet."""
        if tool.reads & unit.touched_topics():
            return
        ttl = tool.cache_ttl if tool.cache_ttl is not None else self.default_ttl
        self._entries[(tool.name, key)] = _Entry(
            copy.deepcopy(result),
            self.clock.now() + timedelta(seconds=ttl),
            {topic: unit.cache.version(topic) for topic in tool.reads},
        )

    def clear(self) -> None:
        """Forget every cached result."""
        self._entries.clear()


class ToolRunner:
    """Runs tool calls against a registry, with caching.

    Args:
        registry: The tools that exist.
        cache: Where cacheable results are kept.
    """

    def __init__(self, registry: ToolRegistry, cache: ToolResultCache) -> None:
        self.registry = registry
        self.cache = cache

    async def run(
        self,
        unit: Unit,
        name: str,
        raw_args: RawArguments,
        context_for: Callable[[Unit], ToolContext],
        before_merge: Callable[[Unit], None] | None = None,
    ) -> ToolOutcome:
        """Run ``name`` with ``raw_args``; writes land in ``unit`` only on success.

        ``before_merge`` sees the savepoint of a successful call (its own changes are
        exactly what the tool wrote) and may add writes to it (the edit history).

        Raises:
            ToolExecutionError: the tool crashed (a bug); nothing it wrote is kept.
        """
        try:
            tool = self.registry.get(name)
        except ToolError as exc:
            return ToolOutcome(name, exc.to_result(), None, error=exc)
        try:
            args = self.registry.parse_arguments(tool, raw_args, context_for(unit).settings)
        except ToolError as exc:
            return ToolOutcome(name, exc.to_result(), tool.category, error=exc)

        key = _cache_key(args) if tool.cacheable else ""
        if tool.cacheable:
            hit = self.cache.get(tool, key, unit)
            if hit is not None:
                return ToolOutcome(name, hit, tool.category, cached=True)

        savepoint = unit.child()
        try:
            result = await tool.execute(context_for(savepoint), args)
        except ToolError as exc:
            return ToolOutcome(name, exc.to_result(), tool.category, error=exc)
        except Exception as exc:
            raise ToolExecutionError(
                f"Tool {name!r} failed unexpectedly: {exc!r}. This is a bug in the tool; "
                "nothing it wrote was kept."
            ) from exc
        if not isinstance(result.get("success"), bool):
            raise ToolExecutionError(
                f"Tool {name!r} returned a result without a boolean 'success' field"
            )
        outcome = ToolOutcome(name, result, tool.category)
        if outcome.ok:
            if before_merge is not None:
                before_merge(savepoint)
            savepoint.merge()
            if tool.cacheable:
                self.cache.put(tool, key, unit, result)
        return outcome


def _cache_key(args: ToolArgs) -> str:
    return json.dumps(args.model_dump(mode="json"), sort_keys=True)
