"""The World port for Evennia: what the assistant can perceive and do in the game.

:class:`EvenniaWorld`'s methods are coroutines on mindspace's asyncio thread. Each one
hops to the reactor thread (:meth:`Bridge.call_in_reactor`) for the Evennia and Django
work and hands the result back; the functions that run there are the ``_on_reactor_*``
functions below, which take the character as their first argument.

Errors the model can fix (nobody of that name here, no such exit) are raised as
:class:`~mindspace.errors.ToolFailedError` with a suggestion, and reach the model as
tool results.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mindspace.engine import WorldBase
from mindspace.errors import ToolFailedError
from mindspace.hosts.evennia.bridge import Bridge
from mindspace.hosts.evennia.perception import plain

__all__ = [
    "CAPTURE_ATTRIBUTE",
    "EvenniaWorld",
    "character_context",
    "escape_markup",
    "render_thinking",
    "show_reaction",
]

CAPTURE_ATTRIBUTE = "mindspace_capture"
"""The ``ndb`` attribute collecting the output of a command the assistant runs."""
MAX_OUTPUT_CHARS = 4_000


def escape_markup(text: str) -> str:
    """Model text shown literally: ``|`` doubled so Evennia does not read it as markup."""
    return text.replace("|", "||")


def render_thinking(template: str, name: str, speaker: str) -> str:
    """The 'thinking...' line; an unknown ``{placeholder}`` is left as written."""
    try:
        return template.format(name=name, speaker=speaker)
    except (KeyError, IndexError, ValueError):
        return template


class EvenniaWorld(WorldBase):
    """The assistant's character in an Evennia game, seen from the asyncio thread.

    Args:
        character: The assistant's Evennia object; only touched on the reactor thread.
        bridge: The reactor/asyncio bridge.
        before_output: Called (on the loop) before the assistant says or does anything
            visible; the runtime cancels a pending "thinking..." emote with it.
    """

    def __init__(
        self, character: Any, bridge: Bridge, before_output: Callable[[], None] | None = None
    ) -> None:
        self.character = character
        self.bridge = bridge
        self._before_output = before_output or (lambda: None)

    async def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await self.bridge.call_in_reactor(fn, self.character, *args)

    async def say(self, text: str, *, target: str | None = None) -> None:
        """Say ``text`` aloud in the room, or whisper it to ``target`` when given."""
        self._before_output()
        await self._call(_on_reactor_say, text, target)

    async def whisper(self, target: str, text: str) -> None:
        """Whisper ``text`` to ``target``, who must be in the room."""
        self._before_output()
        await self._call(_on_reactor_say, text, target)

    async def emote(self, text: str) -> None:
        """Pose an action: ``Barkeep polishes a glass.``"""
        self._before_output()
        await self._call(_on_reactor_emote, text)

    async def look(self) -> str:
        """The room as the assistant sees it (what ``look`` shows a player)."""
        result: str = await self._call(_on_reactor_look)
        return result

    async def inspect_location(self) -> dict[str, Any]:
        """The room as data: name, description, exits, characters and things here."""
        result: dict[str, Any] = await self._call(_on_reactor_inspect)
        return result

    async def move(self, exit_name: str) -> dict[str, Any]:
        """Go through the exit ``exit_name``; returns where the assistant ended up."""
        self._before_output()
        result: dict[str, Any] = await self._call(_on_reactor_move, exit_name)
        return result

    async def execute(self, command: str) -> dict[str, Any]:
        """Run a game command as the character; returns what the command printed."""
        self._before_output()
        result: dict[str, Any] = await self._call(_on_reactor_execute, command)
        return result

    async def thinking(self, template: str, speaker: str | None, private: bool) -> None:
        """Show that the assistant is thinking about what ``speaker`` said (as a reaction)."""
        await self._call(show_reaction, template, speaker, private)

    async def character_context(self) -> str:
        """Who and where the assistant is, read from the game now (for every prompt)."""
        result: str = await self._call(character_context)
        return result


# -- on the reactor thread ----------------------------------------------------------------
def _room(character: Any) -> Any:
    room = character.location
    if room is None:
        raise ToolFailedError(
            f"{character.key} is nowhere (it has no location)",
            "An admin must move the character into a room first.",
        )
    return room


def _is_exit(obj: Any) -> bool:
    return getattr(obj, "destination", None) is not None


def _names_of(obj: Any) -> list[str]:
    return [str(obj.key), *(str(a) for a in obj.aliases.all())]


def _find_here(character: Any, name: str, *, exits: bool) -> Any:
    room = _room(character)
    wanted = name.strip().casefold()
    candidates = [
        o
        for o in room.contents
        if o is not character and _is_exit(o) == exits and o.access(character, "view")
    ]
    exact = [o for o in candidates if wanted in (n.casefold() for n in _names_of(o))]
    if not exact:
        exact = [
            o for o in candidates if any(n.casefold().startswith(wanted) for n in _names_of(o))
        ]
    if len(exact) == 1:
        return exact[0]
    known = ", ".join(sorted(str(o.key) for o in candidates)) or "nothing"
    if not exact:
        what = "exit" if exits else "one"
        raise ToolFailedError(
            f"No {what} called {name!r} here",
            f"{'Exits' if exits else 'Here are'}: {known}. Use one of these names.",
        )
    raise ToolFailedError(
        f"{name!r} matches several: {', '.join(str(o.key) for o in exact)}",
        "Use the full name.",
    )


def _on_reactor_say(character: Any, text: str, target: str | None) -> None:
    _room(character)
    words = escape_markup(text.strip())
    receiver = _find_here(character, target, exits=False) if target else None
    # One who speaks is awake: the tick that woke it says its first words before it
    # reports the new mode, and its name must not read "(asleep)" then.
    character.ndb.mindspace_speaking = True
    try:
        if receiver is not None:
            character.at_say(words, receivers=[receiver], whisper=True)
        else:
            character.at_say(words)
    finally:
        character.ndb.mindspace_speaking = False


def _on_reactor_emote(character: Any, text: str) -> None:
    room = _room(character)
    action = escape_markup(text.strip())
    room.msg_contents(
        text=("{actor} {action}", {"type": "pose"}),
        from_obj=character,
        mapping={"actor": character, "action": action},
    )


def _on_reactor_look(character: Any) -> str:
    room = _room(character)
    return plain(str(character.at_look(room)))


def _on_reactor_inspect(character: Any) -> dict[str, Any]:
    room = _room(character)
    visible = [o for o in room.contents if o is not character and o.access(character, "view")]
    exits = [o for o in visible if _is_exit(o)]
    people = [o for o in visible if not _is_exit(o) and _is_character(o)]
    things = [o for o in visible if not _is_exit(o) and not _is_character(o)]
    desc = room.db.desc
    return {
        "location": str(room.key),
        "description": plain(str(desc)) if desc else "",
        "exits": [{"name": str(e.key), "leads_to": str(e.destination.key)} for e in exits],
        "characters": [str(o.key) for o in people],
        "things": [str(o.key) for o in things],
    }


def _on_reactor_move(character: Any, exit_name: str) -> dict[str, Any]:
    exit_obj = _find_here(character, exit_name, exits=True)
    before = character.location
    if not exit_obj.access(character, "traverse"):
        raise ToolFailedError(
            f"The exit {exit_obj.key!r} does not let you through",
            "Try another exit, or ask someone for help.",
        )
    exit_obj.at_traverse(character, exit_obj.destination)
    if character.location is before:
        raise ToolFailedError(
            f"Could not go through {exit_obj.key!r}; you are still in {before.key!r}",
            "Look around for another way.",
        )
    return {"location": str(character.location.key), "came_from": str(before.key)}


def _on_reactor_execute(character: Any, command: str) -> Any:
    captured: list[str] = []
    character.ndb.mindspace_capture = captured

    def finish(result: Any) -> Any:
        character.ndb.mindspace_capture = None
        output = "\n".join(line for line in captured if line)
        if len(output) > MAX_OUTPUT_CHARS:
            output = output[: MAX_OUTPUT_CHARS - 15] + "\n...(truncated)"
        if not isinstance(result, BaseException) and not _is_failure(result):
            refused = _refusal(captured, command)
            if refused:
                # Evennia answers a command the character may not use (its lock failed)
                # as if it did not exist; nothing ran, so this must not count as run.
                raise ToolFailedError(
                    f"{character.key} may not run {command!r}: {refused}",
                    "Ask a Builder for the permission the command needs, or use another one.",
                    output=output,
                )
            return {"command": command, "output": output}
        error = getattr(result, "value", result)
        raise ToolFailedError(
            f"The command {command!r} failed: {error!r}",
            "Check the command's syntax with 'help <command>'.",
            output=output,
        )

    from twisted.internet.defer import maybeDeferred

    return maybeDeferred(character.execute_cmd, command).addBoth(finish)


def _refusal(captured: list[str], command: str) -> str | None:
    prefix = f"Command '{command}' is not available"
    return next((line for line in captured if line.startswith(prefix)), None)


def _is_failure(value: Any) -> bool:
    from twisted.python.failure import Failure

    return isinstance(value, Failure)


def character_context(character: Any) -> str:
    """The character as the game has it now: name, description, place, company, exits.

    Read on the reactor thread at every prompt assembly, so a builder's ``desc`` or a
    move shows in the very next tick.
    """
    name = str(character.key)
    lines = [f"Your character: {name}."]
    aliases = [str(a) for a in character.aliases.all()]
    if aliases:
        lines.append(f"Also called: {', '.join(aliases)}.")
    desc = character.db.desc
    lines.append(f"Your description: {plain(str(desc)) if desc else '(none)'}")
    room = character.location
    if room is None:
        lines.append("You are nowhere (no location).")
        return "\n".join(lines)
    lines.append(f"You are in: {room.key}.")
    room_desc = room.db.desc
    if room_desc:
        lines.append(f"It looks like this: {plain(str(room_desc))}")
    visible = [o for o in room.contents if o is not character and o.access(character, "view")]
    people = [str(o.key) for o in visible if not _is_exit(o) and _is_character(o)]
    things = [str(o.key) for o in visible if not _is_exit(o) and not _is_character(o)]
    exits = [str(o.key) for o in visible if _is_exit(o)]
    lines.append(f"Here with you: {', '.join(people) if people else 'nobody'}.")
    if things:
        lines.append(f"Things here: {', '.join(things)}.")
    if exits:
        lines.append(f"Exits: {', '.join(exits)}.")
    return "\n".join(lines)


def show_reaction(character: Any, template: str, speaker: str | None, private: bool) -> None:
    """An in-character line about the assistant (asleep, waking), to the room or speaker.

    ``template`` takes ``{name}`` and ``{speaker}``; empty shows nothing. Private (the
    speaker whispered): only the speaker sees it, and ``{speaker}`` reads "you".
    """
    room = character.location
    if room is None or not template.strip():
        return
    name = str(character.key)
    if private and speaker:
        try:
            listener = _find_here(character, speaker, exits=False)
        except ToolFailedError:
            return  # the speaker left; nobody to tell
        line = escape_markup(render_thinking(template, name, "you"))
        listener.msg(text=(line, {"type": "pose"}), from_obj=character)
        return
    line = escape_markup(render_thinking(template, name, speaker or "someone"))
    room.msg_contents(text=("{line}", {"type": "pose"}), from_obj=character, mapping={"line": line})


def say_in_character(character: Any, text: str, speaker: str | None, private: bool) -> None:
    """The assistant says ``text`` (whispered to ``speaker`` when ``private``)."""
    if character.location is None or not text.strip():
        return
    target = speaker if private else None
    try:
        _on_reactor_say(character, text, target)
    except ToolFailedError:
        return  # the whisperer left


def _is_character(obj: Any) -> bool:
    from evennia.utils.utils import inherits_from

    return bool(inherits_from(obj, "evennia.objects.objects.DefaultCharacter"))
