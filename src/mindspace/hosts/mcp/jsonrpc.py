"""JSON-RPC's own error replies for lines the MCP SDK would drop without a word.

The SDK's stdio transport hands a line it cannot validate to the server as an
exception, which logs it and answers nothing: a client that sent malformed JSON, a
batch, ``"jsonrpc": "1.0"``, ``params`` as a list, a lone surrogate or a 100,000-deep
argument waits forever on its id. :func:`screen` reads each line first and answers
those with JSON-RPC 2.0's codes (``-32700`` parse error, ``-32600`` invalid request,
``-32602`` invalid params), with the request's id when it can be found (``null``
otherwise, as the specification asks). Notifications (no id) that are malformed get
no reply, as JSON-RPC wants; lines that pass go to the SDK unchanged.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Final, Literal

from mindspace.limits import MAX_JSON_DEPTH
from mindspace.validation import find_invalid_text, json_depth_exceeds

__all__ = ["INVALID_PARAMS", "INVALID_REQUEST", "PARSE_ERROR", "Screened", "screen"]

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
INVALID_PARAMS: Final = -32602

_LINE_DEPTH = MAX_JSON_DEPTH + 4
"""A request wraps its arguments in a few levels (``{"params": {"arguments": ...}}``)."""

_ID = re.compile(r'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')
"""An id in a line too deep (or too broken) to parse: the first ``"id": ...`` in it."""

Id = int | str | None


@dataclass(frozen=True)
class Screened:
    """What to do with one line: pass it to the SDK, drop it, or answer ``reply``."""

    action: Literal["pass", "drop", "answer"]
    reply: dict[str, Any] | None = None


_PASS = Screened("pass")
_DROP = Screened("drop")
"""A malformed notification: JSON-RPC never answers one (the sender expects nothing)."""


def _reply(request_id: Id, code: int, message: str) -> Screened:
    error = {"code": code, "message": message}
    return Screened("answer", {"jsonrpc": "2.0", "id": request_id, "error": error})


def _guess_id(line: str) -> Id:
    found = _ID.search(line)
    if found is None:
        return None
    try:
        value = json.loads(found.group(1))
    except ValueError:
        return None
    return value if isinstance(value, int | str) else None


def screen(line: str) -> Screened:
    """Check one line of the stdio stream: pass it, drop it, or answer it with an error."""
    if not line.strip():
        return _DROP
    if json_depth_exceeds(line, _LINE_DEPTH):
        return _reply(
            _guess_id(line),
            INVALID_REQUEST,
            f"The message nests arrays and objects deeper than {_LINE_DEPTH} levels; "
            "send flatter arguments.",
        )
    try:
        message = json.loads(line)
    except ValueError as exc:
        return _reply(
            _guess_id(line), PARSE_ERROR, f"Parse error: not JSON ({exc}); send one JSON object."
        )
    if isinstance(message, list):
        return _reply(
            None, INVALID_REQUEST, "Batches are not supported by MCP; send one message a line."
        )
    if not isinstance(message, dict):
        return _reply(None, INVALID_REQUEST, "A JSON-RPC message is a JSON object.")
    raw_id = message.get("id")
    has_id = "id" in message
    request_id: Id = (
        raw_id if isinstance(raw_id, int | str) and not isinstance(raw_id, bool) else None
    )
    if has_id and request_id is None and raw_id is not None:
        return _reply(None, INVALID_REQUEST, "'id' must be a string or an integer.")
    if message.get("jsonrpc") != "2.0":
        return _reply(
            request_id,
            INVALID_REQUEST,
            f"'jsonrpc' must be \"2.0\", got {message.get('jsonrpc')!r}.",
        )
    is_call = "method" in message
    if is_call and not isinstance(message["method"], str):
        return _reply(request_id, INVALID_REQUEST, "'method' must be a string.")
    if not is_call and not has_id:
        return _reply(None, INVALID_REQUEST, "A message needs a 'method' or an 'id'.")
    if is_call and "params" in message and not isinstance(message["params"], dict | None):
        if not has_id:
            return _DROP
        return _reply(request_id, INVALID_PARAMS, "'params' must be an object (by name).")
    # Only calls are checked: a response's text is the client's answer, not our input.
    found = find_invalid_text(message) if is_call else None
    if found is not None:
        path, problem = found
        if not has_id:
            return _DROP
        return _reply(request_id, INVALID_PARAMS, f"Invalid params: {path!r} {problem}.")
    return _PASS
