"""A local server that speaks Anthropic's Messages API and plays scripted replies.

For end-to-end tests of assistants through the real ``anthropic`` SDK over HTTP. It
shares its machinery with the chat-completions server
(:mod:`mindspace.testing.scripted_server`): loopback only, HTTP/1.1 keep-alive, a queue
of steps (:meth:`~MessagesServer.reply`, :meth:`~MessagesServer.fail`,
:meth:`~MessagesServer.hold`, :meth:`~MessagesServer.push`), a ``respond`` function for
requests a test cannot predict, and the quirk modes that apply to any protocol
(``slow``, ``loading``, ``no_usage``, ``length``, ``bad_json``, tool calls written as
text). It serves ``POST /v1/messages`` and ``GET /v1/models``; ``requests`` holds every
request body in order.

It misbehaves as Anthropic's API does: :meth:`~MessagesServer.overloaded` queues
``529 overloaded_error`` answers, ``fail(429, retry_after=...)`` a rate limit with a
``retry-after`` header; errors have the API's shape
``{"type": "error", "error": {"type": ..., "message": ...}}``. A step's tool calls
become ``tool_use`` blocks (``stop_reason: "tool_use"``), its text a ``text`` block.

Example:
    >>> with MessagesServer() as server:
    ...     server.overloaded()
    ...     server.reply(tool_calls=[{"name": "add_goal", "arguments": {"description": "x"}}])
    ...     server.reply("Done!")
    ...     llm = AnthropicLLM(base_url=server.url, model="scripted", api_key="test")

Run it as a process (one JSON step per line in the script file)::

    python -m mindspace.testing.messages_server --port 0 --script steps.jsonl --quirk slow
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from mindspace.testing.quirks import Quirk, apply_message_quirks
from mindspace.testing.scripted_server import Reply, ScriptedServer, Step, serve_script

__all__ = ["ERROR_TYPES", "MessagesServer"]

ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
"""The ``error.type`` Anthropic's API sends with each status (others: ``api_error``)."""

_STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}


class MessagesServer(ScriptedServer):
    """The scripted Messages-API server; use it as a context manager.

    Args:
        host: Loopback address to bind.
        port: 0 picks a free port.
        model: Model name reported in answers (the request's model wins) and in
            ``/v1/models``.
        quirks: Quirk modes (:class:`~mindspace.testing.quirks.Quirk` members or names).
        quirk_settings: Knobs of the quirks.
        respond: Answers requests when no step is queued.
        model_info: Extra fields of the model's ``/v1/models`` entry.
    """

    route = "/v1/messages"

    @property
    def url(self) -> str:
        """The base URL to give the SDK (no ``/v1``: the SDK adds ``/v1/messages``)."""
        return self.root

    def overloaded(self, times: int = 1, *, retry_after: float | None = None) -> None:
        """Queue ``times`` answers ``529 overloaded_error``, as the API sends under load."""
        self.fail(529, times, retry_after=retry_after)

    def _error(self, status: int, message: str) -> dict[str, Any]:
        kind = ERROR_TYPES.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}

    def _completion(self, body: dict[str, Any], step: Step) -> Reply:
        content, calls, finish = apply_message_quirks(
            self.quirks, self.quirk_settings, body, step.content, step.tool_calls
        )
        blocks: list[dict[str, Any]] = []
        if content:
            blocks.append({"type": "text", "text": content})
        for call in calls:
            arguments = call.get("arguments", {})
            if isinstance(arguments, str):  # a scripted JSON text; the API sends an object
                arguments = json.loads(arguments)
            blocks.append(
                {
                    "type": "tool_use",
                    "id": str(call.get("id") or f"toolu_{self._next_id():04d}"),
                    "name": call["name"],
                    "input": arguments,
                }
            )
        answer: dict[str, Any] = {
            "id": f"msg_{self._next_id():04d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", self.model),
            "content": blocks,
            "stop_reason": _STOP_REASONS[finish],
            "stop_sequence": None,
        }
        if Quirk.NO_USAGE not in self.quirks:
            answer["usage"] = _usage(step, body, content, len(calls))
        return Reply(200, answer, step.headers)

    def _models(self) -> dict[str, Any]:
        entry = {
            "type": "model",
            "id": self.model,
            "display_name": self.model,
            "created_at": "2025-01-01T00:00:00Z",
        }
        return {
            "data": [{**entry, **self.model_info}],
            "has_more": False,
            "first_id": self.model,
            "last_id": self.model,
        }


def _words(value: object) -> int:
    """Words in a system prompt or a message's content (a string or a list of blocks)."""
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, list):
        return sum(_words(b.get("text") or b.get("content")) for b in value if isinstance(b, dict))
    return 0


def _usage(step: Step, body: Mapping[str, Any], content: str | None, calls: int) -> dict[str, int]:
    if step.usage:
        return dict(step.usage)
    prompt = _words(body.get("system")) + sum(
        _words(m.get("content")) for m in body.get("messages", []) if isinstance(m, dict)
    )
    return {
        "input_tokens": prompt,
        "output_tokens": len((content or "").split()) + 10 * calls,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Serve a script of JSON steps until interrupted; prints the base URL first."""
    serve_script(MessagesServer, argv, __doc__)


if __name__ == "__main__":
    main()
