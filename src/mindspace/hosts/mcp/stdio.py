"""Serving one assistant over stdio (``mindspace mcp``): the client launches this process.

Standard output is the protocol's channel, so nothing else may write to it: the SDK
points file descriptor 1 at stderr while it serves, and logs go to stderr.
"""

from __future__ import annotations

from typing import Any

from mcp.server import ServerRequestContext
from mcp.server.stdio import stdio_server

from mindspace.engine.assistant import Assistant
from mindspace.hosts.mcp.server import build_server

__all__ = ["serve_stdio"]


async def serve_stdio(assistant: Assistant) -> None:
    """Serve ``assistant``'s tools and resources on stdin/stdout until the client leaves."""

    def assistant_for(ctx: ServerRequestContext[Any, Any]) -> Assistant:
        return assistant

    server = build_server(assistant_for)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
