"""The input boundary for text and JSON: one rule for every way text enters mindspace.

Text reaches an assistant from tool arguments (Python, the CLI, HTTP, the model), HTTP
bodies and host events. All of it passes the same two checks here before anything is
stored:

* **valid Unicode**: a lone surrogate (``"\\ud800"``) is a Python ``str`` but not text; it
  cannot be encoded as UTF-8, so SQLite, JSON responses and LLM requests fail on it
  later, after it was stored. It is refused at the door instead.
* **a maximum length** per field (see the table in docs/configuration.md); no string
  anywhere is longer than :data:`MAX_TEXT_CHARS`.

JSON nesting is limited to :data:`MAX_JSON_DEPTH` levels, checked by
:func:`json_depth_exceeds` *before* parsing: Python's ``json`` module recurses, so a body
nested 100,000 deep would otherwise raise ``RecursionError`` inside the parser.

The functions return a description of the problem (or None) rather than raise, so each
boundary raises its own error type: tools an ``InvalidArgumentsError`` result, HTTP a 422,
the CLI exit code 2.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# The limits live in the one table of mindspace.limits; they are re-exported here, where
# the input boundary has always offered them.
from mindspace.limits import (
    MAX_ID_CHARS,
    MAX_JSON_DEPTH,
    MAX_LABEL_CHARS,
    MAX_LABELS,
    MAX_LIST_ITEMS,
    MAX_SHORT_TEXT_CHARS,
    MAX_TEXT_CHARS,
)

__all__ = [
    "MAX_ID_CHARS",
    "MAX_JSON_DEPTH",
    "MAX_LABELS",
    "MAX_LABEL_CHARS",
    "MAX_LIST_ITEMS",
    "MAX_SHORT_TEXT_CHARS",
    "MAX_TEXT_CHARS",
    "find_invalid_text",
    "invalid_unicode",
    "json_depth_exceeds",
    "text_problem",
]

_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)


def invalid_unicode(text: str) -> int | None:
    """The index of the first character UTF-8 cannot encode (a lone surrogate), or None."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def text_problem(text: str, max_chars: int | None = MAX_TEXT_CHARS) -> str | None:
    """What is wrong with ``text`` (invalid Unicode, or longer than ``max_chars``), or None.

    The answer is a phrase to follow a field's name, e.g. ``"'reason' " + problem``.
    """
    position = invalid_unicode(text)
    if position is not None:
        return (
            f"contains invalid Unicode: a lone surrogate {text[position]!r} at position "
            f"{position:,}; send valid UTF-8 text (every surrogate paired)"
        )
    if max_chars is not None and len(text) > max_chars:
        return f"is {len(text):,} characters long; the limit is {max_chars:,}"
    return None


def find_invalid_text(
    value: Any, path: str = "", *, max_chars: int | None = MAX_TEXT_CHARS
) -> tuple[str, str] | None:
    """The first string inside ``value`` (keys included) that fails :func:`text_problem`.

    Walks nested lists and mappings with an explicit stack, so deep nesting cannot
    exhaust the interpreter's recursion limit.

    Returns:
        ``(path, problem)`` with a dotted path such as ``"metadata.topic"`` or
        ``"tags[2]"``, or None when every string is valid.
    """
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            problem = text_problem(item, max_chars)
            if problem is not None:
                return where or "(value)", problem
        elif isinstance(item, Mapping):
            children: list[tuple[str, Any]] = []
            for key, child in item.items():
                name = f"{where}.{key}" if where else str(key)
                if isinstance(key, str):
                    problem = text_problem(key, MAX_ID_CHARS)
                    if problem is not None:
                        return f"{where or '(value)'} key {key[:40]!r}", problem
                children.append((name, child))
            stack.extend(reversed(children))
        elif isinstance(item, list | tuple):
            stack.extend((f"{where}[{i}]", child) for i, child in reversed(list(enumerate(item))))
    return None


def json_depth_exceeds(document: str | bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether arrays and objects in the JSON text ``document`` nest deeper than ``limit``.

    A linear scan of brackets outside strings, without parsing (and without recursion);
    malformed JSON is left for the parser to report.
    """
    text = document.decode("utf-8", "replace") if isinstance(document, bytes) else document
    if text.count("[") + text.count("{") <= limit:
        return False  # cannot nest deeper than it has brackets
    depth = 0
    for match in _TOKENS.finditer(text):
        char = match.group()
        if char in "[{":
            depth += 1
            if depth > limit:
                return True
        elif char in "]}":
            depth -= 1
        # strings are matched whole, so brackets inside them never count
    return False
