"""The Model Context Protocol host: an assistant's tools and state for MCP clients.

Needs the ``mcp`` extra (``pip install -e '.[mcp]'`` in a clone). ``mindspace mcp`` serves one
assistant over stdio; ``mindspace serve`` mounts the streamable-HTTP transport at
``/v1/assistants/{key}/mcp`` behind the API's tokens. See docs/mcp.md.
"""

from __future__ import annotations

from mindspace.hosts.mcp.server import (
    CATEGORY_META_KEY,
    RESOURCES,
    AssistantFor,
    ResourceName,
    build_server,
    resource_uri,
)
from mindspace.hosts.mcp.stdio import serve_stdio

__all__ = [
    "CATEGORY_META_KEY",
    "RESOURCES",
    "AssistantFor",
    "ResourceName",
    "build_server",
    "resource_uri",
    "serve_stdio",
]
