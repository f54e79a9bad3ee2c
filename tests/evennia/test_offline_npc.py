"""An NPC on the offline model (no LLM configured) talks in character in a real game.

Tried as a new user would: "do you remember me?" got "I'll remember that, builder." Here
players speak to the NPC as they would, and every line the room hears is in character:
answers from its description and from what it was told, never a tool's error text.
"""

from __future__ import annotations

from typing import Any

from evennia.utils.test_resources import BaseEvenniaTest

from mindspace.hosts.evennia.testing import AssistantTestMixin, settle


class TestOfflineNpc(AssistantTestMixin, BaseEvenniaTest):
    assistant_attributes: tuple[tuple[str, Any], ...] = (("mindspace_llm_provider", "offline"),)

    def say(self, text: str) -> list[str]:
        heard = self.listen(self.char2)
        self.char1.at_say(text)
        self.hear(heard, "^Barkeep says")
        settle(lambda: not self.assistant.mindspace.busy, what="the tick finished")
        return heard

    def test_it_answers_from_its_description_and_from_what_it_was_told(self) -> None:
        self.assistant.db.desc = "A stout dwarf behind the bar, polishing a tankard."
        heard = self.say("Barkeep, who are you?")
        assert heard[-1] == (
            'Barkeep says, "I\'m Barkeep, Char. A stout dwarf behind the bar, polishing a tankard."'
        )
        heard = self.say("Barkeep, I prefer red wine.")
        assert heard[-1] == 'Barkeep says, "I\'ll remember that, Char."'
        heard = self.say("Barkeep, do you remember me?")
        assert heard[-1] == 'Barkeep says, "Of course, Char! You prefer red wine."'
        heard = self.say("Barkeep, what do I like to drink?")
        assert heard[-1] == 'Barkeep says, "You prefer red wine, Char."'
        assert self.llm.requests == []  # no model server was asked anything
