"""Test helpers shipped with mindspace: a scripted chat-completions server with quirk modes,
and a deliberately slow embedder."""

from mindspace.testing.chat_server import ChatCompletionsServer, Hold, Responder, Step
from mindspace.testing.quirks import Quirk, QuirkSettings
from mindspace.testing.slow_embedder import SlowEmbedder

__all__ = [
    "ChatCompletionsServer",
    "Hold",
    "Quirk",
    "QuirkSettings",
    "Responder",
    "SlowEmbedder",
    "Step",
]
