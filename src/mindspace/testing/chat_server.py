"""A local server that speaks OpenAI chat completions and plays scripted replies.

For end-to-end tests of assistants through the real ``openai`` client over HTTP. It
listens on loopback only, speaks HTTP/1.1 with keep-alive as real servers do (every
answer has a ``Content-Length``; a client reuses its connection), records every
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

import argparse
import contextlib
import itertools
import json
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from mindspace.testing.quirks import (
    BAD_JSON_BODY,
    Quirk,
    QuirkSettings,
    apply_message_quirks,
)

__all__ = ["ChatCompletionsServer", "Hold", "Quirk", "QuirkSettings", "Responder", "Step"]


@dataclass
class Hold:
    """A gate: the request that meets it waits until :meth:`release`, then gets a 503.

    It stands in for a model that never answers, e.g. to kill a client mid-request; the
    released request does not consume another step.
    """

    arrived: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)

    def release(self) -> None:
        """Let the waiting request continue."""
        self.released.set()


@dataclass
class Step:
    """One scripted answer."""

    content: str | None = None
    tool_calls: Sequence[Mapping[str, Any]] = ()
    status: int = 200
    delay: float = 0.0
    hold: Hold | None = None
    usage: Mapping[str, int] | None = None
    body: bytes | None = None
    """Sent as-is with status 200 instead of a completion (a malformed answer)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Extra response headers, e.g. ``Retry-After`` on a failure."""

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Step:
        """A step from a script line: content, tool_calls, status, delay, usage."""
        return cls(
            content=data.get("content"),
            tool_calls=data.get("tool_calls", ()),
            status=int(data.get("status", 200)),
            delay=float(data.get("delay", 0.0)),
            usage=data.get("usage"),
            body=data["body"].encode() if isinstance(data.get("body"), str) else None,
        )


Responder = Callable[[dict[str, Any]], Step | None]
"""Answers a chat request body when no scripted step is queued."""


@dataclass(frozen=True)
class _Reply:
    """What the handler sends: a JSON payload or raw bytes, with any extra headers."""

    status: int
    payload: dict[str, Any] | bytes
    headers: Mapping[str, str] = field(default_factory=dict)


class _Server(ThreadingHTTPServer):
    """Counts and remembers accepted connections so that :meth:`stop` can close them."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        self.accepted = 0
        self.open_sockets: set[socket.socket] = set()
        self.guard = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.guard:
            self.accepted += 1
            self.open_sockets.add(request)
        super().process_request(request, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client closing or resetting a kept-alive connection is normal, not an error.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.guard:
            self.open_sockets.discard(request)
        super().shutdown_request(request)


class ChatCompletionsServer:
    """The scripted server; use it as a context manager.

    Args:
        host: Loopback address to bind.
        port: 0 picks a free port.
        model: Model name reported in answers and in ``/v1/models``.
        quirks: Quirk modes (:class:`Quirk` members or their names).
        quirk_settings: Knobs of the quirks (words kept by ``length``, ...).
        respond: Answers requests when no step is queued.
        model_info: Extra fields of the model's ``/v1/models`` entry, e.g.
            ``{"context_length": 8192}``.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        model: str = "scripted",
        *,
        quirks: Iterable[Quirk | str] = (),
        quirk_settings: QuirkSettings | None = None,
        respond: Responder | None = None,
        model_info: Mapping[str, Any] | None = None,
    ) -> None:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError(f"The test server listens on loopback only, not {host!r}")
        self.model = model
        self.quirks = frozenset(Quirk(q) for q in quirks)
        self.quirk_settings = quirk_settings or QuirkSettings()
        self.respond = respond
        self.model_info = dict(model_info or {})
        self.requests: list[dict[str, Any]] = []
        self._steps: deque[Step] = deque()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._seen = 0
        self._httpd = _Server((host, port), self._handler())
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL to give the client (ends in ``/v1``)."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def connections(self) -> int:
        """TCP connections accepted so far (keep-alive clients reuse one)."""
        with self._httpd.guard:
            return self._httpd.accepted

    # -- scripting ---------------------------------------------------------------------
    def reply(
        self,
        content: str | None = None,
        *,
        tool_calls: Sequence[Mapping[str, Any]] = (),
        delay: float = 0.0,
        usage: Mapping[str, int] | None = None,
    ) -> None:
        """Queue a reply: text and/or tool calls ``{"name": ..., "arguments": {...}}``."""
        self.push(Step(content, tool_calls, delay=delay, usage=usage))

    def fail(self, status: int = 500, times: int = 1, *, retry_after: float | None = None) -> None:
        """Queue ``times`` failures with ``status`` (and a ``Retry-After`` header if given)."""
        headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
        for _ in range(times):
            self.push(Step(status=status, headers=headers))

    def hold(self) -> Hold:
        """Queue a hold: the next request waits until the returned gate is released."""
        gate = Hold()
        self.push(Step(hold=gate))
        return gate

    def push(self, step: Step) -> None:
        """Queue any step."""
        with self._lock:
            self._steps.append(step)

    @property
    def pending(self) -> int:
        """Steps not played yet."""
        with self._lock:
            return len(self._steps)

    # -- lifecycle ---------------------------------------------------------------------
    def start(self) -> ChatCompletionsServer:
        """Serve in a background thread."""
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, release any held request and close kept-alive connections."""
        with self._lock:
            for step in self._steps:
                if step.hold:
                    step.hold.release()
        self._httpd.shutdown()
        with self._httpd.guard:
            sockets = list(self._httpd.open_sockets)
        for sock in sockets:
            with contextlib.suppress(OSError):  # already closed by the client
                sock.shutdown(socket.SHUT_RDWR)
        self._httpd.server_close()

    def __enter__(self) -> ChatCompletionsServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- protocol ----------------------------------------------------------------------
    def _next(self, body: dict[str, Any]) -> Step | None:
        with self._lock:
            if self._steps:
                return self._steps.popleft()
        return self.respond(body) if self.respond is not None else None

    def _gate(self) -> _Reply | None:
        """The quirks that answer before a request is looked at: slow, loading."""
        if Quirk.SLOW in self.quirks:
            time.sleep(self.quirk_settings.slow_seconds)  # the emulated generation time
        with self._lock:
            self._seen += 1
            seen = self._seen
        if Quirk.LOADING in self.quirks and seen <= self.quirk_settings.loading_requests:
            return _Reply(503, {"error": {"message": "Loading model", "type": "unavailable_error"}})
        return None

    def _answer(self, body: dict[str, Any]) -> _Reply:
        step = self._next(body)
        if step is not None and step.hold is not None:
            step.hold.arrived.set()
            step.hold.released.wait()
            return _Reply(503, _error("The held request was released without an answer"))
        if step is None:
            return _Reply(500, _error("The scripted server has no reply left for this request"))
        if step.delay:
            time.sleep(step.delay)  # simulated model latency, on the server's thread
        if step.status != 200:
            failure = _error(f"Scripted failure with status {step.status}")
            return _Reply(step.status, failure, step.headers)
        if step.body is not None:
            return _Reply(200, step.body, step.headers)
        if Quirk.BAD_JSON in self.quirks:
            return _Reply(200, BAD_JSON_BODY)
        content, scripted_calls, finish = apply_message_quirks(
            self.quirks, self.quirk_settings, body, step.content, step.tool_calls
        )
        calls = [
            {
                "id": str(call.get("id") or f"call_{next(self._ids)}"),
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
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        }
        if Quirk.NO_USAGE not in self.quirks:
            answer["usage"] = _usage(step, body, content, len(calls))
        return _Reply(200, answer, step.headers)

    def _models(self) -> dict[str, Any]:
        entry = {"id": self.model, "object": "model", "owned_by": "mindspace-testing"}
        return {"object": "list", "data": [{**entry, **self.model_info}]}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as every real server

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)  # read it all, or the next request is garbled
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(_Reply(404, _error(f"No route {self.path!r}")))
                    return
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._send(_Reply(400, _error("The request body is not JSON")))
                    return
                server.requests.append(body)
                self._send(server._gate() or server._answer(body))

            def do_GET(self) -> None:
                gated = server._gate()
                if gated is not None:
                    self._send(gated)
                elif self.path.rstrip("/").endswith("/models"):
                    self._send(_Reply(200, server._models()))
                else:
                    self._send(_Reply(404, _error(f"No route {self.path!r}")))

            def _send(self, reply: _Reply) -> None:
                data = reply.payload
                if not isinstance(data, bytes):
                    data = json.dumps(data).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client went away (e.g. killed)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


def _usage(step: Step, body: Mapping[str, Any], content: str | None, calls: int) -> dict[str, int]:
    if step.usage:
        usage = dict(step.usage)
    else:
        prompt = sum(len(str(m.get("content") or "").split()) for m in body.get("messages", []))
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": len((content or "").split()) + 10 * calls,
        }
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    return usage


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "server_error"}}


