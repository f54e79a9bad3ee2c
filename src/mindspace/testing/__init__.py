"""Test helpers shipped with mindspace: a scripted chat-completions server with quirk modes."""

from mindspace.testing.chat_server import ChatCompletionsServer, Hold, Responder, Step
from mindspace.testing.quirks import Quirk, QuirkSettings

__all__ = ["ChatCompletionsServer", "Hold", "Quirk", "QuirkSettings", "Responder", "Step"]
