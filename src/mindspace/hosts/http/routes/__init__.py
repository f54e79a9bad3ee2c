"""The API's routers, one per area; each calls the hub and the views, never the store."""

from mindspace.hosts.http.routes.assistants import router as assistants_router
from mindspace.hosts.http.routes.control import router as control_router
from mindspace.hosts.http.routes.edits import router as edits_router
from mindspace.hosts.http.routes.events import router as events_router
from mindspace.hosts.http.routes.session import router as session_router
from mindspace.hosts.http.routes.state import router as state_router
from mindspace.hosts.http.routes.stream import router as stream_router
from mindspace.hosts.http.routes.tools import router as tools_router

__all__ = [
    "assistants_router",
    "control_router",
    "edits_router",
    "events_router",
    "session_router",
    "state_router",
    "stream_router",
    "tools_router",
]
