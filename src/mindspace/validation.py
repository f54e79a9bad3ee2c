"""The input boundary for text and JSON: one rule for every way text enters mindspace.

Text reaches an assistant from tool arguments (Python, the CLI, HTTP, the model), HTTP
bodies and host events. All of it passes the same two checks here before anything is
stored:

* **valid Unicode**: a lone surrogate (``"\\ud800"``) is a Python ``str`` but not text; it
  cannot be encoded as UTF-8, so SQLite, JSON responses and LLM requests fail on it
  later, after it was stored. It is refused at the door instead. So is NUL (U+0000):
  SQLite stores it, PostgreSQL refuses it, so an assistant holding one could never move.
* **a maximum length** per field (see the table in docs/configuration.md); no string
  anywhere is longer than :data:`MAX_TEXT_CHARS`.

JSON nesting is limited to :data:`MAX_JSON_DEPTH` levels, checked by
:func:`json_depth_exceeds` *before* parsing: Python's ``json`` module recurses, so a body
nested 100,000 deep would otherwise raise ``RecursionError`` inside the parser.

The functions return a description of the problem (or None) rather than raise, so each
boundary raises its own error type: tools an ``InvalidArgumentsError`` result, HTTP a 422,
the CLI exit code 2.

What the *model* writes cannot be refused (nobody could fix it): :func:`replace_not_text`
and :func:`replace_not_text_in` turn every lone surrogate and NUL in its replies and tool
calls into U+FFFD, and the tick notes how many (:mod:`mindspace.llm.port`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mindspace.limits import MAX_ID_CHARS, MAX_JSON_DEPTH, MAX_TEXT_CHARS

__all__ = [
    "ASSISTANT_KEY_PATTERN",
    "REPLACEMENT",
    "assistant_key_problem",
    "find_invalid_text",
    "invalid_unicode",
    "json_depth_exceeds",
    "replace_not_text",
    "replace_not_text_in",
    "text_problem",
]

ASSISTANT_KEY_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
"""An assistant's key: a letter or digit, then up to 63 letters, digits, '_', '.' or '-'.

One rule for every place a key is made (the API's paths, ``-a``/``--assistant``,
``import --as``, an export's header), so every assistant can be reached over HTTP.
"""

_ASSISTANT_KEY = re.compile(ASSISTANT_KEY_PATTERN)

REPLACEMENT = "\ufffd"
"""What a character that is not text becomes in the model's output."""

_NOT_TEXT = re.compile("[\x00\ud800-\udfff]")
"""NUL and lone surrogates (a Python str holds a paired one as one astral code point)."""

_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)


def invalid_unicode(text: str) -> int | None:
    """The index of the first character that is not text (a lone surrogate, NUL), or None."""
    nul = text.find("\x00")
    if text.isascii():
        return None if nul < 0 else nul
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start if nul < 0 else min(nul, exc.start)
    return None if nul < 0 else nul


def assistant_key_problem(key: str) -> str | None:
    """Why ``key`` cannot name an assistant (a sentence saying what to do), or None."""
    if _ASSISTANT_KEY.fullmatch(key):
        return None
    return (
        f"Invalid assistant key {key!r}: use 1-64 letters, digits, '_', '.' or '-', "
        "starting with a letter or digit (e.g. 'barkeep')"
    )


def replace_not_text(text: str) -> tuple[str, int]:
    """``text`` with every lone surrogate and NUL replaced by U+FFFD, and how many."""
    if text.isascii() and "\x00" not in text:
        return text, 0
    return _NOT_TEXT.subn(REPLACEMENT, text)


def replace_not_text_in(value: Any) -> tuple[Any, int]:
    """:func:`replace_not_text` on every string (and key) inside a JSON-like ``value``."""
    if isinstance(value, str):
        return replace_not_text(value)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        count = 0
        for key, item in value.items():
            new_key, a = replace_not_text(key) if isinstance(key, str) else (key, 0)
            out[new_key], b = replace_not_text_in(item)
            count += a + b
        return out, count
    if isinstance(value, list):
        pairs = [replace_not_text_in(item) for item in value]
        return [v for v, _ in pairs], sum(n for _, n in pairs)
    return value, 0


def text_problem(text: str, max_chars: int | None = MAX_TEXT_CHARS) -> str | None:
    """What is wrong with ``text`` (invalid Unicode, or longer than ``max_chars``), or None.

    The answer is a phrase to follow a field's name, e.g. ``"'reason' " + problem``.
    """
    position = invalid_unicode(text)
    if position is not None and text[position] == "\x00":
        return (
            f"contains a NUL character (U+0000) at position {position:,}; remove it "
            "(PostgreSQL cannot store it)"
        )
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
