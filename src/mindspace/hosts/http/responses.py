"""JSON responses that always render: a response is never the step that fails.

Starlette's ``JSONResponse`` encodes with ``ensure_ascii=False`` and then UTF-8, which
raises on a lone surrogate. A route that has already committed a change must not answer
500 because its response could not be encoded, so these fall back to ASCII escapes
(``"\\ud800"``, still valid JSON) for the rare document that holds such a character.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi.responses import JSONResponse

__all__ = ["SafeJSONResponse", "safe_json_dumps"]


def safe_json_dumps(content: Any) -> str:
    """``content`` as JSON text that can always be encoded as UTF-8."""
    text = json.dumps(content, ensure_ascii=False, allow_nan=False, default=str)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(content, ensure_ascii=True, allow_nan=False, default=str)
    return text


class SafeJSONResponse(JSONResponse):
    """A ``JSONResponse`` whose rendering cannot fail on text that is not valid Unicode."""

    def render(self, content: Any) -> bytes:
        """The body: compact JSON, UTF-8, with ASCII escapes when plain UTF-8 cannot hold it."""
        text = json.dumps(
            content, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")
        )
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            return json.dumps(
                content, ensure_ascii=True, allow_nan=False, indent=None, separators=(",", ":")
            ).encode("ascii")
