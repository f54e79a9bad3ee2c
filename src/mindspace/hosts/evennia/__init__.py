"""mindspace inside an Evennia game, shaped like an Evennia contrib.

Install with the ``evennia`` extra (``pip install -e 'path/to/mindspace[evennia]'``), then see
``README.md`` here or ``docs/evennia.md``: an assistant character that hears speech,
whispers, poses, arrivals and departures, answers through any OpenAI-compatible
endpoint, remembers across reloads, and an ``assistant`` command for Builders.

The names below are imported on first use: the typeclasses and commands need Django's
settings (Evennia sets them up before it loads a game's modules), while the bridge, the
perception rules and the test helpers (``mindspace.hosts.evennia.testing``) do not.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mindspace.hosts.evennia.bridge import Bridge, BridgeClosedError, BridgeError, get_bridge
    from mindspace.hosts.evennia.commands import (
        AssistantAdminCmdSet,
        AssistantCmdSet,
        CmdAssistant,
    )
    from mindspace.hosts.evennia.config import AssistantConfig, EvenniaOptions, resolve_config
    from mindspace.hosts.evennia.outcomes import TickReport
    from mindspace.hosts.evennia.perception import Perceived
    from mindspace.hosts.evennia.runtime import AssistantRuntime, runtime_for
    from mindspace.hosts.evennia.talk import CmdTalk
    from mindspace.hosts.evennia.tools import (
        ExecuteCommandTool,
        InspectLocationTool,
        MoveTool,
        WhisperTool,
    )
    from mindspace.hosts.evennia.typeclasses import (
        AssistantCharacter,
        AssistantCharacterMixin,
        AssistantTickerScript,
    )
    from mindspace.hosts.evennia.world import EvenniaWorld

__all__ = [
    "AssistantAdminCmdSet",
    "AssistantCharacter",
    "AssistantCharacterMixin",
    "AssistantCmdSet",
    "AssistantConfig",
    "AssistantRuntime",
    "AssistantTickerScript",
    "Bridge",
    "BridgeClosedError",
    "BridgeError",
    "CmdAssistant",
    "CmdTalk",
    "EvenniaOptions",
    "EvenniaWorld",
    "ExecuteCommandTool",
    "InspectLocationTool",
    "MoveTool",
    "Perceived",
    "TickReport",
    "WhisperTool",
    "get_bridge",
    "resolve_config",
    "runtime_for",
]

_EXPORTS = {
    "AssistantAdminCmdSet": "commands",
    "AssistantCharacter": "typeclasses",
    "AssistantCharacterMixin": "typeclasses",
    "AssistantCmdSet": "commands",
    "AssistantConfig": "config",
    "AssistantRuntime": "runtime",
    "AssistantTickerScript": "typeclasses",
    "Bridge": "bridge",
    "BridgeClosedError": "bridge",
    "BridgeError": "bridge",
    "CmdAssistant": "commands",
    "CmdTalk": "talk",
    "EvenniaOptions": "config",
    "EvenniaWorld": "world",
    "ExecuteCommandTool": "tools",
    "InspectLocationTool": "tools",
    "MoveTool": "tools",
    "Perceived": "perception",
    "TickReport": "outcomes",
    "WhisperTool": "tools",
    "get_bridge": "bridge",
    "resolve_config": "config",
    "runtime_for": "runtime",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
