"""The Model Context Protocol host: an assistant's tools and state for MCP clients.

Needs the ``mcp`` extra (``pip install -e '.[mcp]'`` in a clone). ``mindspace mcp`` serves one
assistant over stdio; ``mindspace serve`` mounts the streamable-HTTP transport at
``/v1/assistants/{key}/mcp`` behind the API's tokens. See docs/mcp.md.
"""

from __future__ import annotations

from mindspace.hosts.mcp import server
from mindspace.hosts.mcp.server import *  # noqa: F403 (its __all__ is stated there, once)
from mindspace.hosts.mcp.stdio import serve_stdio

__all__ = ["serve_stdio"]
__all__ += server.__all__
