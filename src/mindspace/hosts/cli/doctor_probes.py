"""The probes of ``mindspace doctor`` that ask the server itself rather than the model.

* The *running* context window: llama.cpp's ``/props`` (``n_ctx``) and ``/slots``,
  Ollama's ``/api/show`` (``num_ctx``); vLLM's ``max_model_len`` comes with
  ``/v1/models``. A model's training context (llama.cpp's ``meta.n_ctx_train``) is
  only a fallback: a server started with ``-c 2048`` accepts 2,048 tokens, whatever
  the model was trained on.
* Whether offered tools reach the model at all: a tool whose description holds a word
  the model cannot know otherwise, and the same request without the tool, whose
  prompt token counts must differ (``llama-server --jinja`` with a template that has no
  tool section drops ``tools`` silently).
* Whether a text tool call counts: only one that parses and names the offered tool.
* Prompt-processing speed, from a long prompt the server has not cached, and the
  timeout that follows from it.
"""

from __future__ import annotations

import json
import math
import secrets
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from mindspace.llm.parsing.text_calls import scan_text_calls
from mindspace.llm.port import LLMResponse, Message

__all__ = [
    "TOOL_SECTION_CHECK",
    "Delivery",
    "ServerFacts",
    "delivery",
    "secret_tool",
    "server_facts",
    "speed_prompt",
    "text_call_names",
    "timeout_for",
]

Delivery = Literal["delivered", "dropped", "unclear"]

TOOL_SECTION_CHECK = (
    "The chat template has no tool section, so the server dropped the tools before the "
    "model saw them (llama.cpp: start llama-server with --jinja and a model whose "
    "template supports tools, or --chat-template-file with one that does)."
)


@dataclass
class ServerFacts:
    """What the server says about itself beyond ``/v1/models``."""

    context_window: int | None = None
    source: str = ""
    template_supports_tools: bool | None = None
    """llama.cpp's ``chat_template_caps.supports_tools``, when it says."""


async def server_facts(base_url: str, model: str, wait: float = 10.0) -> ServerFacts:
    """The running context window (and llama.cpp's tool caps) from the server's own routes."""
    root = base_url.rstrip("/").removesuffix("/v1")
    facts = ServerFacts()
    async with httpx.AsyncClient(timeout=wait) as client:
        props = await _json(client, "GET", f"{root}/props")
        if isinstance(props, dict):
            settings = props.get("default_generation_settings")
            n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
            n_ctx = n_ctx if isinstance(n_ctx, int) else props.get("n_ctx")
            if isinstance(n_ctx, int) and n_ctx > 0:
                facts.context_window, facts.source = n_ctx, "llama.cpp /props n_ctx"
            caps = props.get("chat_template_caps")
            if isinstance(caps, dict) and isinstance(caps.get("supports_tools"), bool):
                facts.template_supports_tools = caps["supports_tools"]
        if facts.context_window is None:
            slots = await _json(client, "GET", f"{root}/slots")
            first = slots[0] if isinstance(slots, list) and slots else None
            n_ctx = first.get("n_ctx") if isinstance(first, dict) else None
            if isinstance(n_ctx, int) and n_ctx > 0:
                facts.context_window, facts.source = n_ctx, "llama.cpp /slots n_ctx"
        if facts.context_window is None:
            shown = await _json(client, "POST", f"{root}/api/show", {"model": model})
            num_ctx = _ollama_num_ctx(shown)
            if num_ctx is not None:
                facts.context_window, facts.source = num_ctx, "Ollama /api/show num_ctx"
    return facts


async def _json(
    client: httpx.AsyncClient, method: str, url: str, body: dict[str, Any] | None = None
) -> Any:
    try:
        answer = await client.request(method, url, json=body)
        return answer.json() if answer.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None  # a route this server does not have


