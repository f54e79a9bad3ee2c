"""How much of a chat-completions request repeats the previous one: the cacheable prefix.

A provider's prompt cache (llama.cpp's ``cache_prompt``, vLLM's prefix caching, OpenAI's
automatic caching) reuses the longest prefix of the rendered prompt that it has seen.
:func:`request_text` renders a request body the way chat templates order it - the
first system message, then the tool definitions, then every other message - and
:func:`shared_prefix` measures, in estimated tokens, how much of one request's
rendering the previous request's rendering already began with. Used by the tests of
the prompt layout and by ``bench/prompt_prefix.py``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from mindspace.tokens import estimate_tokens

__all__ = ["PrefixShare", "request_text", "shared_prefix", "shares"]


@dataclass(frozen=True)
class PrefixShare:
    """The part of a request that repeats the previous one."""

    shared_tokens: int
    prompt_tokens: int

    @property
    def share(self) -> float:
        """``shared_tokens / prompt_tokens`` (1.0 for an empty prompt)."""
        return self.shared_tokens / self.prompt_tokens if self.prompt_tokens else 1.0


def request_text(body: Mapping[str, Any]) -> str:
    """A request's messages and tools as one text, in a chat template's order."""
    messages: Sequence[Mapping[str, Any]] = body.get("messages") or []
    parts: list[str] = []
    rest = list(messages)
    if rest and rest[0].get("role") == "system":
        parts.append(_message(rest.pop(0)))
    if body.get("tools"):
        # Templates put the tools beside the system text; a change in the system text
        # therefore invalidates them too, which is what this order measures.
        parts.append("<tools>" + json.dumps(body["tools"], sort_keys=True) + "</tools>")
    parts += [_message(m) for m in rest]
    return "\n".join(parts)


def shared_prefix(previous: Mapping[str, Any], current: Mapping[str, Any]) -> PrefixShare:
    """How much of ``current`` begins exactly as ``previous`` did."""
    before, now = request_text(previous), request_text(current)
    # Character by character on purpose: a cache matches the rendered text exactly.
    common = os.path.commonprefix([before, now])  # noqa: RUF071
    return PrefixShare(estimate_tokens(common), estimate_tokens(now))


def shares(requests: Sequence[Mapping[str, Any]]) -> list[PrefixShare]:
    """The shared prefix of each request after the first with the one before it."""
    return [shared_prefix(a, b) for a, b in pairwise(requests)]


def _message(message: Mapping[str, Any]) -> str:
    text = f"<{message.get('role')}>{message.get('content') or ''}"
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        text += f"<call {function.get('name')}>{function.get('arguments')}"
    return text
