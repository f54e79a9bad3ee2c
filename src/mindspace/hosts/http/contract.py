"""The API contract: one error shape, documented error statuses, operation ids, paging.

Every route of the API, those of later modules too, gets the same treatment when the
OpenAPI schema is built (:func:`install_contract`), so nothing depends on a route
remembering to declare it:

- its operation id is its explicit ``operation_id`` or else its function's name
  (:func:`operation_id`), never FastAPI's generated ``name_path_method`` string;
- every error status it can answer (:func:`error_statuses`) is documented with the one
  error model, :class:`ErrorBody` - 422 too, in place of FastAPI's ``{"detail": ...}``;
- list routes take ``offset`` and ``limit`` and answer ``total``, ``offset`` and ``limit``
  (:class:`Page`, :func:`page_of`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal, TypeVar

from fastapi import FastAPI, Query
from fastapi.routing import APIRoute
from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ERROR_DESCRIPTIONS",
    "WRITE_METHODS",
    "ErrorBody",
    "Limit",
    "Offset",
    "Page",
    "Problem",
    "apply_contract",
    "error_statuses",
    "install_contract",
    "operation_id",
    "page_of",
]

T = TypeVar("T")

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
"""Methods that change state, and so can conflict with it (409)."""

ERROR_DESCRIPTIONS: dict[int, str] = {
    401: "No bearer token, or one the server does not know (with WWW-Authenticate: Bearer).",
    403: "The token may not use this assistant (whether or not it exists).",
    404: "No such assistant, record or path.",
    409: "Conflict with the current state (it exists already, or changed meanwhile).",
    413: "The request body is over MINDSPACE_API_MAX_BODY_BYTES.",
    422: "Invalid request: each field's problem is listed in 'problems'.",
    500: "A server-side failure; the details are in the server log only.",
}


class Problem(BaseModel):
    """What is wrong with one field of a request."""

    field: str = Field(description="The field, dotted for nested ones ('metadata.priority').")
    message: str = Field(description="What is wrong with it.")
    type: str = Field(default="", description="A machine-readable kind ('missing', ...).")
    got: str | None = Field(default=None, description="The value sent, shortened.")


class ErrorBody(BaseModel):
    """The one error shape of the API (also a failed tool's result)."""

    model_config = ConfigDict(extra="allow")

    success: Literal[False] = Field(description="Always false.")
    error: str = Field(description="What went wrong, quoting the offending values.")
    suggestion: str | None = Field(default=None, description="What to do next.")
    problems: list[Problem] | None = Field(
        default=None, description="For 422: each invalid field and its problem."
    )


class Page(BaseModel):
    """The paging fields of every list response."""

    model_config = ConfigDict(extra="allow")

    success: Literal[True] = True
    total: int = Field(description="How many items there are in all (before paging).")
    offset: int = Field(description="How many were skipped.")
    limit: int = Field(description="The most this page holds.")


Offset = Annotated[int, Query(ge=0, le=1_000_000, description="Items to skip.")]
Limit = Annotated[int, Query(ge=1, le=1000, description="Most items returned.")]


def page_of(items: Sequence[T], offset: int, limit: int) -> tuple[list[T], dict[str, int]]:
    """The page ``items[offset:offset+limit]`` and its ``total``/``offset``/``limit`` fields."""
    return list(items[offset : offset + limit]), {
        "total": len(items),
        "offset": offset,
        "limit": limit,
    }


def operation_id(route: APIRoute) -> str:
    """A route's operation id when it sets none: its function's name (``list_memories``)."""
    return route.name


def error_statuses(method: str, operation: dict[str, Any]) -> set[int]:
    """The error statuses an operation of the schema documents.

    Every operation: 404, 413 (the body limit runs before any route), 422 (malformed
    parameters, or JSON nested too deep) and 500. With a bearer-token check (its
    ``security``): 401 and 403. Methods that change state: 409.
    """
    statuses = {404, 413, 422, 500}
    if operation.get("security"):
        statuses |= {401, 403}
    if method.upper() in WRITE_METHODS:
        statuses.add(409)
    return statuses


_ERROR_REF = {"$ref": "#/components/schemas/ErrorBody"}
_FASTAPI_422 = ("HTTPValidationError", "ValidationError")


def apply_contract(schema: dict[str, Any]) -> dict[str, Any]:
    """Document the one error shape on every operation of ``schema`` (in place)."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    error_schema = ErrorBody.model_json_schema(ref_template="#/components/schemas/{model}")
    components.update(error_schema.pop("$defs", {}))
    components["ErrorBody"] = error_schema
    for name in _FASTAPI_422:
        components.pop(name, None)
    for path_item in schema.get("paths", {}).values():
        for method, operation in path_item.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            responses: dict[str, Any] = operation["responses"]
            declared = {int(s) for s in responses if s.isdigit() and int(s) >= 400}
            for status in sorted(error_statuses(method, operation) | declared):
                entry = responses.setdefault(str(status), {})
                if status == 422 or "description" not in entry:
                    entry["description"] = ERROR_DESCRIPTIONS.get(status, "An error.")
                entry["content"] = {"application/json": {"schema": dict(_ERROR_REF)}}
            operation["responses"] = dict(sorted(responses.items()))
    return schema


def install_contract(app: FastAPI) -> None:
    """Serve ``app``'s schema with the contract applied to every operation it has."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        schema = build()
        if "ErrorBody" not in schema.get("components", {}).get("schemas", {}):
            apply_contract(schema)
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
