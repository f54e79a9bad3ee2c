"""Finding a forgotten entity's words wherever they were copied, and blanking them out.

Forgetting an entity deletes what it owns (:mod:`mindspace.engine.forget`); its words
also travel: a tool call's history record, a session fact, a summary in a document, a
prompt in the server's tick log. A :class:`Redactor` knows the forgotten texts and the
entity's name and replaces every verbatim copy of a text with :data:`REDACTED` in any
JSON value. Texts shorter than :data:`MIN_COPY_CHARS` are not searched for (a "hi" from
the entity must not blank every "hi" the assistant keeps); they go with their record.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["FORGOTTEN_RECORD", "MIN_COPY_CHARS", "REDACTED", "Redactor"]

REDACTED = "[forgotten]"
"""What a forgotten text is replaced with."""

MIN_COPY_CHARS = 8
"""The shortest forgotten text searched for elsewhere (shorter ones go with their record)."""

FORGOTTEN_RECORD: dict[str, Any] = {"forgotten": True}
"""The ``before``/``after`` of a history entry about a record that was forgotten."""


_ESCAPED = re.compile(r'["\\\x00-\x1f]')
"""Characters JSON writes escaped: a needle with one is searched field by field."""


def _opaque(_: object) -> str:
    return ""  # bytes (vectors) and other non-JSON values hold no words


class Redactor:
    """Replaces copies of forgotten texts; tells whether a text names the entity.

    Args:
        entity: The forgotten entity's id (matched as a whole word, any case).
        texts: Its words: the texts of everything forgotten with it.
    """

    def __init__(self, entity: str, texts: Iterable[str]) -> None:
        self.entity = entity
        needles = {t.strip() for t in texts if len(t.strip()) >= MIN_COPY_CHARS}
        # Longest first, so a text that contains another is replaced whole.
        ordered = sorted(needles, key=lambda t: (-len(t), t))
        self._copies = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        # JSON text shows such a needle as it is (no escapes), so one search of a whole
        # record's JSON can tell that it holds none (holds()).
        self._plain = not any(_ESCAPED.search(t) for t in ordered)
        self._name = re.compile(rf"(?<!\w){re.escape(entity)}(?!\w)", re.IGNORECASE)

    @property
    def searching(self) -> bool:
        """Whether any forgotten text is long enough to be searched for."""
        return self._copies is not None

    def names(self, text: str) -> bool:
        """Whether ``text`` names the entity or holds one of its words."""
        return bool(self._name.search(text)) or self.copies(text) > 0

    def copies(self, text: str) -> int:
        """How many copies of forgotten texts ``text`` holds."""
        return 0 if self._copies is None else len(self._copies.findall(text))

    def text(self, text: str) -> tuple[str, int]:
        """``text`` with every copy replaced, and how many there were."""
        if self._copies is None:
            return text, 0
        return self._copies.subn(REDACTED, text)

    def holds(self, value: Any) -> bool:
        """Whether a JSON-like ``value`` holds a copy (one search of its JSON text)."""
        if self._copies is None:
            return False
        if not self._plain:
            return self.value(value)[1] > 0
        text = json.dumps(value, ensure_ascii=False, default=_opaque)
        return self._copies.search(text) is not None

    def value(self, value: Any) -> tuple[Any, int]:
        """A JSON-like ``value`` (dicts, lists, tuples, strings) with copies replaced.

        Keys of dicts are redacted too (attributes are keyed by name). Other values
        (numbers, bytes, None) are returned as they are.
        """
        if self._copies is None:
            return value, 0
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            out: dict[Any, Any] = {}
            hits = 0
            for key, item in value.items():
                new_key, key_hits = self.text(key) if isinstance(key, str) else (key, 0)
                new_item, item_hits = self.value(item)
                out[new_key] = new_item
                hits += key_hits + item_hits
            return out, hits
        if isinstance(value, list | tuple):
            items = [self.value(item) for item in value]
            hits = sum(h for _, h in items)
            new = [v for v, _ in items]
            return (tuple(new) if isinstance(value, tuple) else new), hits
        return value, 0
