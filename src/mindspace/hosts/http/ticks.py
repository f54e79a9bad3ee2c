"""Recent ticks for the dashboard's context-window viewer: a bounded ring per assistant.

A :class:`~mindspace.engine.tick.TickResult` lives only in memory, so the server keeps
the last ``MINDSPACE_API_TICK_HISTORY`` (20) ticks it ran for each assistant, turned
into JSON: each prompt component with its token count and content, the composed
execution pattern with ``source_layers``, the tool calls, the reply. Idle ticks are not
kept. The ring is lost when the server stops; ticks run by other processes are not in it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import asdict
from typing import Any

from mindspace.context.assembly import AssembledPrompt
from mindspace.engine.loop import LoopResult
from mindspace.engine.tick import TickResult

__all__ = ["MAX_CONTENT_CHARS", "TickLog", "tick_record", "tick_summary"]

MAX_CONTENT_CHARS = 20_000
"""Longest component content or tool result text kept per tick record."""


def _clip(text: str | None, limit: int = MAX_CONTENT_CHARS) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit:,} more characters not kept]"


def tick_record(number: int, at: str, result: TickResult) -> dict[str, Any]:
    """The JSON form of one tick, with everything the context viewer shows."""
    record: dict[str, Any] = {
        "number": number,
        "at": at,
        "kind": result.kind,
        "status": result.status,
        "event_id": result.event_id,
        "context_type": result.context_type,
        "reply": result.reply,
        "reply_target": result.reply_target,
        "outcome": result.outcome,
        "cut": result.cut,
        "error": result.error,
        "notes": list(result.notes),
        "ambient_buffered": result.ambient_buffered,
        "prompt": None,
        "pattern": None,
        "loop": None,
        "sleep": result.sleep.to_dict() if result.sleep is not None else None,
    }
    if result.prompt is not None:
        record["prompt"] = _prompt(result.prompt)
    if result.pattern is not None:
        record["pattern"] = asdict(result.pattern)
    if result.loop is not None:
        record["loop"] = _loop(result.loop)
    # Sessions run inside the tick (pre-compaction extraction, reflection while asleep)
    # in their own context types, each with its prompt components.
    side = [*result.sessions, *(result.sleep.sessions if result.sleep is not None else [])]
    record["sessions"] = [
        {
            "context_type": s.context_type,
            "reply": _clip(s.loop.reply),
            "pattern": asdict(s.pattern),
            "prompt": _prompt(s.prompt),
            "loop": _loop(s.loop),
        }
        for s in side
    ]
    return record


def tick_summary(record: dict[str, Any]) -> dict[str, Any]:
    """A tick record without the bulky parts (component contents, tool results)."""
    prompt = record.get("prompt")
    loop = record.get("loop")
    return {
        "number": record["number"],
        "at": record["at"],
        "kind": record["kind"],
        "status": record["status"],
        "event_id": record["event_id"],
        "context_type": record["context_type"],
        "reply": record["reply"],
        "outcome": record["outcome"],
        "error": record["error"],
        "tokens": prompt["estimated_tokens"] if prompt else None,
        "tool_calls": [{"name": c["name"], "ok": c["ok"]} for c in loop["calls"]] if loop else [],
        "sleep_phase": (record["sleep"] or {}).get("phase"),
        "sessions": [s["context_type"] for s in record.get("sessions", [])],
    }


class TickLog:
    """The last ``size`` non-idle ticks of each assistant, newest last.

    Args:
        size: Ticks kept per assistant.
    """

    def __init__(self, size: int = 20) -> None:
        self.size = size
        self._rings: dict[str, deque[dict[str, Any]]] = {}
        self._numbers: dict[str, int] = {}

    def add(self, key: str, at: str, result: TickResult) -> dict[str, Any] | None:
        """Keep ``result`` (unless idle); returns its record."""
        if result.kind == "idle":
            return None
        number = self._numbers.get(key, 0) + 1
        self._numbers[key] = number
        record = tick_record(number, at, result)
        self._rings.setdefault(key, deque(maxlen=self.size)).append(record)
        return record

    def recent(self, key: str) -> list[dict[str, Any]]:
        """The kept ticks of ``key``, newest first."""
        return list(reversed(self._rings.get(key, ())))

    def get(self, key: str, number: int) -> dict[str, Any] | None:
        """One kept tick by its number, or None when it is gone or never existed."""
        return next((r for r in self._rings.get(key, ()) if r["number"] == number), None)


def _prompt(prompt: AssembledPrompt) -> dict[str, Any]:
    components = [
        {
            "id": c.id,
            "key": c.key,
            "tokens": c.tokens,
            "truncated": c.truncated,
            "content": _clip(c.content),
        }
        for c in prompt.components
    ]
    return {
        "estimated_tokens": prompt.estimated_tokens,
        "component_tokens": sum(c.tokens for c in prompt.components),
        "message_count": len(prompt.messages),
        "components": components,
    }


def _loop(loop: LoopResult) -> dict[str, Any]:
    return {
        "stopped_by": loop.stopped_by,
        "iterations": loop.iterations,
        "recent_errors": loop.recent_errors,
        "calls": [
            {
                "iteration": c.iteration,
                "call_id": c.call_id,
                "name": c.name,
                "arguments": _clip(c.arguments),
                "ok": c.ok,
                "status": c.status,
                "result": c.result,
            }
            for c in loop.calls
        ],
    }
