"""Test helpers shipped with mindspace: a scripted chat-completions server."""

from mindspace.testing.chat_server import ChatCompletionsServer, Hold, Step

__all__ = ["ChatCompletionsServer", "Hold", "Step"]
