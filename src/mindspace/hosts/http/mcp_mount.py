"""The MCP streamable-HTTP transport at ``/v1/assistants/{key}/mcp``, behind the API's tokens.

Each assistant is its own MCP endpoint. Every request is checked like the API's routes
(:mod:`mindspace.hosts.http.auth`): without a token the policy knows, 401; a token that
may not use ``key``, 403 (whether or not the assistant exists); then 404 for an assistant
that is not there. Only then does the SDK's session manager see the request, with the
authorised key in the ASGI scope, where the handlers read it back per message.

The transport is stateless with JSON responses: each POST stands alone, so there are
no sessions to bind to a token and nothing outlives a request.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp.server import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INVALID_REQUEST
from starlette.datastructures import Headers
from starlette.types import Receive, Scope, Send

from mindspace.engine import Assistant
from mindspace.errors import AssistantNotFoundError
from mindspace.hosts.http.auth import ASSISTANT_KEY_PATTERN
from mindspace.hosts.http.errors import error_body, send_json
from mindspace.hosts.http.hub import AssistantHub
from mindspace.hosts.http.settings import TokenPolicy
from mindspace.hosts.mcp import build_server

__all__ = ["MCP_PATH", "McpMount"]

MCP_PATH = "/v1/assistants/{key}/mcp"
"""Where each assistant's MCP endpoint is (POST JSON-RPC, streamable HTTP)."""

_SCOPE_KEY = "mindspace.assistant"
_KEY = re.compile(ASSISTANT_KEY_PATTERN)
_CHALLENGE = (b"www-authenticate", b'Bearer realm="mindspace"')
# An open API (no tokens) only listens on loopback; a page elsewhere must not reach it
# through a rebound DNS name.
_LOOPBACK = TransportSecuritySettings(
    enable_dns_rebinding_protection=True,
    allowed_hosts=["127.0.0.1", "127.0.0.1:*", "localhost", "localhost:*", "[::1]", "[::1]:*"],
    allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
)


def _approval_hint(key: str, approval_id: str) -> str:
    return (
        f"An operator approves it with POST /v1/assistants/{key}/approvals/{approval_id}/approve "
        "(or rejects it with .../reject), or in the dashboard's approvals panel; the "
        "assistant is told the outcome on its next tick."
    )


class McpMount:
    """The ASGI app serving ``MCP_PATH``: the API's token checks, then the MCP transport.

    Args:
        hub: The served assistants.
        policy: The API's token policy.
    """

    def __init__(self, hub: AssistantHub, policy: TokenPolicy) -> None:
        self.hub = hub
        self.policy = policy
        self.server = build_server(
            self._assistant_for,
            approval_hint=_approval_hint,
            requested_by="an MCP client over HTTP",
        )
        self.manager: StreamableHTTPSessionManager | None = None

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        """The transport's lifetime; the app's lifespan enters it (a fresh one each time)."""
        manager = StreamableHTTPSessionManager(
            app=self.server,
            stateless=True,
            json_response=True,
            security_settings=_LOOPBACK if self.policy.open else None,
        )
        async with manager.run():
            self.manager = manager
            try:
                yield
            finally:
                self.manager = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        key = str(scope.get("path_params", {}).get("key", ""))
        refusal = self._refusal(scope, key)
        if refusal is not None:
            status, body, headers = refusal
            await send_json(send, status, body, headers)
            return
        if self.manager is None:
            body = error_body("The MCP transport is not running", "Retry once the server started.")
            await send_json(send, 503, body)
            return
        await self.manager.handle_request({**scope, _SCOPE_KEY: key}, receive, send)

    def _refusal(
        self, scope: Scope, key: str
    ) -> tuple[int, dict[str, Any], list[tuple[bytes, bytes]]] | None:
        if not self.policy.open:
            token = _bearer(scope)
            if token is None:
                return 401, error_body("This API needs a bearer token", _TOKEN_HINT), [_CHALLENGE]
            grant = self.policy.grant_for(token)
            if grant is None:
                return 401, error_body("The bearer token is not valid", _TOKEN_HINT), [_CHALLENGE]
            if not grant.allows(key):
                return (
                    403,
                    error_body(
                        f"This token may not use assistant {key!r}",
                        "Use a token whose MINDSPACE_API_TOKENS entry names this assistant, "
                        "or '*'.",
                    ),
                    [],
                )
        if not _KEY.match(key):
            return (
                422,
                error_body(
                    f"{key!r} is not an assistant key",
                    "Keys are a letter or digit, then letters, digits, '_', '.', '-' (64 at most).",
                ),
                [],
            )
        try:
            self.hub.get(key)
        except AssistantNotFoundError as exc:
            return 404, error_body(exc.error, exc.suggestion), []
        return None

    def _assistant_for(self, ctx: ServerRequestContext[Any, Any]) -> Assistant:
        request = ctx.request
        key = request.scope.get(_SCOPE_KEY) if request is not None else None
        if not isinstance(key, str):  # only reachable through the checks above
            raise MCPError(INVALID_REQUEST, f"Call the MCP endpoint at {MCP_PATH}.")
        return self.hub.get(key)


_TOKEN_HINT = "Send 'Authorization: Bearer <token>' with a token from MINDSPACE_API_TOKEN(S)."


def _bearer(scope: Scope) -> str | None:
    header = Headers(scope=scope).get("authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None
