"""Serving one assistant over stdio (``mindspace mcp``): the client launches this process.

Standard output is the protocol's channel, so nothing else may write to it: the SDK
points file descriptor 1 at stderr while it serves, and logs go to stderr.

Every line from the client is screened first (:mod:`mindspace.hosts.mcp.jsonrpc`): one
the SDK would drop in silence (not JSON, a batch, a wrong ``jsonrpc``, ``params`` as a
list, a lone surrogate, nesting 100,000 deep) is answered with JSON-RPC's error on the
same output, so no client waits forever on an id.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from io import TextIOWrapper
from typing import Any, cast

import anyio
import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from mindspace.engine import Assistant
from mindspace.hosts.mcp.jsonrpc import screen
from mindspace.hosts.mcp.server import build_server

__all__ = ["ScreenedInput", "serve_stdio"]


class ScreenedInput:
    """The client's lines, screened: good ones are iterated, bad ones answered.

    Args:
        lines: The raw lines (the process's stdin, decoded as UTF-8).
    """

    def __init__(self, lines: AsyncIterator[str]) -> None:
        self._lines = lines
        self._replies: Any = None
        self._ready = anyio.Event()

    def answer_on(self, write_stream: Any) -> None:
        """Send error replies on ``write_stream`` (the SDK's, so lines never interleave)."""
        self._replies = write_stream
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._screened()

    async def _screened(self) -> AsyncIterator[str]:
        async for line in self._lines:
            verdict = screen(line)
            if verdict.action == "pass":
                yield line
            elif verdict.action == "answer" and verdict.reply is not None:
                await self._ready.wait()
                reply = types.JSONRPCError.model_validate(verdict.reply)
                await self._replies.send(SessionMessage(reply))


async def serve_stdio(assistant: Assistant) -> None:
    """Serve ``assistant``'s tools and resources on stdin/stdout until the client leaves."""

    def assistant_for(ctx: ServerRequestContext[Any, Any]) -> Assistant:
        return assistant

    server = build_server(assistant_for)
    # Decoded as the SDK does (invalid UTF-8 becomes U+FFFD), then screened.
    raw = anyio.wrap_file(TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
    stdin = ScreenedInput(aiter(raw))
    # The SDK iterates whatever it is given; it only needs lines.
    async with stdio_server(stdin=cast(Any, stdin)) as (read_stream, write_stream):
        stdin.answer_on(write_stream)
        await server.run(read_stream, write_stream, server.create_initialization_options())
