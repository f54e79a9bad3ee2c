"""Errors as JSON in mindspace's error shape, and the request size limit.

Every error the API returns - a refused token, a missing assistant, a malformed body,
a body that is too large, a crash - has the shape of a failed tool result::

    {"success": false, "error": "...", "suggestion": "..."}

with extra fields where they help (``problems`` for invalid requests - request
validation and a tool's invalid arguments alike - and ``pending`` for an unknown
approval). A mindspace error's status is its class's ``http_status``, so a
subclass a host or a tool defines answers with its parent's status.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mindspace.errors import (
    AlreadyExistsError,
    ConcurrencyError,
    ConfigError,
    LLMError,
    MindspaceError,
    RecordNotFoundError,
    ToolError,
)
from mindspace.hosts.http.responses import SafeJSONResponse
from mindspace.limits import MAX_JSON_DEPTH
from mindspace.validation import json_depth_exceeds

__all__ = [
    "ApiError",
    "BodyLimitMiddleware",
    "body_problem",
    "error_body",
    "error_response_body",
    "found",
    "http_tool_result",
    "install_error_handlers",
    "send_json",
]

logger = logging.getLogger("mindspace.http")

_DEFAULT_SUGGESTIONS: dict[int, str] = {
    400: "Check the request against the API schema at /openapi.json.",
    401: "Send 'Authorization: Bearer <token>' with a token from MINDSPACE_API_TOKEN(S).",
    403: "Use a token whose allow-list names this assistant (MINDSPACE_API_TOKENS).",
    404: "Check the path against the API schema at /openapi.json.",
    405: "Check the method against the API schema at /openapi.json.",
    413: "Send a smaller body.",
    415: "Send the body as JSON with 'Content-Type: application/json'.",
    503: "Try again in a moment.",
}


class ApiError(Exception):
    """An error a route raises on purpose, with its HTTP status.

    Args:
        status: The HTTP status code.
        error: What went wrong, quoting the offending values.
        suggestion: What the caller should do next.
        headers: Extra response headers (``WWW-Authenticate`` for 401).
        **extra: Further fields for the body.
    """

    def __init__(
        self,
        status: int,
        error: str,
        suggestion: str = "",
        *,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(error)
        self.status = status
        self.error = error
        self.suggestion = suggestion or _DEFAULT_SUGGESTIONS.get(status, "")
        self.headers = headers
        self.extra = extra


_T = TypeVar("_T")


def found(value: _T | None, error: str, suggestion: str) -> _T:
    """``value``, or a 404 :class:`ApiError` saying what is missing and where to look.

    Args:
        value: What a route looked up (None: there is no such thing).
        error: What is missing, quoting the id asked for.
        suggestion: Where to find a valid one.
    """
    if value is None:
        raise ApiError(404, error, suggestion)
    return value


def error_body(error: str, suggestion: str = "", **extra: Any) -> dict[str, Any]:
    """The error shape: ``success`` false, ``error``, ``suggestion`` and extras."""
    body: dict[str, Any] = {"success": False, "error": error}
    if suggestion:
        body["suggestion"] = suggestion
    body.update(extra)
    return body


# The next step for host errors that carry none, by class; the first isinstance match wins,
# so a subclass gets its parent's unless it is listed before it.
_CLASS_SUGGESTIONS: tuple[tuple[type[MindspaceError], str], ...] = (
    (RecordNotFoundError, "Check the id; the API schema at /openapi.json lists the routes."),
    (AlreadyExistsError, "Use the existing one, or choose another key."),
    (ConfigError, "Fix the value named in the error."),
    (ConcurrencyError, "Another process changed the assistant; send it again."),
    (LLMError, "Check MINDSPACE_LLM_BASE_URL and the provider, then try again."),
)


def error_response_body(exc: MindspaceError) -> dict[str, Any]:
    """The error shape for ``exc``, answered with ``exc.http_status``.

    A :class:`ToolError` keeps its tool-result shape; a host error shows its message, its
    own suggestion (else its class's) and its extra fields (``pending`` for approvals).
    Server-side failures (5xx) do not show their internals.
    """
    if isinstance(exc, ToolError):
        return http_tool_result(exc.to_result(), status=exc.http_status)
    status = exc.http_status
    message = str(getattr(exc, "error", "") or exc)
    suggestion = str(getattr(exc, "suggestion", "") or "")
    extra: dict[str, Any] = dict(getattr(exc, "extra", None) or {})
    if not suggestion:
        suggestion = next((s for cls, s in _CLASS_SUGGESTIONS if isinstance(exc, cls)), "")
    if isinstance(exc, LLMError):
        message = f"The language model failed: {message}"
    elif status >= 500:
        message = f"{type(exc).__name__}: {message}"
        suggestion = suggestion or "See the server log for details."
    return error_body(message, suggestion or _DEFAULT_SUGGESTIONS.get(status, ""), **extra)


def http_tool_result(result: dict[str, Any], status: int) -> dict[str, Any]:
    """A tool's result as the API answers it: a failure with ``invalid_fields`` (the spec's
    tool-result field) also gets the API's ``problems`` list, so every 422 has one shape.
    """
    fields = result.get("invalid_fields")
    if status != 422 or "problems" in result:
        return result
    if not isinstance(fields, list):
        # a body that is no JSON object at all: the whole body is the invalid field
        return {**result, "problems": body_problem(str(result.get("error", "invalid")))}
    problems = [
        {
            "field": str(f.get("field", "")),
            "message": str(f.get("problem", "invalid")),
            "type": "invalid_argument",
            **({"got": str(f["got"])} if "got" in f else {}),
        }
        for f in fields
        if isinstance(f, dict)
    ]
    return {**result, "problems": problems}


def body_problem(message: str, type_: str = "invalid_body") -> list[dict[str, str]]:
    """``problems`` for a 422 about the request body as a whole."""
    return [{"field": "body", "message": message, "type": type_}]


def _json(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> JSONResponse:
    return SafeJSONResponse(body, status_code=status, headers=headers)


def install_error_handlers(app: FastAPI) -> None:
    """Turn every error into a JSON response in the error shape."""

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        extra = dict(exc.extra)
        if exc.status == 422:
            # every 422 lists its problems, also one about the body as a whole
            extra.setdefault("problems", body_problem(exc.error))
        return _json(exc.status, error_body(exc.error, exc.suggestion, **extra), exc.headers)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = exc.detail if isinstance(exc.detail, str) else json.dumps(exc.detail)
        if exc.status_code == 404 and detail == "Not Found":
            detail = f"No such path: {request.method} {request.url.path!r}"
        elif exc.status_code == 405:
            detail = f"Method {request.method} is not allowed on {request.url.path!r}"
        suggestion = _DEFAULT_SUGGESTIONS.get(exc.status_code, "")
        headers = dict(exc.headers) if exc.headers else None
        return _json(exc.status_code, error_body(detail, suggestion), headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [_problem(e) for e in exc.errors()]
        summary = "; ".join(f"{p['field']}: {p['message']}" for p in problems[:5])
        return _json(
            422,
            error_body(
                f"Invalid request: {summary}",
                "Fix the fields listed in 'problems'; the API schema is at /openapi.json.",
                problems=problems,
            ),
        )

    @app.exception_handler(MindspaceError)
    async def _mindspace(request: Request, exc: MindspaceError) -> JSONResponse:
        # the status comes from the class (isinstance: subclasses inherit their parent's)
        status = exc.http_status
        if status >= 500 and not isinstance(exc, LLMError):
            logger.exception("Request %s %s failed", request.method, request.url.path)
        return _json(status, error_response_body(exc))

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception) -> JSONResponse:
        logger.exception("Request %s %s crashed", request.method, request.url.path)
        return _json(
            500,
            error_body(
                "Internal server error", "This is a bug in mindspace; the server log has details."
            ),
        )


def _problem(error: Any) -> dict[str, Any]:
    location = [str(part) for part in error.get("loc", ()) if part != "body"]
    return {
        "field": ".".join(location) or "body",
        "message": str(error.get("msg", "invalid")),
        "type": str(error.get("type", "")),
    }


_SCAN_INLINE_BYTES = 16_384
DRAIN_FACTOR = 16
"""An oversized body is read and dropped up to this many times the limit before the 413."""


class BodyLimitMiddleware:
    """Refuse request bodies over ``limit`` bytes with 413, before any route runs.

    A declared ``Content-Length`` over the limit is refused at once; a body sent without
    one (chunked) is read up to the limit first and refused when it passes it. A body
    whose JSON nests deeper than ``MAX_JSON_DEPTH`` is refused with 422 (checked by a
    scan, before any parser recurses into it). Since the route never runs, nothing of
    such a request is stored.

    Args:
        app: The wrapped application.
        limit: The most bytes a body may have.
    """

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.limit:
            await self._drain(receive, 0)
            await self._refuse(send, declared)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                await self._drain(receive, size)
                await self._refuse(send, size)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        # the scan is linear but in Python; a large body is scanned off the event loop
        deep = (
            await asyncio.to_thread(json_depth_exceeds, body)
            if len(body) > _SCAN_INLINE_BYTES
            else json_depth_exceeds(body)
        )
        if deep:
            await send_json(
                send,
                422,
                error_body(
                    f"The request body nests JSON deeper than {MAX_JSON_DEPTH} levels",
                    "Send a flatter JSON document; no request needs deeper nesting.",
                    problems=body_problem(
                        f"nested deeper than {MAX_JSON_DEPTH} levels", "json_too_deep"
                    ),
                ),
            )
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _drain(self, receive: Receive, size: int) -> None:
        # Read (and drop) the rest of a moderately oversized body, so the client gets the
        # 413 instead of a connection reset; a huge one is cut off at DRAIN_FACTOR x limit.
        more = True
        while more and size <= self.limit * DRAIN_FACTOR:
            message = await receive()
            if message["type"] != "http.request":
                return
            size += len(message.get("body", b""))
            more = bool(message.get("more_body", False))

    async def _refuse(self, send: Send, size: int) -> None:
        await send_json(
            send,
            413,
            error_body(
                f"The request body has {size:,} bytes or more; the limit is {self.limit:,}",
                "Send a smaller body (events hold at most 16,000 characters), or raise "
                "MINDSPACE_API_MAX_BODY_BYTES on the server.",
            ),
        )


async def send_json(
    send: Send,
    status: int,
    content: dict[str, Any],
    headers: Sequence[tuple[bytes, bytes]] = (),
) -> None:
    """Answer a raw ASGI request with ``content`` as JSON (for middleware below FastAPI)."""
    body = json.dumps(content, ensure_ascii=False).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
