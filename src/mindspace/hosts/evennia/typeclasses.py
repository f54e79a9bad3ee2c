"""Typeclasses: the assistant character, its mixin, and the Script that ticks it.

Use :class:`AssistantCharacter` as it is, or mix :class:`AssistantCharacterMixin` into
your game's own character class (before it, so its hooks run first)::

    # typeclasses/characters.py
    from mindspace.hosts.evennia import AssistantCharacterMixin

    class Barkeep(AssistantCharacterMixin, Character):
        mindspace_thinking_delay = 2  # class-wide option (see docs/evennia.md)

What the character hears (``at_msg_receive``) becomes mindspace events: speech,
whispers and poses from others in the room, arrivals and departures. Addressed events
get an answer; the rest feed the assistant's context buffer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evennia.objects.objects import DefaultCharacter
from evennia.scripts.scripts import DefaultScript
from evennia.utils import logger
from evennia.utils.utils import inherits_from, make_iter

from mindspace.errors import ConfigError
from mindspace.hosts.evennia.config import default_key
from mindspace.hosts.evennia.perception import (
    MOVE_TYPES,
    SPEECH_TYPES,
    Perceived,
    classify,
    split_message,
    spoken_words,
)
from mindspace.hosts.evennia.runtime import (
    AssistantRuntime,
    config_fingerprint,
    forget_runtime,
    open_runtime,
    runtime_for,
)

__all__ = [
    "ASSISTANT_TAG",
    "TAG_CATEGORY",
    "TICKER_KEY",
    "AssistantCharacter",
    "AssistantCharacterMixin",
    "AssistantTickerScript",
    "is_character",
]

ASSISTANT_TAG = "assistant"
TAG_CATEGORY = "mindspace"
TICKER_KEY = "mindspace_ticker"
POLL_INTERVAL = 1
"""Seconds between two looks at whether a tick is due (the tick rates are the engine's)."""


def is_character(obj: Any) -> bool:
    """Whether ``obj`` is a character (players and NPCs), not a room, exit or thing."""
    return bool(inherits_from(obj, DefaultCharacter))


class AssistantTickerScript(DefaultScript):
    """Asks the assistant character whether a tick is due, every second.

    Persistent: it survives ``evennia reload`` (Evennia pauses and resumes it), which is
    how the assistant keeps ticking after a reload. Pause it to freeze the assistant
    without deleting anything: ``script Barkeep =`` lists it with its ``#id``, then
    ``script/pause #id`` (``script/start #id`` resumes it).
    """

    def at_script_creation(self) -> None:
        """Set the key, interval and persistence."""
        self.key = TICKER_KEY
        self.desc = "mindspace: runs the assistant's ticks"
        self.interval = POLL_INTERVAL
        self.start_delay = True  # the first look comes a second after creation
        self.persistent = True

    def at_repeat(self, **kwargs: Any) -> None:
        """Poll the character; never returns a Deferred (ticks run on the bridge)."""
        obj = self.obj
        if obj is not None and hasattr(obj, "mindspace_poll"):
            obj.mindspace_poll()


class AssistantCharacterMixin:
    """Makes a character a mindspace assistant. Put it before the character class."""

    if TYPE_CHECKING:
        key: str
        id: int
        dbref: str
        location: Any
        attributes: Any
        tags: Any
        scripts: Any
        ndb: Any
        db: Any

    # -- lifecycle ---------------------------------------------------------------------
    def at_object_creation(self) -> None:
        """Give the new character its assistant key, tag and ticker."""
        super().at_object_creation()  # type: ignore[misc]
        self.mindspace_setup()

    def mindspace_setup(self) -> None:
        """Key, tag and ticker; idempotent.

        Runs at creation, and once per server run for a character that got the mixin
        later (``typeclass`` without ``/reset`` skips ``at_object_creation``).
        """
        if not self.attributes.has("mindspace_key"):
            self.attributes.add("mindspace_key", default_key(str(self.key)))
        self.tags.add(ASSISTANT_TAG, category=TAG_CATEGORY)
        if not self.scripts.get(TICKER_KEY):
            self.scripts.add(AssistantTickerScript, autostart=True)
        self.ndb.mindspace_ready = True

    def at_object_delete(self) -> bool:
        """Stop the runtime with the character (its mindspace state is kept)."""
        forget_runtime(self)
        return bool(super().at_object_delete())  # type: ignore[misc]

    # -- how others see it -------------------------------------------------------------
    def get_display_name(self, looker: Any = None, **kwargs: Any) -> str:
        """Its name; "(asleep)" after it while it sleeps, so a room's list shows it."""
        name = str(super().get_display_name(looker, **kwargs))  # type: ignore[misc]
        runtime = open_runtime(self)
        if runtime is None or runtime.mode != "sleep" or not runtime.config.options.asleep_look:
            return name
        if self.ndb.mindspace_speaking:  # its waking words (world.py)
            return name
        return f"{name} (asleep)"

    def get_display_desc(self, looker: Any, **kwargs: Any) -> str:
        """Its description, and the ``asleep_look`` line while it sleeps."""
        desc = str(super().get_display_desc(looker, **kwargs))  # type: ignore[misc]
        runtime = open_runtime(self)
        if runtime is None or runtime.mode != "sleep":
            return desc
        line = runtime.config.options.asleep_look.replace("{name}", str(self.key)).strip()
        return f"{desc}\n{line}" if line else desc

    @property
    def mindspace(self) -> AssistantRuntime:
        """The assistant's runtime (opened lazily)."""
        return runtime_for(self)

    @property
    def mindspace_key(self) -> str:
        """The assistant's key in the mindspace store."""
        return self.mindspace.key

    def mindspace_poll(self) -> None:
        """Start a tick when one is due (called by :class:`AssistantTickerScript`)."""
        try:
            runtime = self.mindspace
        except ConfigError as exc:
            # Said once per configuration, not every second; fixing it restarts ticking.
            fingerprint = config_fingerprint(self)
            if self.ndb.mindspace_bad_config != fingerprint:
                self.ndb.mindspace_bad_config = fingerprint
                logger.log_err(f"mindspace: {self.key} cannot start: {exc}")
            return
        try:
            runtime.poll()
        except Exception:
            logger.log_trace(f"mindspace: could not tick {self.key}")

    # -- perception --------------------------------------------------------------------
    def at_msg_receive(self, text: Any = None, from_obj: Any = None, **kwargs: Any) -> bool:
        """Turn speech, poses and movement into events; collect a command's output."""
        accepted = super().at_msg_receive(text=text, from_obj=from_obj, **kwargs)  # type: ignore[misc]
        sender = make_iter(from_obj)[0] if from_obj else None
        line, kind = split_message(text)
        if not self.ndb.mindspace_ready:
            self.mindspace_setup()
        capture = self.ndb.mindspace_capture
        if capture is not None and (sender is None or sender == self):
            capture.append(line)
        if sender is not None and sender != self and line:
            try:
                self.mindspace_perceive(line, kind, sender)
            except Exception:
                logger.log_trace(f"mindspace: {self.key} could not take in {line!r}")
        return bool(accepted)

    def mindspace_perceive(self, line: str, kind: str | None, sender: Any) -> None:
        """Queue what ``sender`` did (``kind`` is the message type) as an event."""
        if kind in SPEECH_TYPES and is_character(sender):
            self._mindspace_event(kind, spoken_words(line) if kind != "pose" else line, sender)
        elif kind in MOVE_TYPES and is_character(sender):
            # Evennia announces a departure before the move and an arrival after it, both
            # while the mover stands in this room; look once the move is done (the next
            # reactor turn) to tell which this was. Two moves of one character within a
            # single reactor turn (a script, not a player) read as two of the same kind.
            self.mindspace.bridge.reactor.callLater(0, self._mindspace_moved, line, sender)

    def mindspace_talked_to(self, words: str, speaker: Any) -> None:
        """``speaker`` used ``talk`` on this assistant: speech addressed to it."""
        self._mindspace_event("say", words, speaker, addressed=True)

    def _mindspace_moved(self, line: str, sender: Any) -> None:
        here = self.location
        if here is None:
            return
        kind = "arrival" if sender.location == here else "departure"
        self._mindspace_event(kind, line, sender)

    def _mindspace_event(
        self, kind: str, words: str, sender: Any, *, addressed: bool = False
    ) -> None:
        runtime = self.mindspace
        room = self.location
        options = runtime.config.options
        others = [o for o in (room.contents if room else []) if o != self and is_character(o)]
        alone = all(o == sender for o in others)
        classification = classify(
            kind,
            words,
            runtime.config.names,
            alone=alone,
            reply_when_alone=options.reply_when_alone,
            greet_arrivals=options.greet_arrivals,
        )
        if addressed:
            classification = "direct_addressing"
        if sender.tags.has(ASSISTANT_TAG, category=TAG_CATEGORY):
            # Assistants hear each other as background only: two of them answering
            # each other by name would otherwise talk forever.
            classification = "ambient"
        runtime.enqueue(
            Perceived(
                type=kind,  # type: ignore[arg-type]
                content=words,
                source=str(sender.key),
                classification=classification,
                location=str(room.key) if room else None,
                present=tuple(str(o.key) for o in others),
            )
        )


class AssistantCharacter(AssistantCharacterMixin, DefaultCharacter):
    """A ready-made assistant character.

    Create one in the game with
    ``create/drop Barkeep:mindspace.hosts.evennia.AssistantCharacter``.
    """