def _ollama_num_ctx(shown: Any) -> int | None:
    if not isinstance(shown, dict):
        return None
    for line in str(shown.get("parameters") or "").splitlines():
        key, _, value = line.strip().partition(" ")
        if key == "num_ctx" and value.strip().isdigit():
            return int(value.strip())
    return None


# Keys servers use for the context window in their /v1/models entries: OpenRouter and
# LM Studio (context_length), vLLM (max_model_len), llama.cpp (meta.n_ctx_train).
_CONTEXT_KEYS = ("context_length", "max_model_len", "context_window", "max_context_length")


def context_window_of(entry: dict[str, Any]) -> tuple[int, str] | None:
    """The context window a ``/v1/models`` entry names, and the key it came from."""
    for key in _CONTEXT_KEYS:
        value = entry.get(key)
        if isinstance(value, int) and value > 0:
            return value, key
    meta = entry.get("meta")
    if isinstance(meta, dict):
        for key in ("n_ctx_train", "n_ctx"):
            value = meta.get(key)
            if isinstance(value, int) and value > 0:
                return value, f"meta.{key}"
    return None


def json_output(text: str | None) -> Literal["json", "fenced", "none"]:
    """Whether ``text`` is a JSON object, one in a fenced block, or neither."""
    body = (text or "").strip()
    for candidate, kind in ((body, "json"), (_unfence(body), "fenced")):
        try:
            if isinstance(json.loads(candidate), dict):
                return "json" if kind == "json" else "fenced"
        except ValueError:
            continue
    return "none"


def _unfence(text: str) -> str:
    if text.startswith("```") and text.endswith("```"):
        inner = text[3:-3]
        return inner.split("\n", 1)[1] if "\n" in inner else inner
    return text


def recommended_timeout(slowest_seconds: float) -> int:
    """The timeout without a measured prompt speed: from the slowest probe."""
    # Probe replies are a few tokens; a full reply is up to llm_max_tokens, so allow
    # about twenty times the slowest probe, in steps of 30 s, within 120-600 s.
    return max(120, min(600, math.ceil(slowest_seconds * 20 / 30) * 30))


def secret_tool(name: str) -> tuple[dict[str, Any], str]:
    """A harmless tool whose description holds a word the model cannot know otherwise."""
    word = "zephyr" + secrets.token_hex(3)
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": f"Report the weather in a city. The secret word is {word}.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }, word


def delivery(word: str, with_tool: LLMResponse, without: LLMResponse | None) -> Delivery:
    """Whether the tool reached the model: it quoted the word, or the prompt grew."""
    if word in (with_tool.text or "") or any(word in c.arguments for c in with_tool.tool_calls):
        return "delivered"
    if with_tool.usage is None or without is None or without.usage is None:
        return "unclear"
    grown = with_tool.usage.prompt_tokens - without.usage.prompt_tokens
    return "delivered" if grown >= 10 else "dropped"


def text_call_names(text: str | None, offered: str) -> bool:
    """Whether ``text`` holds a tool call that parses and names ``offered``."""
    scan = scan_text_calls(text or "", [offered])
    return any(c.name == offered and c.arguments is not None and not c.problem for c in scan.calls)


def speed_prompt(tokens: int) -> list[Message]:
    """About ``tokens`` tokens the server cannot have cached (a fresh word opens them)."""
    # A cache matches prefixes: one fresh word first makes everything after it uncached.
    filler = " ".join(f"Barrel {n} is full." for n in range(tokens // 6))
    return [Message("user", f"{secrets.token_hex(4)}. {filler}\nReply with one word: done.")]


def timeout_for(
    prompt_tokens: int, prompt_per_second: float, reply_tokens: int, reply_per_second: float
) -> int:
    """Seconds for a cold turn (no cached prefix) with room to spare, in steps of 30."""
    seconds = prompt_tokens / prompt_per_second + reply_tokens / max(reply_per_second, 1.0)
    return max(120, min(1800, math.ceil(seconds * 1.5 / 30) * 30))
