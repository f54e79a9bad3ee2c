"""What the assistant perceives: Evennia messages turned into mindspace events.

Evennia delivers speech to listeners as ``msg(text=(line, {"type": "say"}),
from_obj=speaker)`` where ``line`` is already formatted for the listener
(``Alice says, "Barkeep, a pint please"``). This module takes such a line apart and
decides whether the event is addressed to the assistant (it gets a tick of its own and
an answer) or ambient (it feeds the context buffer, so the assistant knows what was
said around it):

* a whisper to the assistant is a ``direct_message`` (answered privately);
* speech naming the assistant (its key, aliases or extra names, as a whole word) is
  ``direct_addressing`` (answered aloud), and so is any speech when the speaker and the
  assistant are alone in the room (unless ``reply_when_alone`` is off);
* a pose naming the assistant is ``direct_addressing``; other poses are ambient;
* arrivals are ambient (or addressed with ``greet_arrivals``); departures are ambient.

Everything here is plain Python over strings, so it runs and is tested anywhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "MOVE_TYPES",
    "SPEECH_TYPES",
    "Perceived",
    "addressed_by_name",
    "classify",
    "split_message",
    "spoken_words",
]

SPEECH_TYPES = frozenset({"say", "whisper", "pose"})
MOVE_TYPES = frozenset({"move", "traverse", "teleport"})
MAX_CONTENT_CHARS = 4_000

Classification = Literal["direct_message", "direct_addressing", "ambient"]
EventType = Literal["say", "whisper", "pose", "arrival", "departure"]

# Evennia markup (|r, |n, |/, ||...) and raw ANSI escapes, as they may reach at_msg_receive.
_MARKUP = re.compile(r"\|\[?[0-9]{3}|\|\[?#[0-9a-fA-F]{6}|\|\[?=[a-z]|\|\[?[a-zA-Z/\-_*>^!]")
_RAW_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_QUOTED = re.compile(r'"(.*)"\s*$', re.S)


@dataclass(frozen=True)
class Perceived:
    """One thing the assistant noticed, ready for ``Assistant.enqueue_event``."""

    type: EventType
    content: str
    source: str
    classification: Classification
    location: str | None = None
    present: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def addressed(self) -> bool:
        """Whether the assistant should answer (it gets a tick of its own)."""
        return self.classification != "ambient"

    @property
    def private(self) -> bool:
        """Whether an answer goes privately to the source."""
        return self.classification == "direct_message"

    def metadata(self) -> dict[str, Any]:
        """The event's metadata: classification and who was present."""
        return {"classification": self.classification, "present": list(self.present), **self.extra}


def split_message(text: Any) -> tuple[str, str | None]:
    """``(line, type)`` from what ``msg`` passed as ``text``: a string or ``(string, kwargs)``."""
    kind: str | None = None
    if isinstance(text, tuple | list):
        line = text[0] if text else ""
        if len(text) > 1 and isinstance(text[1], Mapping):
            value = text[1].get("type")
            kind = value if isinstance(value, str) else None
    else:
        line = text
    if line is None:
        return "", kind
    return plain(str(line)), kind


def plain(line: str) -> str:
    """``line`` without Evennia markup or ANSI escapes (``||`` stays a literal ``|``)."""
    escaped = line.replace("||", "\x00").replace("|/", "\n").replace("|-", "\t")
    text = _RAW_ANSI.sub("", _MARKUP.sub("", escaped.replace("|_", " ")))
    return text.replace("\x00", "|").strip()


def spoken_words(line: str) -> str:
    """The quoted speech of ``Alice says, "hello"`` (the whole line when nothing is quoted)."""
    match = _QUOTED.search(line)
    words = match.group(1).strip() if match else line.strip()
    return words[:MAX_CONTENT_CHARS]


def addressed_by_name(text: str, names: Iterable[str]) -> bool:
    """Whether ``text`` names the assistant by one of ``names`` (whole words, any case)."""
    for name in names:
        name = name.strip()
        if name and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text, re.IGNORECASE):
            return True
    return False


def classify(
    kind: str,
    words: str,
    names: Iterable[str],
    *,
    alone: bool,
    reply_when_alone: bool = True,
    greet_arrivals: bool = False,
) -> Classification:
    """How an event of ``kind`` with ``words`` concerns the assistant.

    Raises:
        ValueError: an event type this module does not produce.
    """
    if kind == "whisper":
        return "direct_message"
    if kind == "say":
        if addressed_by_name(words, names) or (alone and reply_when_alone):
            return "direct_addressing"
        return "ambient"
    if kind == "pose":
        return "direct_addressing" if addressed_by_name(words, names) else "ambient"
    if kind == "arrival":
        return "direct_addressing" if greet_arrivals else "ambient"
    if kind == "departure":
        return "ambient"
    raise ValueError(
        f"Unknown perceived event type {kind!r}; use say, whisper, pose, arrival or departure."
    )
