"""Running the application under uvicorn, with the loopback rule for open (tokenless) APIs."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import FastAPI

from mindspace.errors import ConfigError
from mindspace.hosts.http.settings import ServerSettings, TokenPolicy, is_loopback

__all__ = ["GRACEFUL_SHUTDOWN", "check_listen_address", "run_server"]

GRACEFUL_SHUTDOWN = 5
"""Seconds open requests (live streams) get to finish when the server stops."""


def check_listen_address(host: str, server: ServerSettings) -> TokenPolicy:
    """The token policy, once ``host`` may be served with it.

    Raises:
        ConfigError: ``host`` is not a loopback address and no token is configured, or a
            token setting is malformed.
    """
    policy = TokenPolicy.from_settings(server)
    if policy.open and not is_loopback(host):
        raise ConfigError(
            f"Refusing to listen on {host!r} without a token: anyone who can reach it could "
            "use every assistant. Set MINDSPACE_API_TOKEN (or MINDSPACE_API_TOKENS), or "
            "listen on 127.0.0.1."
        )
    return policy


def run_server(
    app: FastAPI,
    host: str,
    port: int,
    server: ServerSettings,
    *,
    log_level: str = "info",
    on_start: Callable[[str], None] | None = None,
) -> None:
    """Serve ``app`` on ``host``:``port`` until interrupted.

    Raises:
        ConfigError: see :func:`check_listen_address`.
    """
    import uvicorn  # the server extra; imported here so the CLI starts without it

    check_listen_address(host, server)
    shown = f"[{host}]" if ":" in host else host
    if on_start is not None:
        on_start(f"http://{shown}:{port}")
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level=log_level,
        proxy_headers=False,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN,
    )
