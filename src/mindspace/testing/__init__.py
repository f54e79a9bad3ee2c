"""Test helpers shipped with mindspace: scripted chat-completions and Messages-API servers
with quirk modes, and a deliberately slow embedder."""

from mindspace.testing.chat_server import ChatCompletionsServer, Hold, Responder, Step
from mindspace.testing.messages_server import MessagesServer
from mindspace.testing.quirks import Quirk, QuirkSettings
from mindspace.testing.slow_embedder import SlowEmbedder

__all__ = [
    "ChatCompletionsServer",
    "Hold",
    "MessagesServer",
    "Quirk",
    "QuirkSettings",
    "Responder",
    "SlowEmbedder",
    "Step",
]
