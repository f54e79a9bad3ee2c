"""A local server that speaks OpenAI chat completions and plays scripted replies.

For end-to-end tests of assistants through the real ``openai`` client over HTTP. It
listens on loopback only, records every request, and plays a queue of steps: replies
(text and/or tool calls), failures with a status code, delays, and holds (a request
that waits until the test releases it, to kill a process mid-request).

Example:
    >>> with ChatCompletionsServer() as server:
    ...     server.reply(tool_calls=[{"name": "add_goal", "arguments": {"description": "x"}}])
    ...     server.reply("Done!")
    ...     llm = OpenAICompatibleLLM(base_url=server.url, model="scripted")

Run it as a process (one JSON step per line in the script file)::

    python -m mindspace.testing.chat_server --port 0 --script steps.jsonl
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = ["ChatCompletionsServer", "Hold", "Step"]


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

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Step:
        """A step from a script line: content, tool_calls, status, delay, usage."""
        return cls(
            content=data.get("content"),
            tool_calls=data.get("tool_calls", ()),
            status=int(data.get("status", 200)),
            delay=float(data.get("delay", 0.0)),
            usage=data.get("usage"),
        )


class ChatCompletionsServer:
    """The scripted server; use it as a context manager.

    Args:
        host: Loopback address to bind.
        port: 0 picks a free port.
        model: Model name reported in answers.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, model: str = "scripted") -> None:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError(f"The test server listens on loopback only, not {host!r}")
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self._steps: deque[Step] = deque()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._httpd = ThreadingHTTPServer((host, port), self._handler())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL to give the client (ends in ``/v1``)."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

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

    def fail(self, status: int = 500, times: int = 1) -> None:
        """Queue ``times`` failures with ``status``."""
        for _ in range(times):
            self.push(Step(status=status))

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
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release any held request."""
        with self._lock:
            for step in self._steps:
                if step.hold:
                    step.hold.release()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ChatCompletionsServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- protocol ----------------------------------------------------------------------
    def _next(self) -> Step | None:
        with self._lock:
            return self._steps.popleft() if self._steps else None

    def _answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.requests.append(body)
        step = self._next()
        if step is not None and step.hold is not None:
            step.hold.arrived.set()
            step.hold.released.wait()
            return 503, _error("The held request was released without an answer")
        if step is None:
            return 500, _error("The scripted server has no reply left for this request")
        if step.delay:
            time.sleep(step.delay)  # simulated model latency, on the server's thread
        if step.status != 200:
            return step.status, _error(f"Scripted failure with status {step.status}")
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
            for call in step.tool_calls
        ]
        message: dict[str, Any] = {"role": "assistant", "content": step.content}
        if calls:
            message["tool_calls"] = calls
        prompt_tokens = sum(
            len(str(m.get("content") or "").split()) for m in body.get("messages", [])
        )
        usage = (
            dict(step.usage)
            if step.usage
            else {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": len((step.content or "").split()) + 10 * len(calls),
            }
        )
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        return 200, {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if calls else "stop",
                }
            ],
            "usage": usage,
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, _error(f"No route {self.path!r}"))
                    return
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    self._send(400, _error("The request body is not JSON"))
                    return
                status, payload = server._answer(body)
                self._send(status, payload)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": server.model}]})
                else:
                    self._send(404, _error(f"No route {self.path!r}"))

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client went away (for example, it was killed)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


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
    parser.add_argument("--script", type=Path, help="JSON lines, one step each")
    args = parser.parse_args(argv)
    server = ChatCompletionsServer(port=args.port)
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
