"""The HTTP host: a FastAPI application with the ``/v1`` API and the dashboard.

Needs the ``server`` extra: ``pip install -e '.[server]'`` in a mindspace clone (or
``pip install 'mindspace[server] @ git+<URL>'`` without one).
"""

from mindspace.hosts.http.app import build_hub, create_app
from mindspace.hosts.http.hub import AssistantHub
from mindspace.hosts.http.settings import ServerSettings, TokenPolicy

__all__ = [
    "AssistantHub",
    "ServerSettings",
    "TokenPolicy",
    "build_hub",
    "create_app",
]
