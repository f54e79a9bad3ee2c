"""Recent ticks for the dashboard's context-window viewer: a bounded ring per assistant.

A :class:`~mindspace.engine.tick.TickResult` lives only in memory, so the server keeps
the last ``MINDSPACE_API_TICK_HISTORY`` (20) ticks it ran for each assistant, turned
into JSON: each prompt component with its token count and content, the composed
execution pattern with ``source_layers``, the tool calls, the reply, the layer-3
assessment, and the side sessions its tools ran (``goal_decompose``, sub-agents) or the
tick ran itself (``pre_compaction``; ``reflection`` and ``reflection_cont`` while
asleep), each with its own prompt, pattern and calls. Idle ticks are not
kept. The ring is lost when the server stops; ticks run by other processes are not in it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection
from dataclasses import asdict
from typing import Any

from mindspace.context.assembly import AssembledPrompt
from mindspace.context.patterns import ExecutionPattern
from mindspace.engine import LoopResult, Redactor, TickResult

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
    record.update(_session(result.prompt, result.pattern, result.loop))
    # Sessions the tick itself ran in other context types (pre-compaction extraction,
    # reflection while asleep), in the same shape as a loop's side sessions.
    ran = [*result.sessions, *(result.sleep.sessions if result.sleep is not None else [])]
    record["side_sessions"] = [
        {
            "context_type": side.context_type,
            "task": _clip(side.task),
            **_session(side.prompt, side.pattern, side.loop),
        }
        for side in ran
    ]
    return record


def _session(
    prompt: AssembledPrompt | None, pattern: ExecutionPattern | None, loop: LoopResult | None
) -> dict[str, Any]:
    """The prompt, pattern and loop of one session (a tick's, or a side session's)."""
    out: dict[str, Any] = {"prompt": None, "pattern": None, "loop": None}
    if prompt is not None:
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
        out["prompt"] = {
            "estimated_tokens": prompt.estimated_tokens,
            "component_tokens": sum(c.tokens for c in prompt.components),
            "message_count": len(prompt.messages),
            "components": components,
        }
    if pattern is not None:
        out["pattern"] = asdict(pattern)
    if loop is not None:
        out["loop"] = {
            "stopped_by": loop.stopped_by,
            "iterations": loop.iterations,
            "recent_errors": loop.recent_errors,
            # The provider's counts over the loop's requests; cached: read from its cache.
            "usage": {
                "requests": len(loop.usages),
                "prompt_tokens": loop.prompt_tokens,
                "cached_tokens": loop.cached_tokens,
            },
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
            "assessment": loop.assessment,
            "assessment_problem": loop.assessment_problem,
            # Sessions its tools ran: goal_decompose, sub-agents (docs/delegation.md).
            "side_sessions": [
                {
                    "context_type": side.context_type,
                    "task": _clip(side.task),
                    **_session(side.prompt, side.pattern, side.loop),
                }
                for side in loop.side_sessions
            ],
        }
    return out


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
        "side_sessions": [s["context_type"] for s in record.get("side_sessions", [])],
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

    def forget(self, key: str, redactor: Redactor, events: Collection[str] = ()) -> int:
        """Blank a forgotten entity's words in the kept ticks of ``key``.

        Ticks that answered the entity (one of its ``events``, or privately) go whole:
        their prompt is its conversation. Others keep their shape with copies of its
        words replaced.

        Returns:
            How many ticks were dropped or changed.
        """
        ring = self._rings.get(key)
        if not ring:
            return 0
        kept: list[dict[str, Any]] = []
        changed = 0
        for record in ring:
            if record.get("event_id") in events or record.get("reply_target") == redactor.entity:
                changed += 1
                continue
            redacted, hits = redactor.value(record)
            changed += bool(hits)
            kept.append(redacted)
        self._rings[key] = deque(kept, maxlen=self.size)
        return changed
