"""Checks on free text that tools accept: present, trimmed, and not too long."""

from __future__ import annotations

from mindspace.errors import InvalidArgumentsError

__all__ = ["bounded_text"]


def bounded_text(value: str, field: str, max_chars: int) -> str:
    """``value`` stripped of surrounding space, if it is non-empty and at most ``max_chars``.

    Raises:
        InvalidArgumentsError: empty or too long, naming the field and the limit.
    """
    text = value.strip()
    if not text:
        raise InvalidArgumentsError(
            f"{field!r} is empty",
            f"Provide a non-empty {field!r}.",
            field=field,
        )
    if len(text) > max_chars:
        raise InvalidArgumentsError(
            f"{field!r} is {len(text):,} characters long; the limit is {max_chars:,}",
            f"Shorten {field!r} to at most {max_chars:,} characters - keep the essentials.",
            field=field,
            length=len(text),
            limit=max_chars,
        )
    return text
