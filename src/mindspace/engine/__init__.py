"""The engine's host surface: everything a host may use of the engine, in one ``__all__``.

Hosts (the CLI, the HTTP server, Evennia, the MCP server) import the engine from here
and from nowhere else: the :class:`Assistant` facade, its read models' value types and
the tick scheduling rules. The engine's parts behind the facade (the core, the tool
executor, the ticker, the sessions, the sleep cycle) are private to it. An
import-linter contract (``hosts-engine-surface`` in pyproject.toml, with a violation
test in tests/test_architecture.py) keeps hosts on this surface. Hosts get assistants
from the composition root, :class:`mindspace.runtime.Runtime`.
"""

from mindspace.engine.approvals import request_approval
from mindspace.engine.assistant import Assistant, assistant_tools
from mindspace.engine.edits import memory_view
from mindspace.engine.history import Actor
from mindspace.engine.loop import LoopResult
from mindspace.engine.modes import OperatingMode, SleepSchedule
from mindspace.engine.night.result import SleepTickResult
from mindspace.engine.notices import Notice
from mindspace.engine.operator_edits import OPERATOR_EDITS, OperatorEdit
from mindspace.engine.prompting import PromptInputs, Provider
from mindspace.engine.records import Approval, Event
from mindspace.engine.redaction import Redactor
from mindspace.engine.scheduler import AsyncTickDriver, TickDispatch, TickPolicy
from mindspace.engine.session_edits import SessionItemEdits, SessionItemKind
from mindspace.engine.tick import TickResult
from mindspace.engine.views import event_view
from mindspace.engine.world import World, WorldBase, WorldTool, required_text

__all__ = [
    "OPERATOR_EDITS",
    "Actor",
    "Approval",
    "Assistant",
    "AsyncTickDriver",
    "Event",
    "LoopResult",
    "Notice",
    "OperatingMode",
    "OperatorEdit",
    "PromptInputs",
    "Provider",
    "Redactor",
    "SessionItemEdits",
    "SessionItemKind",
    "SleepSchedule",
    "SleepTickResult",
    "TickDispatch",
    "TickPolicy",
    "TickResult",
    "World",
    "WorldBase",
    "WorldTool",
    "assistant_tools",
    "event_view",
    "memory_view",
    "request_approval",
    "required_text",
]
