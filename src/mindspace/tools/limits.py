"""Per-field limits of tool arguments, declared on the argument models.

A field is annotated with :class:`Limit` (or one of the aliases below); the
``ToolArgs`` base checks every field against its limit and every string for valid
Unicode before a tool runs (see :mod:`mindspace.validation`). A limit is a number, or
the name of a :class:`~mindspace.config.Settings` field whose value is the limit, so the
settings that bound text (``max_goal_description_chars``, ...) bound the arguments too.
Fields without a ``Limit`` are bounded by :data:`~mindspace.validation.MAX_TEXT_CHARS`.

Example:
    >>> class AddGoalArgs(ToolArgs):
    ...     description: Annotated[str, Limit("max_goal_description_chars")]
    ...     parent_id: Identifier | None = None
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, get_args, get_origin

from pydantic import GetJsonSchemaHandler
from pydantic.fields import FieldInfo
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from mindspace.config import Settings
from mindspace.limits import (
    MAX_ENTITY_TYPE_CHARS,
    MAX_ID_CHARS,
    MAX_LABEL_CHARS,
    MAX_LABELS,
    MAX_LIST_ITEMS,
    MAX_SHORT_TEXT_CHARS,
    MAX_TEXT_CHARS,
)

__all__ = [
    "EntityType",
    "Identifier",
    "Labels",
    "Limit",
    "SessionItems",
    "ShortText",
    "limit_of",
]

_SETTINGS_DEFAULTS = Settings.model_fields


@dataclass(frozen=True)
class Limit:
    """The most characters a string (or each string of a list) may have, and list items.

    Args:
        chars: A number, or the name of the Settings field holding it.
        items: For a list field, the most items it may have.
    """

    chars: int | str
    items: int | None = None

    def max_chars(self, settings: Settings | None) -> int:
        """The character limit under ``settings`` (the defaults when None)."""
        if isinstance(self.chars, int):
            return self.chars
        if settings is not None:
            value = getattr(settings, self.chars)
        else:
            value = _SETTINGS_DEFAULTS[self.chars].default
        # a setting can lower a limit, never lift it over the ceiling for any string
        return min(int(value), MAX_TEXT_CHARS)

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        target = handler.resolve_ref_schema(schema)
        chars = self.max_chars(None)
        if target.get("type") == "array":
            if self.items is not None:
                target["maxItems"] = self.items
            items = target.get("items")
            if isinstance(items, dict) and items.get("type") == "string":
                items["maxLength"] = chars
        elif target.get("type") == "string":
            target["maxLength"] = chars
        return schema


def limit_of(field: FieldInfo) -> Limit | None:
    """The :class:`Limit` of a field, also when it sits inside ``X | None``."""
    for item in field.metadata:
        if isinstance(item, Limit):
            return item
    stack: list[Any] = [field.annotation]
    while stack:
        hint = stack.pop()
        if get_origin(hint) is Annotated:
            found = next((m for m in get_args(hint)[1:] if isinstance(m, Limit)), None)
            if found is not None:
                return found
        stack.extend(get_args(hint))
    return None


Identifier = Annotated[str, Limit(MAX_ID_CHARS)]
"""An id or a name: a goal id, project key or entity id."""
EntityType = Annotated[str, Limit(MAX_ENTITY_TYPE_CHARS)]
"""An entity's type (its column holds 32 characters on every database)."""
ShortText = Annotated[str, Limit(MAX_SHORT_TEXT_CHARS)]
"""A reason, a query or a one-line summary."""
Labels = Annotated[list[str], Limit(MAX_LABEL_CHARS, items=MAX_LABELS)]
"""Tags or related project keys."""
SessionItems = Annotated[list[str], Limit("max_session_memory_chars", items=MAX_LIST_ITEMS)]
"""Facts or patterns of session memory."""
