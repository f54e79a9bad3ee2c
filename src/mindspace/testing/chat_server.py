"""A local server that speaks OpenAI chat completions and plays scripted replies.

For end-to-end tests of assistants through the real ``openai`` client over HTTP. The
machinery (loopback only, HTTP/1.1 keep-alive, the queue of steps) is shared with the
Messages-API server (:mod:`mindspace.testing.scripted_server`). It records every
request, and answers from two sources:

* a queue of steps, played in order: :meth:`~ChatCompletionsServer.reply` (text and/or
  tool calls), :meth:`~ChatCompletionsServer.fail` (an error status),
  :meth:`~ChatCompletionsServer.hold` (a request that waits until the test releases it,
  to kill a process mid-request) and :meth:`~ChatCompletionsServer.push` (any
  :class:`Step`, e.g. with a ``delay``);
* when the queue is empty, ``respond``: a function from the request body to a
  :class:`Step` (or None), for coherent answers to requests a test cannot predict
  (``mindspace doctor``'s probes). With neither, a request gets a 500.

``requests`` holds every chat request body in order; ``pending`` counts unplayed steps;
``connections`` counts the TCP connections accepted. Quirk modes
(:mod:`mindspace.testing.quirks`) make it misbehave as real servers do.

Example:
    >>> with ChatCompletionsServer(quirks=["text_tool_calls_tags"]) as server:
    ...     server.reply(tool_calls=[{"name": "add_goal", "arguments": {"description": "x"}}])
    ...     server.reply("Done!")
    ...     llm = OpenAICompatibleLLM(base_url=server.url, model="scripted")

Run it as a process (one JSON step per line in the script file)::

    python -m mindspace.testing.chat_server --port 0 --script steps.jsonl --quirk slow
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from mindspace.testing.quirks import (
    Quirk,
    QuirkSettings,
    apply_message_quirks,
    tools_rendered,
)
from mindspace.testing.scripted_server import (
    Hold,
    Reply,
    Responder,
    ScriptedServer,
    Step,
    serve_script,
)

__all__ = ["ChatCompletionsServer", "Hold", "Quirk", "QuirkSettings", "Responder", "Step"]


class ChatCompletionsServer(ScriptedServer):
    """The scripted chat-completions server; use it as a context manager.

    Args:
        host: Loopback address to bind.
        port: 0 picks a free port.
        model: Model name reported in answers and in ``/v1/models``.
        quirks: Quirk modes (:class:`Quirk` members or their names).
        quirk_settings: Knobs of the quirks (words kept by ``length``, ...).
        respond: Answers requests when no step is queued.
        model_info: Extra fields of the model's ``/v1/models`` entry, e.g.
            ``{"context_length": 8192}``.

    Set :attr:`props` to answer ``GET /props`` and ``/slots`` as llama.cpp's server does
    (e.g. ``{"default_generation_settings": {"n_ctx": 2048}}``); by default they are 404.
    """

    route = "/chat/completions"
    props: Mapping[str, Any] | None = None

    def _get(self, path: str) -> Reply | None:
        if self.props is None or path not in ("/props", "/slots"):
            return None
        if path == "/props":
            return Reply(200, dict(self.props))
        n_ctx = (self.props.get("default_generation_settings") or {}).get("n_ctx")
        slots = [{"id": 0, "n_ctx": n_ctx, "is_processing": False}]
        return Reply(200, json.dumps(slots).encode())

    def _answer(self, body: dict[str, Any]) -> Reply:
        if Quirk.DROPS_TOOLS in self.quirks:
            # The model never sees the tools: neither does the scripted model.
            body = {k: v for k, v in body.items() if k not in ("tools", "tool_choice")}
        return super()._answer(body)

    @property
    def url(self) -> str:
        """The base URL to give the client (ends in ``/v1``)."""
        return f"{self.root}/v1"

    def _loading(self) -> dict[str, Any]:
        return {"error": {"message": "Loading model", "type": "unavailable_error"}}

    def _completion(self, body: dict[str, Any], step: Step) -> Reply:
        content, scripted_calls, finish = apply_message_quirks(
            self.quirks, self.quirk_settings, body, step.content, step.tool_calls
        )
        calls = [
            {
                "id": str(call.get("id") or f"call_{self._next_id()}"),
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": call["arguments"]
                    if isinstance(call.get("arguments"), str)
                    else json.dumps(call.get("arguments", {})),
                },
            }
            for call in scripted_calls
        ]
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = calls
        answer: dict[str, Any] = {
            "id": f"chatcmpl-{self._next_id()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        }
        if Quirk.NO_USAGE not in self.quirks:
            rendered = tools_rendered(self.quirks, body)
            answer["usage"] = _usage(step, body, content, len(calls), rendered)
        return Reply(200, answer, step.headers)

    def _models(self) -> dict[str, Any]:
        entry = {"id": self.model, "object": "model", "owned_by": "mindspace-testing"}
        return {"object": "list", "data": [{**entry, **self.model_info}]}


def _usage(
    step: Step, body: Mapping[str, Any], content: str | None, calls: int, tools: bool
) -> dict[str, int]:
    if step.usage:
        usage = dict(step.usage)
    else:
        # A word a token; rendered tool definitions are prompt too.
        prompt = sum(len(str(m.get("content") or "").split()) for m in body.get("messages", []))
        if tools:
            prompt += len(json.dumps(body["tools"]).split())
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": len((content or "").split()) + 10 * calls,
        }
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    return usage


@contextmanager
def running(steps: Sequence[Step] = ()) -> Iterator[ChatCompletionsServer]:
    """A started server with ``steps`` queued."""
    with ChatCompletionsServer() as server:
        for step in steps:
            server.push(step)
        yield server


def main(argv: Sequence[str] | None = None) -> None:
    """Serve a script of JSON steps until interrupted; prints the base URL first."""
    serve_script(ChatCompletionsServer, argv, __doc__)


if __name__ == "__main__":
    main()
