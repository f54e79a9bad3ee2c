"""``talk <npc> <text>``: the command players of ``evennia.contrib.rpg.llm`` know.

Everyone in the room sees ``Alice says to Barkeep, "Hello"``; the assistant gets the
words as speech addressed to it (it answers aloud, as when named in a ``say``). With
only one assistant in the room, ``talk <text>`` is enough; ``talk Old Tom = <text>``
names an assistant whose name has spaces, as in the contrib.
"""

from __future__ import annotations

from typing import Any

from evennia.commands.command import Command

from mindspace.hosts.evennia.typeclasses import ASSISTANT_TAG, TAG_CATEGORY

__all__ = ["CmdTalk", "assistants_here", "pick_assistant"]


def assistants_here(caller: Any) -> list[Any]:
    """The assistant characters in ``caller``'s room that ``caller`` can see."""
    room = caller.location
    if room is None:
        return []
    return [
        obj
        for obj in room.contents
        if obj != caller
        and obj.tags.has(ASSISTANT_TAG, category=TAG_CATEGORY)
        and obj.access(caller, "view")
    ]


def _names(obj: Any) -> list[str]:
    return [str(obj.key).casefold(), *(str(a).casefold() for a in obj.aliases.all())]


def pick_assistant(here: list[Any], text: str) -> tuple[Any | None, str, str]:
    """Who ``text`` talks to, and the words: ``(assistant, words, problem)``.

    ``Old Tom = hello`` and ``barkeep hello`` name the assistant (its key or an alias,
    or the start of one); otherwise, with exactly one assistant here, all of ``text``
    is said to it. ``problem`` tells the player what to type when neither works.
    """
    text = text.strip()
    if "=" in text:
        name, _, words = text.partition("=")
        wanted = name.strip().casefold()
        found = [o for o in here if wanted in _names(o)]
        found = found or [o for o in here if any(n.startswith(wanted) for n in _names(o))]
        if len(found) == 1:
            return found[0], words.strip(), ""
    first, _, rest = text.partition(" ")
    wanted = first.strip().casefold()
    named = [o for o in here if wanted in _names(o)]
    named = named or [o for o in here if wanted and any(n.startswith(wanted) for n in _names(o))]
    if len(named) == 1:
        return named[0], rest.strip(), ""
    if len(here) == 1:
        return here[0], text, ""
    if not here:
        return None, "", "There is nobody here to talk to."
    known = ", ".join(str(o.key) for o in here)
    return None, "", f"Talk to whom? Here: {known}. Type: talk <name> <what to say>."


class CmdTalk(Command):
    """
    Talk to a character who listens (an assistant NPC).

    Usage:
      talk <name> <what to say>
      talk <name with spaces> = <what to say>
      talk <what to say>          (when only one of them is here)

    Everyone in the room hears it; the one you talk to answers. You can
    also just 'say' its name: say Barkeep, an ale please.
    """

    key = "talk"
    locks = "cmd:all()"
    help_category = "General"

    def func(self) -> None:
        """Say the words to the assistant and queue them as speech addressed to it."""
        caller = self.caller
        if not self.args.strip():
            caller.msg("Talk to whom, and say what? Type: talk <name> <what to say>.")
            return
        target, words, problem = pick_assistant(assistants_here(caller), self.args)
        if target is None:
            caller.msg(problem)
            return
        if not words:
            caller.msg(f"Say what to {target.key}? Type: talk {target.key} <what to say>.")
            return
        # The words go in through the mapping: filled in after the $functions are parsed,
        # so a player's "$" or "{" stays text.
        caller.location.msg_contents(
            text=('$You() $conj(say) to $You(target), "{speech}"', {"type": "say"}),
            from_obj=caller,
            mapping={"target": target, "speech": words.replace("|", "||")},
            exclude=[target],  # it hears the words as an event, just below
        )
        target.mindspace_talked_to(words, caller)
