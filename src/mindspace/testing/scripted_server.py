"""What the scripted test servers share: a queue of steps, HTTP/1.1 keep-alive, quirks.

:class:`ScriptedServer` is the machinery; each protocol subclasses it and says how a
step becomes an answer: :class:`~mindspace.testing.chat_server.ChatCompletionsServer`
(OpenAI chat completions) and :class:`~mindspace.testing.messages_server.MessagesServer`
(Anthropic's Messages API). A server listens on loopback only, speaks HTTP/1.1 with
keep-alive as real servers do (every answer has a ``Content-Length``; a client reuses
its connection), records every request, and answers from two sources:

* a queue of steps, played in order: :meth:`~ScriptedServer.reply` (text and/or tool
  calls), :meth:`~ScriptedServer.fail` (an error status),
  :meth:`~ScriptedServer.hold` (a request that waits until the test releases it, to
  kill a process mid-request) and :meth:`~ScriptedServer.push` (any :class:`Step`,
  e.g. with a ``delay``);
* when the queue is empty, ``respond``: a function from the request body to a
  :class:`Step` (or None), for coherent answers to requests a test cannot predict.
  With neither, a request gets a 500.
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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

from mindspace.testing.quirks import BAD_JSON_BODY, Quirk, QuirkSettings

__all__ = [
    "NO_REPLY_LEFT",
    "Hold",
    "Reply",
    "Responder",
    "ScriptedServer",
    "Step",
    "serve_script",
]

NO_REPLY_LEFT = "The scripted server has no reply left for this request"
"""The 500 error message when no step is queued and no ``respond`` answers."""


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
        """A step from a script line: content, tool_calls, status, delay, usage, headers."""
        return cls(
            content=data.get("content"),
            tool_calls=data.get("tool_calls", ()),
            status=int(data.get("status", 200)),
            delay=float(data.get("delay", 0.0)),
            usage=data.get("usage"),
            body=data["body"].encode() if isinstance(data.get("body"), str) else None,
            headers=dict(data.get("headers") or {}),
        )


Responder = Callable[[dict[str, Any]], Step | None]
"""Answers a request body when no scripted step is queued."""


@dataclass(frozen=True)
class Reply:
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


class ScriptedServer:
    """The machinery of a scripted server; a protocol subclasses it.

    A subclass sets :attr:`route` (the POST path's ending) and defines
    :meth:`_completion` (a step as a 200 answer), :meth:`_error` (an error body in the
    protocol's shape), :meth:`_models` and :attr:`url`.

    Args:
        host: Loopback address to bind.
        port: 0 picks a free port.
        model: Model name reported in answers and in ``/v1/models``.
        quirks: Quirk modes (:class:`~mindspace.testing.quirks.Quirk` members or names).
        quirk_settings: Knobs of the quirks (words kept by ``length``, ...).
        respond: Answers requests when no step is queued.
        model_info: Extra fields of the model's ``/v1/models`` entry.
    """

    route = "/"
    """The POST path's ending that the protocol serves; others get a 404."""

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
    def root(self) -> str:
        """``http://host:port``, without a path."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def url(self) -> str:
        """The base URL to give the client."""
        return self.root

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
    def start(self) -> Self:
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

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- what a protocol defines -------------------------------------------------------
    def _completion(self, body: dict[str, Any], step: Step) -> Reply:
        """A played step (status 200, not a raw body) as the protocol's answer."""
        raise NotImplementedError

    def _error(self, status: int, message: str) -> dict[str, Any]:
        """An error body in the protocol's shape."""
        return {"error": {"message": message, "type": "server_error"}}

    def _loading(self) -> dict[str, Any]:
        """The 503 body of the ``loading`` quirk."""
        return self._error(503, "Loading model")

    def _models(self) -> dict[str, Any]:
        """The ``/v1/models`` answer."""
        raise NotImplementedError

    def _get(self, path: str) -> Reply | None:
        """A subclass's own ``GET`` routes (None: 404)."""
        return None

    def _next_id(self) -> int:
        return next(self._ids)

    # -- protocol ----------------------------------------------------------------------
    def _next(self, body: dict[str, Any]) -> Step | None:
        with self._lock:
            if self._steps:
                return self._steps.popleft()
        return self.respond(body) if self.respond is not None else None

    def _gate(self) -> Reply | None:
        """The quirks that answer before a request is looked at: slow, loading."""
        if Quirk.SLOW in self.quirks:
            time.sleep(self.quirk_settings.slow_seconds)  # the emulated generation time
        with self._lock:
            self._seen += 1
            seen = self._seen
        if Quirk.LOADING in self.quirks and seen <= self.quirk_settings.loading_requests:
            return Reply(503, self._loading())
        return None

    def _answer(self, body: dict[str, Any]) -> Reply:
        step = self._next(body)
        if step is not None and step.hold is not None:
            step.hold.arrived.set()
            step.hold.released.wait()
            return Reply(503, self._error(503, "The held request was released without an answer"))
        if step is None:
            return Reply(500, self._error(500, NO_REPLY_LEFT))
        if step.delay:
            time.sleep(step.delay)  # simulated model latency, on the server's thread
        if step.status != 200:
            failure = self._error(step.status, f"Scripted failure with status {step.status}")
            return Reply(step.status, failure, step.headers)
        if step.body is not None:
            return Reply(200, step.body, step.headers)
        if Quirk.BAD_JSON in self.quirks:
            return Reply(200, BAD_JSON_BODY)
        return self._completion(body, step)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as every real server

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)  # read it all, or the next request is garbled
                if not self.path.split("?")[0].rstrip("/").endswith(server.route):
                    self._send(Reply(404, server._error(404, f"No route {self.path!r}")))
                    return
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._send(Reply(400, server._error(400, "The request body is not JSON")))
                    return
                server.requests.append(body)
                self._send(server._gate() or server._answer(body))

            def do_GET(self) -> None:
                gated = server._gate()
                if gated is not None:
                    self._send(gated)
                elif self.path.split("?")[0].rstrip("/").endswith("/models"):
                    self._send(Reply(200, server._models()))
                elif (extra := server._get(self.path.split("?")[0].rstrip("/"))) is not None:
                    self._send(extra)
                else:
                    self._send(Reply(404, server._error(404, f"No route {self.path!r}")))

            def _send(self, reply: Reply) -> None:
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


def serve_script(
    server_class: type[ScriptedServer], argv: Sequence[str] | None, doc: str | None
) -> None:
    """A server's ``python -m`` entry: serve a script of JSON steps until interrupted.

    Prints the base URL first (the line a test reads), then serves until SIGINT.
    """
    parser = argparse.ArgumentParser(description=doc.splitlines()[0] if doc else None)
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
    server = server_class(
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