@contextmanager
def running(steps: Sequence[Step] = ()) -> Iterator[ChatCompletionsServer]:
    """A started server with ``steps`` queued."""
    with ChatCompletionsServer() as server:
        for step in steps:
            server.push(step)
        yield server


def main(argv: Sequence[str] | None = None) -> None:
    """Serve a script of JSON steps until interrupted; prints the base URL first."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--model", default="scripted")
    parser.add_argument("--script", type=Path, help="JSON lines, one step each")
    parser.add_argument(
        "--quirk",
        action="append",
        default=[],
        choices=[q.value for q in Quirk],
        help="A quirk mode; repeat for several.",
    )
    defaults = QuirkSettings()
    parser.add_argument("--length-words", type=int, default=defaults.length_words)
    parser.add_argument("--loading-requests", type=int, default=defaults.loading_requests)
    parser.add_argument("--slow-seconds", type=float, default=defaults.slow_seconds)
    args = parser.parse_args(argv)
    server = ChatCompletionsServer(
        port=args.port,
        model=args.model,
        quirks=args.quirk,
        quirk_settings=QuirkSettings(
            length_words=args.length_words,
            loading_requests=args.loading_requests,
            slow_seconds=args.slow_seconds,
        ),
    )
    if args.script:
        for line in args.script.read_text().splitlines():
            if line.strip():
                server.push(Step.from_json(json.loads(line)))
    server.start()
    print(server.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()
        sys.exit(0)


if __name__ == "__main__":
    main()
