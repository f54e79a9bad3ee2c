"""Reply hygiene: what the model wrote is cleaned before a user or the history sees it.

:func:`clean_reply` removes, in order:

* a leading role prefix (``Assistant:``, ``AI:``, ``<assistant key>:``, also in bold);
* echoes of the runtime's own headers at line starts: the pending-event header
  ``[message from Alice in terminal at 2025-12-06T10:00:00Z]`` (engine/prompting.py) and
  the context buffer's ``[2025-12-06T10:00:00Z] Alice:`` stamp; the event's own text
  right after an echoed header goes with it;
* an echoed system prompt: runs of sentences or lines that appear verbatim (whitespace
  aside) in the instructions (the ``system_prompt`` component, not the memories and goals
  beside it, which a reply may rightly quote) and together reach :data:`ECHO_MIN_CHARS`
  characters;

then caps the size at ``max_chars`` with a visible marker. A reply that is empty after
cleaning is no reply (``None``).

:func:`end_at_sentence` cuts a reply that the length limit left mid-sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

__all__ = [
    "CAP_MARKER",
    "ECHO_MIN_CHARS",
    "CleanedReply",
    "Removal",
    "ReplyPolicy",
    "cap_reply",
    "clean_reply",
    "end_at_sentence",
]

ECHO_MIN_CHARS = 60
CAP_MARKER = " […reply cut at {limit:,} characters]"

Removal = Literal["role_prefix", "header_echo", "prompt_echo", "capped"]

# The pending-event header: "[{type} from {who}{ in where} at {created_at}]" (prompting.py).
_EVENT_HEADER = re.compile(
    r"^[ \t>*_]*\[[a-z][a-z0-9_]{0,31} from [^\]\n]{1,200}? at "
    r"\d{4}-\d\d-\d\d[^\]\n]{0,40}\][ \t]*",
    re.MULTILINE,
)
# The context buffer's stamp: "[{at}] {source}: " (prompting.py).
_BUFFER_STAMP = re.compile(
    r"^[ \t]*\[\d{4}-\d\d-\d\dT[\d:.]+(?:Z|[+-]\d\d:?\d\d)?\][ \t]*(?:[^:\n]{1,64}:[ \t]*)?",
    re.MULTILINE,
)
_SEGMENT = re.compile(r"[^\n.!?]*(?:[.!?]+[\"')\]]*|\n|$)")
_SENTENCE_END = re.compile(r"[.!?…][\"')\]*_]*(?=\s|$)")


@dataclass(frozen=True)
class ReplyPolicy:
    """What :func:`clean_reply` needs to know about the conversation it cleans for."""

    assistant_key: str = ""
    system_prompt: str = ""
    event_text: str = ""
    max_chars: int = 4_000

    def clean(self, text: str | None) -> CleanedReply:
        """``clean_reply`` under this policy."""
        return clean_reply(
            text,
            assistant_key=self.assistant_key,
            system_prompt=self.system_prompt,
            event_text=self.event_text,
            max_chars=self.max_chars,
        )


@dataclass(frozen=True)
class CleanedReply:
    """A cleaned reply (None when nothing is left) and what was removed."""

    text: str | None
    removed: tuple[Removal, ...] = field(default=())

    @property
    def capped(self) -> bool:
        """Whether the reply was cut at the size cap."""
        return "capped" in self.removed


def clean_reply(
    text: str | None,
    *,
    assistant_key: str = "",
    system_prompt: str = "",
    event_text: str = "",
    max_chars: int = 4_000,
) -> CleanedReply:
    """Clean ``text`` for delivery and history (see the module docstring).

    Args:
        text: What the model wrote.
        assistant_key: The assistant's name, as a role prefix to strip.
        system_prompt: The system message the model was given, to detect echoes of it.
        event_text: The text of the event being answered, dropped after an echoed header.
        max_chars: The size cap; longer replies end with :data:`CAP_MARKER`.
    """
    if not text or not text.strip():
        return CleanedReply(None)
    removed: list[Removal] = []
    out = text.strip()
    # Cleaning can only remove about a prompt's worth of echo, so a huge reply is cut
    # first: the cleaning below then works on a bounded text (a 1 MB reply took 0.5 s).
    bound = max_chars + len(system_prompt) + len(event_text) + 2_000
    pre_cut = len(out) > bound
    if pre_cut:
        out = out[:bound]
    stripped = _strip_role_prefix(out, assistant_key)
    if stripped != out:
        removed.append("role_prefix")
        out = stripped
    stripped = _strip_headers(out, event_text)
    if stripped != out:
        removed.append("header_echo")
        out = stripped
    if system_prompt:
        stripped = _strip_prompt_echo(out, system_prompt)
        if stripped != out:
            removed.append("prompt_echo")
            out = stripped
    # A header may have hidden a role prefix behind it ("[message ...]\nAssistant: hi").
    stripped = _strip_role_prefix(out, assistant_key)
    if stripped != out and "role_prefix" not in removed:
        removed.append("role_prefix")
    out = re.sub(r"\n{3,}", "\n\n", stripped).strip()
    if len(out) > max_chars or (pre_cut and out):
        out = cap_reply(out, max_chars)
        removed.append("capped")
    return CleanedReply(out or None, tuple(removed))


def cap_reply(text: str, max_chars: int) -> str:
    """``text`` cut to at most ``max_chars`` characters (marker included), at a word end."""
    marker = CAP_MARKER.format(limit=max_chars)
    room = max(0, max_chars - len(marker))
    cut = text[:room]
    boundary = max(cut.rfind(" "), cut.rfind("\n"))
    if len(text) > room and boundary > room // 2:
        cut = cut[:boundary]
    return cut.rstrip() + marker


def end_at_sentence(text: str) -> str:
    """``text`` up to its last full sentence; unchanged when it has none to end at."""
    stripped = text.rstrip()
    ends = list(_SENTENCE_END.finditer(stripped))
    if not ends:
        return stripped
    last = ends[-1].end()
    return stripped[:last] if last >= len(stripped) // 3 else stripped


def _strip_role_prefix(text: str, assistant_key: str) -> str:
    return _role_prefix(assistant_key).sub("", text, count=1)


@lru_cache(maxsize=256)
def _role_prefix(assistant_key: str) -> re.Pattern[str]:
    """The role-prefix pattern for one assistant (compiled once, not per reply)."""
    names = ["assistant", "ai", "bot"]
    if assistant_key:
        names.append(re.escape(assistant_key))
    return re.compile(
        r"^\s*(?:[*_#>]+\s*)?(?:" + "|".join(names) + r")\s*(?:[*_]+\s*)?:\s*(?:[*_]+\s*)?",
        re.IGNORECASE,
    )


def _strip_headers(text: str, event_text: str) -> str:
    lines = text.split("\n")
    kept: list[str] = []
    skip_event = False
    echo = " ".join(event_text.split())
    for line in lines:
        if _EVENT_HEADER.match(line):
            line = _EVENT_HEADER.sub("", line, count=1)
            skip_event = bool(echo)
            if not line.strip():
                continue
        if skip_event and echo and " ".join(line.split()) == echo:
            skip_event = False
            continue
        skip_event = False
        line = _BUFFER_STAMP.sub("", line, count=1)
        kept.append(line)
    return "\n".join(kept).strip()


def _strip_prompt_echo(text: str, system_prompt: str) -> str:
    source = " ".join(system_prompt.split())
    segments = [m.group(0) for m in _SEGMENT.finditer(text) if m.group(0)]
    echoed = [bool(" ".join(s.split())) and " ".join(s.split()) in source for s in segments]
    drop = [False] * len(segments)
    index = 0
    while index < len(segments):
        if not echoed[index]:
            index += 1
            continue
        end = index
        while end < len(segments) and (echoed[end] or not segments[end].strip()):
            end += 1
        run = "".join(segments[index:end])
        if len(" ".join(run.split())) >= ECHO_MIN_CHARS:
            for position in range(index, end):
                drop[position] = True
        index = end
    if not any(drop):
        return text
    return "".join(s for s, d in zip(segments, drop, strict=True) if not d).strip()
