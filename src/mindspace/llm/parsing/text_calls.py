"""Tool calls a model wrote as text instead of through the native tool interface.

Many local models (and servers that render tools only in the prompt) answer a tool call
in the message content. :func:`scan_text_calls` finds them in these forms:

* ``<tool_call>{...}</tool_call>`` tags (Hermes, Qwen); an unclosed tag runs to the end;
* a fenced block, ```` ```json ```` or ```` ```tool_call ```` (or no language), holding one
  call object or a list of them;
* a bare JSON object (or a list of objects) in the text.

A call object is ``{"name": ..., "arguments": {...}}``; ``parameters``, ``args``,
``input`` or ``tool_input`` may stand for ``arguments``, the object may be wrapped as
``{"function": {...}}`` (chat-completions style) and ``tool`` may stand for ``name``.
Arguments may also be a JSON string holding the object (double-encoded).

Tags and fences are always tool-call syntax: whatever is inside them is a call or a
:class:`TextCall` with a ``problem``. A bare object counts only when it has the shape of a
call (a name and an arguments key, or a ``function`` wrapper); a bare ``{"name": ...}``
without arguments is left to the caller, which accepts it only when the name is a tool.
Text that starts like a call (``{"name": "...`` or ``{"function":``) but is not valid
JSON is reported as a problem, so a truncated call is never mistaken for prose.

The module is pure: no vendor imports, no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["TextCall", "TextCallForm", "TextScan", "scan_text_calls"]

TextCallForm = Literal["tag", "fence", "json"]

_ARGUMENT_KEYS = ("arguments", "parameters", "args", "input", "tool_input")
_NAME_KEYS = ("name", "tool", "tool_name", "function_name")
_TAG = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(
    r"```[ \t]*(json|tool_call|tool|function_call)?[ \t]*\n(.*?)(?:```|$)", re.DOTALL | re.I
)
# Single quotes too: a Python-style dict is a call gone wrong, not prose.
_CALL_START = re.compile(r"""[\[{]\s*\{?\s*["'](?:name|tool|tool_name|function)["']\s*:""")
_NAME_IN_TEXT = re.compile(
    r"""["'](?:name|tool|tool_name)["']\s*:\s*["']([A-Za-z0-9_.\-]{1,64})["']"""
)
_MAX_EXCERPT = 120


@dataclass(frozen=True)
class TextCall:
    """One tool call found in text.

    ``arguments`` is the parsed argument object when the call is usable; otherwise
    ``problem`` says what is wrong (in words the model can act on) and ``name`` is the
    name that could be read, if any.
    """

    form: TextCallForm
    name: str | None
    arguments: dict[str, Any] | None
    raw: str
    problem: str | None = None
    explicit: bool = True
    """False for a bare ``{"name": ...}`` without an arguments key (a call only if named)."""


@dataclass(frozen=True)
class TextScan:
    """What :func:`scan_text_calls` found: the calls, and the text around them."""

    calls: tuple[TextCall, ...] = ()
    prose: str = ""
    spans: tuple[tuple[int, int], ...] = field(default=())

    @property
    def found(self) -> bool:
        """Whether anything in the text is (or tried to be) a tool call."""
        return bool(self.calls)


def scan_text_calls(text: str, tool_names: Collection[str] = ()) -> TextScan:
    """Find tool calls written in ``text``; the prose is the text with them removed.

    Args:
        text: The model's message content.
        tool_names: Names of real tools; a bare ``{"name": ...}`` object without an
            arguments key is a call only when it names one of them.
    """
    if not text or not any(ch in text for ch in "{<`["):
        return TextScan(prose=text.strip() if text else "")
    found: list[tuple[int, int, list[TextCall]]] = []
    for match in _TAG.finditer(text):
        found.append((match.start(), match.end(), _parse_block(match.group(1), "tag")))
    for match in _FENCE.finditer(text):
        if _inside(match.start(), found):
            continue
        body = match.group(2)
        language = (match.group(1) or "").lower()
        if language in ("tool_call", "tool", "function_call") or _CALL_START.search(body):
            found.append((match.start(), match.end(), _parse_block(body, "fence")))
    position = 0
    while True:
        hit = _CALL_START.search(text, position)
        if hit is None:
            break
        start = hit.start()
        if _inside(start, found):
            position = start + 1
            continue
        end, calls = _parse_bare(text, start)
        calls = [c for c in calls if c.explicit or c.name in tool_names]
        if calls:
            found.append((start, end, calls))
        position = max(end, start + 1)
    found.sort(key=lambda item: item[0])
    calls = [call for _, _, group in found for call in group]
    spans = tuple((start, end) for start, end, _ in found)
    prose_parts, last = [], 0
    for start, end in spans:
        prose_parts.append(text[last:start])
        last = max(last, end)
    prose_parts.append(text[last:])
    prose = re.sub(r"\n{3,}", "\n\n", "".join(prose_parts)).strip()
    return TextScan(tuple(calls), prose, spans)


def _inside(position: int, found: list[tuple[int, int, list[TextCall]]]) -> bool:
    return any(start <= position < end for start, end, _ in found)


def _parse_block(body: str, form: TextCallForm) -> list[TextCall]:
    raw = body.strip()
    if not raw:
        return [TextCall(form, None, None, raw, "the tool-call block is empty")]
    try:
        value = json.loads(raw)
    except (json.JSONDecodeError, RecursionError) as exc:
        cut = raw[0] in "{[" and not _balanced_end(raw, 0)[1]
        return [_malformed(form, raw, exc, truncated=cut)]
    return _calls_from_value(value, form, raw, bare=False)


def _parse_bare(text: str, start: int) -> tuple[int, list[TextCall]]:
    try:
        value, end = json.JSONDecoder().raw_decode(text, start)
    except (json.JSONDecodeError, RecursionError) as exc:
        end, closed = _balanced_end(text, start)
        return end, [_malformed("json", text[start:end], exc, truncated=not closed)]
    return end, _calls_from_value(value, "json", text[start:end], bare=True)


def _calls_from_value(value: Any, form: TextCallForm, raw: str, *, bare: bool) -> list[TextCall]:
    items = value if isinstance(value, list) else [value]
    calls = []
    for item in items:
        call = _call_from_object(item, form, raw)
        if call is None:
            if bare:
                continue  # ordinary JSON in prose, not a call
            call = TextCall(
                form,
                None,
                None,
                raw,
                "the tool-call block does not hold a call object "
                '{"name": "<tool>", "arguments": {...}}',
            )
        calls.append(call)
    return calls


def _call_from_object(item: Any, form: TextCallForm, raw: str) -> TextCall | None:
    if not isinstance(item, dict):
        return None
    wrapped = item.get("function")
    if isinstance(wrapped, dict):
        item = {**wrapped, **{k: v for k, v in item.items() if k in _ARGUMENT_KEYS}}
    elif isinstance(wrapped, str) and "name" not in item:
        item = {**item, "name": wrapped}
    name = next((item[k] for k in _NAME_KEYS if isinstance(item.get(k), str)), None)
    if name is None:
        return None
    key = next((k for k in _ARGUMENT_KEYS if k in item), None)
    if key is None:
        return TextCall(form, name, {}, raw, explicit=form != "json" or "function" in item)
    arguments = item[key]
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (json.JSONDecodeError, RecursionError):
            return TextCall(form, name, None, raw, f"the arguments of {name!r} are not JSON")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        kind = type(arguments).__name__
        return TextCall(
            form, name, None, raw, f"the arguments of {name!r} are a {kind}, not an object"
        )
    return TextCall(form, name, arguments, raw)


def _malformed(form: TextCallForm, raw: str, exc: Exception, *, truncated: bool) -> TextCall:
    named = _NAME_IN_TEXT.search(raw)
    if isinstance(exc, RecursionError):
        why = "it is nested too deeply"
    elif truncated:
        why = "it ends before the JSON is complete (cut off?)"
    elif isinstance(exc, json.JSONDecodeError):
        why = exc.msg
    else:  # pragma: no cover - only the two errors above are caught
        why = str(exc)
    excerpt = raw if len(raw) <= _MAX_EXCERPT else raw[: _MAX_EXCERPT - 3] + "..."
    return TextCall(
        form,
        named.group(1) if named else None,
        None,
        raw,
        f"the tool call written as text is not valid JSON: {why}: {excerpt!r}",
    )


def _balanced_end(text: str, start: int) -> tuple[int, bool]:
    """Where the bracketed value at ``start`` ends, and whether it closes before the text ends."""
    depth, in_string, escaped = 0, False, False
    for index in range(start, len(text)):
        ch = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return index + 1, True
    return len(text), False
