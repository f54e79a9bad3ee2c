"""The tool registry: lookup by name (with closest-name suggestions) and argument parsing."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from mindspace.config import Settings
from mindspace.errors import InvalidArgumentsError, UnknownToolError
from mindspace.limits import MAX_ID_CHARS, MAX_JSON_DEPTH
from mindspace.llm.port import ToolSchema
from mindspace.tools.base import Tool, ToolArgs
from mindspace.validation import json_depth_exceeds, text_problem

__all__ = ["ToolRegistry", "describe_parameters"]

AnyTool = Tool[Any]
RawArguments = Mapping[str, Any] | str | None


class ToolRegistry:
    """Tools by name.

    Args:
        tools: Tools to register at once.
    """

    def __init__(self, tools: Iterable[AnyTool] = ()) -> None:
        self._tools: dict[str, AnyTool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: AnyTool) -> None:
        """Add ``tool``; its name must be new.

        Raises:
            ValueError: another tool already has the name.
        """
        if tool.name in self._tools:
            raise ValueError(
                f"A tool named {tool.name!r} is already registered; give the new one another name."
            )
        self._tools[tool.name] = tool

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def names(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(self._tools)

    def tools(self) -> list[AnyTool]:
        """Registered tools, sorted by name."""
        return [self._tools[name] for name in self.names()]

    def get(self, name: str) -> AnyTool:
        """The tool called ``name``.

        Raises:
            UnknownToolError: with the closest names in ``closest_tools``.
        """
        tool = self._tools.get(name)
        if tool is not None:
            return tool
        closest = difflib.get_close_matches(name[:64], self.names(), n=3, cutoff=0.5)
        hint = f"Did you mean {' or '.join(repr(c) for c in closest)}?" if closest else ""
        shown = name if len(name) <= 64 else name[:64] + "..."
        raise UnknownToolError(
            f"Unknown tool {shown!r}",
            (hint + " " if hint else "") + "Call one of the available tools by its exact name.",
            closest_tools=closest,
            available_tools=self.names(),
        )

    def schemas(self, names: Iterable[str] | None = None) -> list[ToolSchema]:
        """Chat-completions schemas of the named tools (all when ``names`` is None)."""
        chosen = self.names() if names is None else [n for n in names if n in self._tools]
        return [self._tools[name].schema() for name in chosen]

    def parse_arguments(
        self, tool: AnyTool, raw: RawArguments, settings: Settings | None = None
    ) -> ToolArgs:
        """Validate raw arguments (a mapping, JSON text, or None) against the tool's model.

        Args:
            tool: The tool called.
            raw: Its arguments.
            settings: Where setting-based text limits come from (the defaults when None).

        Raises:
            InvalidArgumentsError: not JSON, nested too deep, not an object, invalid
                Unicode, text over its limit, or not matching the schema.
        """
        data: Any = {} if raw is None or raw == "" else raw
        if isinstance(data, str):
            if json_depth_exceeds(data):
                raise InvalidArgumentsError(
                    f"Arguments for {tool.name!r} nest deeper than {MAX_JSON_DEPTH} levels",
                    f"Send the arguments as one flat JSON object: {describe_parameters(tool)}.",
                )
            try:
                data = json.loads(data)
            except json.JSONDecodeError as exc:
                raise InvalidArgumentsError(
                    f"Arguments for {tool.name!r} are not valid JSON: {exc.msg} "
                    f"at position {exc.pos}",
                    f"Send the arguments as one JSON object: {describe_parameters(tool)}.",
                ) from exc
        if not isinstance(data, Mapping):
            raise InvalidArgumentsError(
                f"Arguments for {tool.name!r} must be a JSON object, not {type(data).__name__}",
                f"Send the arguments as one JSON object: {describe_parameters(tool)}.",
            )
        try:
            parsed: ToolArgs = tool.args_model.model_validate(
                dict(data), context={"settings": settings}
            )
        except ValidationError as exc:
            problems = [_problem(error) for error in exc.errors()]
            summary = "; ".join(
                f"{p['field']}: {p['problem']}" + (f" (got {p['got']})" if "got" in p else "")
                for p in problems
            )
            raise InvalidArgumentsError(
                f"Invalid arguments for {tool.name!r}: {summary}",
                f"Call {tool.name!r} again with arguments matching its schema: "
                f"{describe_parameters(tool)}.",
                invalid_fields=problems,
            ) from exc
        return parsed


def _problem(error: Mapping[str, Any]) -> dict[str, Any]:
    field = ".".join(str(part) for part in error.get("loc", ())) or "(arguments)"
    if text_problem(field, MAX_ID_CHARS) is not None:
        # an unknown key can be anything; show it escaped and short, never raw
        field = repr(field[:MAX_ID_CHARS])
    message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
    problem: dict[str, Any] = {"field": field, "problem": message}
    if error.get("type") != "missing" and "input" in error:
        shown = error["input"]
        if isinstance(shown, str) and len(shown) > 80:
            shown = shown[:77] + "..."
        try:
            got = json.dumps(shown)
        except (TypeError, ValueError, RecursionError):
            got = f"a {type(shown).__name__}"
        problem["got"] = got if len(got) <= 80 else got[:77] + "..."
    return problem


def describe_parameters(tool: AnyTool) -> str:
    """A one-line signature of a tool's parameters, for error suggestions."""
    schema = tool.args_model.model_json_schema()
    required = set(schema.get("required", []))
    parts = []
    for name, spec in schema.get("properties", {}).items():
        kind = _type_of(spec)
        parts.append(f"{name} ({kind}{', required' if name in required else ''})")
    return ", ".join(parts) if parts else "no arguments ({})"


def _type_of(spec: Mapping[str, Any]) -> str:
    if "enum" in spec:
        return "one of " + ", ".join(repr(v) for v in spec["enum"])
    if "anyOf" in spec:
        kinds = [_type_of(s) for s in spec["anyOf"] if s.get("type") != "null"]
        return " or ".join(kinds) if kinds else "null"
    kind = str(spec.get("type", "any"))
    if kind == "array":
        return f"array of {_type_of(spec.get('items', {}))}"
    low, high = spec.get("minimum"), spec.get("maximum")
    if low is not None and high is not None:
        return f"{kind} {low}-{high}"
    return kind
