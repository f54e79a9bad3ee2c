"""What players and builders notice: a live persona, in-character states, talk, true status.

Each test drives the assistant as players would (speech, ``talk``), with the scripted
model over real HTTP, and reads what the characters in the room were told, what the
model received and what ``assistant <name> ...`` shows.
"""

from __future__ import annotations

import re
from typing import Any

from evennia.utils.test_resources import BaseEvenniaCommandTest

from mindspace.hosts.evennia.commands import CmdAssistant
from mindspace.hosts.evennia.config import resolve_config
from mindspace.hosts.evennia.outcomes import explain_error
from mindspace.hosts.evennia.talk import CmdTalk
from mindspace.hosts.evennia.testing import AssistantTestMixin, settle, wait
from mindspace.hosts.evennia.typeclasses import TICKER_KEY


def _flat(text: str) -> str:
    """A view without the table's borders, each cell's wrapped lines joined."""
    return " ".join(re.sub(r"[|+]|-{3,}", " ", text).split())


def _system_text(request: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in request["messages"])


class TestInCharacter(AssistantTestMixin, BaseEvenniaCommandTest):
    def admin(self, args: str) -> str:
        """Run ``assistant <args>`` as Char (a Developer) and wait for its answer."""
        heard = self.listen(self.char1)
        command = CmdAssistant()
        command.caller = command.obj = self.char1
        command.cmdname = command.cmdstring = "assistant"
        command.args = " " + args
        command.session = None
        command.account = self.char1.account
        command.parse()
        deferred = command.func()
        if deferred is not None:
            wait(deferred)
        return "\n".join(heard)

    def talk(self, args: str, caller: Any = None) -> None:
        caller = caller or self.char1
        command = CmdTalk()
        command.caller = command.obj = caller
        command.cmdname = command.cmdstring = "talk"
        command.args = " " + args
        command.session = None
        command.account = caller.account
        command.parse()
        command.func()

    def idle(self) -> None:
        settle(lambda: self.llm.pending == 0, what="every scripted reply was asked for")
        settle(lambda: not self.assistant.mindspace.busy, what="the tick finished")

    def test_the_description_set_after_creation_is_in_the_next_prompt(self) -> None:
        self.assistant.db.desc = "A stout dwarf behind the bar."
        self.room1.db.desc = "A smoky tavern."
        heard = self.listen(self.char1)
        self.llm.reply("Aye?")
        self.char1.at_say("Barkeep, hello")
        self.hear(heard, "Aye")
        first = _system_text(self.llm.requests[-1])
        assert "Your description: A stout dwarf behind the bar." in first
        assert "You are in: Room." in first
        assert "It looks like this: A smoky tavern." in first
        assert "Here with you: Char, Char2" in first
        self.idle()
        # The builder changes the description: the very next prompt has it.
        self.assistant.db.desc = "A tall elf with a silver tray."
        self.llm.reply("Yes?")
        self.char1.at_say("Barkeep, you look different")
        self.hear(heard, "Yes\\?")
        second = _system_text(self.llm.requests[-1])
        assert "Your description: A tall elf with a silver tray." in second
        assert "stout dwarf" not in second
        self.idle()
        # The admin view shows exactly what the model saw last.
        view = self.admin("Barkeep prompt")
        assert "What the model saw on its last turn (event tick" in view
        assert "Your description: A tall elf with a silver tray." in view
        assert "you look different" in view
        assert "The operator prompt of Barkeep" in view

    def test_an_autonomous_tick_thinks_without_speaking(self) -> None:
        wait(
            self.assistant.mindspace.call(
                lambda a: a.call_tool("add_goal", {"description": "Keep the cellar stocked"})
            )
        )
        self.llm.reply("I should count the barrels before the evening rush.")
        heard = self.listen(self.char1)
        self.assistant.mindspace.nudge()
        self.idle()
        report = self.assistant.mindspace.last_report
        assert report is not None
        assert report.kind == "autonomous"
        assert not any("barrels" in line for line in heard), heard
        thought = self.assistant.mindspace.last_thought
        assert thought is not None
        assert "count the barrels" in thought.text
        status = _flat(self.admin("Barkeep status"))
        assert "Last thought" in status
        assert "count the barrels" in status

    def test_speaking_to_a_deep_sleeper_gets_the_sleep_reaction(self) -> None:
        self.assistant.attributes.add("mindspace_sleep_message", "{name} snores at {speaker}.")
        assert "asleep (deep sleep)" in self.admin("Barkeep sleep deep")
        heard = self.listen(self.char1)
        others = self.listen(self.char2)
        self.char1.at_say("Barkeep, are you awake?")
        self.hear(heard, "Barkeep snores at Char.")
        self.hear(others, "Barkeep snores at Char.")  # the room sees it
        self.char1.at_say("Barkeep, WAKE UP", receivers=[self.assistant], whisper=True)
        self.hear(heard, "Barkeep snores at you.")  # a whisper: only the whisperer sees it
        assert not any("at you" in line for line in others)
        mode = self.on_loop(lambda a: a.views.mode())
        assert (mode.mode, mode.sleep_depth) == ("sleep", "deep")

    def tick_now(self) -> None:
        """One tick now (the ticker Script is stopped in tests), and wait for it."""
        self.assistant.mindspace.reschedule()
        assert self.assistant.mindspace.poll()
        settle(lambda: not self.assistant.mindspace.busy, what="the tick finished")

    def test_a_sleeping_assistant_shows_it_in_look_and_to_the_room(self) -> None:
        from mindspace.testing.chat_server import Step

        self.llm.respond = lambda body: Step(content="All quiet.")
        self.assistant.db.desc = "A stout dwarf behind the bar."
        self.tick_now()  # awake: its name and description as they are
        assert "(asleep)" not in self.room1.return_appearance(self.char1)
        others = self.listen(self.char2)
        self.admin("Barkeep sleep deep")
        self.tick_now()
        self.hear(others, "^Barkeep dozes off.$")
        room = self.room1.return_appearance(self.char1)
        assert "Barkeep (asleep)" in room
        look = self.assistant.return_appearance(self.char1)
        assert "A stout dwarf behind the bar.\nBarkeep is asleep." in look

        self.admin("Barkeep wake")
        self.tick_now()
        self.hear(others, "^Barkeep wakes up.$")
        assert "asleep" not in self.assistant.return_appearance(self.char1)
        assert "(asleep)" not in self.room1.return_appearance(self.char1)

    def test_speaking_to_a_light_sleeper_wakes_it(self) -> None:
        from mindspace.testing.chat_server import Step

        self.llm.respond = lambda body: Step(content="Mm. What is it?")
        assert "asleep (light sleep)" in self.admin("Barkeep sleep")
        heard = self.listen(self.char1)
        self.char1.at_say("Barkeep, a word?")
        # Spec 003: an urgent event (speech addressed to it) wakes a light sleeper; the
        # players see it stir (its answer follows once the engine has woken it).
        self.hear(heard, "Barkeep stirs and slowly wakes up.")
        assert not any("fast asleep" in line for line in heard)

    def test_a_model_failure_is_in_character_for_players_and_exact_for_builders(self) -> None:
        self.llm.fail(500)
        heard = self.listen(self.char1)
        others = self.listen(self.char2)
        self.char1.at_say("Barkeep? Are you there?")
        line = self.hear(heard, "distracted")
        assert line == 'Barkeep says, "I\'m sorry, I was distracted. Could you say that again?"'
        self.hear(others, "distracted")
        assert not any("LLMProviderError" in said or "[mindspace]" in said for said in heard)
        status = _flat(self.admin("Barkeep status"))
        assert "Last failure" in status
        assert "LLMProviderError" in status
        assert "UTC" in status
        failure = self.assistant.mindspace.last_failure
        assert failure is not None
        assert not failure.text.endswith(".")
        event_id = self.assistant.mindspace.last_report.event_id
        event = self.on_loop(lambda a: a.views.event(event_id))
        assert event.status == "failed"

    def test_a_whispered_question_fails_privately(self) -> None:
        self.llm.fail(500)
        self.assistant.attributes.add("mindspace_failure_message", "Hm? Say again?")
        heard = self.listen(self.char1)
        others = self.listen(self.char2)
        self.char1.at_say("a pint, please", receivers=[self.assistant], whisper=True)
        self.hear(heard, "Say again")
        assert not any("Say again" in said for said in others)

    def test_talk_names_the_assistant_or_needs_no_name_when_it_is_alone(self) -> None:
        others = self.listen(self.char2)
        self.llm.reply("Coming right up.")
        self.talk("Barkeep an ale, please")
        self.hear(others, 'Char says to Barkeep, "an ale, please"')
        self.hear(others, 'Barkeep says, "Coming right up."')
        assert "[say from Char in Room" in _system_text(self.llm.requests[-1])
        assert "an ale, please" in _system_text(self.llm.requests[-1])
        self.idle()
        self.llm.reply("Two it is.")
        self.talk("make that two")  # only one assistant here
        self.hear(others, 'Char says to Barkeep, "make that two"')
        self.hear(others, 'Barkeep says, "Two it is."')
        self.idle()
        heard = self.listen(self.char1)
        self.talk("Barkeep")
        assert heard[-1] == "Say what to Barkeep? Type: talk Barkeep <what to say>."
        self.assistant.location = self.room2
        self.talk("hello?")
        assert heard[-1] == "There is nobody here to talk to."

    def test_status_tells_a_paused_or_stopped_ticker(self) -> None:
        (script,) = self.assistant.scripts.get(TICKER_KEY)
        stopped = _flat(self.admin("Barkeep status"))
        assert f"not ticking (the ticker Script {script.dbref} is stopped" in stopped
        assert "next tick in" not in stopped
        script.start()
        script.pause()
        paused = _flat(self.admin("Barkeep status"))
        assert f"paused (the ticker Script {script.dbref} is paused; resume:" in paused
        assert f"script/start {script.dbref})" in paused
        assert "no tick until the Script runs" in paused
        assert "next tick in" not in paused
        script.start()
        ticking = _flat(self.admin("Barkeep status"))
        assert f"ticking (Script {script.dbref})" in ticking
        assert "next tick in" in ticking
        script.stop()

    def test_errors_name_the_attribute_that_set_the_value(self) -> None:
        config = resolve_config(self.assistant)
        message = (
            "Cannot reach the LLM at 'http://x' (Connection error); check "
            "MINDSPACE_LLM_BASE_URL and that the server is running."
        )
        explained = explain_error(message, config)
        assert "MINDSPACE_LLM_BASE_URL (here: Attribute 'mindspace_llm_base_url' of Barkeep(#" in (
            explained
        )
        assert not explained.endswith(".")
