"""The assistant character with Evennia's own test classes: hooks, replies, world tools.

The LLM is a scripted chat-completions server reached over real HTTP; the store is a
real SQLite file; the bridge is the real asyncio thread.
"""

from __future__ import annotations

import json
from typing import Any

from evennia.utils.test_resources import BaseEvenniaTest
from twisted.internet import reactor

from mindspace.engine.records import ContextBuffer
from mindspace.hosts.evennia.bridge import Bridge
from mindspace.hosts.evennia.config import resolve_config
from mindspace.hosts.evennia.runtime import AssistantRuntime, install_runtime
from mindspace.hosts.evennia.testing import AssistantTestMixin, settle, wait
from mindspace.hosts.evennia.typeclasses import (
    ASSISTANT_TAG,
    TAG_CATEGORY,
    TICKER_KEY,
    AssistantTickerScript,
)


def _prompt_text(request: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in request["messages"])


class TestAssistantCharacter(AssistantTestMixin, BaseEvenniaTest):
    def events(self) -> list[Any]:
        return self.on_loop(lambda a: a.views.open_events())

    def test_a_new_assistant_has_a_key_a_tag_and_a_persistent_ticker(self) -> None:
        assert self.assistant.attributes.get("mindspace_key") == "barkeep"
        assert self.assistant.tags.has(ASSISTANT_TAG, category=TAG_CATEGORY)
        (script,) = self.assistant.scripts.get(TICKER_KEY)
        assert isinstance(script, AssistantTickerScript)
        assert script.interval == 1
        assert script.persistent
        assert self.assistant.mindspace_key == "barkeep"

    def test_speech_naming_it_is_answered_aloud_in_the_room(self) -> None:
        self.llm.reply("Coming right up, Char!")
        heard, other = self.listen(self.char1), self.listen(self.char2)
        self.char1.at_say("Barkeep, a pint of dark ale please", msg_self=True)
        line = self.hear(heard, "Coming right up")
        assert line == 'Barkeep says, "Coming right up, Char!"'
        self.hear(other, "Coming right up")
        prompt = _prompt_text(self.llm.requests[0])
        assert "[say from Char in Room" in prompt
        assert "Barkeep, a pint of dark ale please" in prompt
        assert "You are Barkeep, a character in" in prompt  # the default operator prompt

    def test_a_whisper_is_answered_privately(self) -> None:
        self.llm.reply("The cellar has a cask of mead.")
        heard, other = self.listen(self.char1), self.listen(self.char2)
        self.char1.at_say("anything special?", receivers=[self.assistant], whisper=True)
        line = self.hear(heard, "cask of mead")
        assert line == 'Barkeep whispers: "The cellar has a cask of mead."'
        assert not any("mead" in text for text in other)
        assert "[whisper from Char" in _prompt_text(self.llm.requests[0])

    def test_speech_around_it_is_ambient_and_feeds_the_context_buffer(self) -> None:
        self.char1.at_say("lovely weather today, Char2")
        settle(lambda: self.events(), what="the ambient event is stored")
        (event,) = self.events()
        assert (event.type, event.source_entity, event.classification) == ("say", "Char", "ambient")
        assert event.content == "lovely weather today, Char2"
        assert event.metadata["present"] == ["Char", "Char2"]
        wait(self.assistant.mindspace.call(lambda a: a.tick()))
        buffer = self.on_loop(lambda a: a._core.read().doc(ContextBuffer))
        assert [m.text for m in buffer.messages] == ["lovely weather today, Char2"]
        assert self.llm.requests == []  # ambient speech costs no LLM call

    def test_speech_when_alone_with_it_is_addressed(self) -> None:
        self.char2.move_to(self.room2, quiet=True)
        self.llm.reply("Welcome, traveller.")
        heard = self.listen(self.char1)
        self.char1.at_say("hello there")
        self.hear(heard, "Welcome, traveller")

    def test_a_pose_naming_it_is_addressed_others_are_ambient(self) -> None:
        self.llm.reply("Barkeep nods back.")
        heard = self.listen(self.char1)
        self.room1.msg_contents(text=("Char2 stretches.", {"type": "pose"}), from_obj=self.char2)
        self.room1.msg_contents(
            text=("Char waves at Barkeep.", {"type": "pose"}), from_obj=self.char1
        )
        self.hear(heard, "nods back")
        prompt = _prompt_text(self.llm.requests[0])
        assert "[pose from Char in Room" in prompt
        assert "Char waves at Barkeep." in prompt
        assert "Char2 stretches." in prompt  # the ambient pose reached the context buffer

    def test_assistants_hear_each_other_only_as_background(self) -> None:
        from evennia.utils import create

        tom = create.create_object(
            type(self.assistant), key="Tom", location=self.room1, home=self.room1
        )
        self.addCleanup(tom.delete)
        for script in tom.scripts.get(TICKER_KEY):
            script.stop()
        tom.at_say("Barkeep, shall we talk forever?")
        settle(lambda: self.events(), what="Tom's words are stored")
        (event,) = self.events()
        assert (event.source_entity, event.classification) == ("Tom", "ambient")

    def test_arrivals_and_departures_are_noticed(self) -> None:
        self.char2.move_to(self.room2)
        settle(lambda: len(self.events()) == 1, what="the departure")
        self.char2.move_to(self.room1)  # players move one command (reactor turn) at a time
        settle(lambda: len(self.events()) == 2, what="the arrival")
        departure, arrival = self.events()
        assert (departure.type, departure.source_entity) == ("departure", "Char2")
        assert "is leaving Room" in departure.content
        assert (arrival.type, arrival.classification) == ("arrival", "ambient")
        assert "arrives to Room" in arrival.content

    def test_a_failing_model_answers_in_character_and_marks_the_event_failed(self) -> None:
        self.llm.fail(500)
        heard = self.listen(self.char1)
        self.char1.at_say("Barkeep? Are you there?")
        line = self.hear(heard, "distracted")
        assert line.startswith("Barkeep says, \"I'm sorry, I was distracted.")
        report = self.assistant.mindspace.last_report
        assert report is not None
        assert report.status == "failed"
        event = self.on_loop(lambda a: a.views.event(report.event_id))
        assert event.status == "failed"
        assert "LLMProviderError" in event.error

    def test_a_slow_reply_shows_that_it_is_thinking(self) -> None:
        self.assistant.attributes.add("mindspace_thinking_delay", 0.2)
        self.llm.reply("Let me see... yes, we have mead.", delay=1.5)
        heard = self.listen(self.char1)
        self.char1.at_say("Barkeep, do you have mead?")
        self.hear(heard, "we have mead")
        thinking = [line for line in heard if "thinks about" in line]
        assert thinking == ["Barkeep thinks about what Char said..."]
        assert heard.index(thinking[0]) < next(
            i for i, said in enumerate(heard) if "we have" in said
        )

    def test_a_fast_reply_shows_no_thinking(self) -> None:
        self.assistant.attributes.add("mindspace_thinking_delay", 2)
        self.llm.reply("Right away.")
        heard = self.listen(self.char1)
        self.char1.at_say("Barkeep, water please")
        self.hear(heard, "Right away")
        settle(lambda: not self.assistant.mindspace.busy)
        assert not any("thinks about" in line for line in heard)

    def test_world_tools_look_whisper_and_move(self) -> None:
        self.llm.reply(
            tool_calls=[
                {"name": "inspect_location", "arguments": {}},
                {"name": "look", "arguments": {}},
            ]
        )
        self.llm.reply(
            tool_calls=[
                {"name": "whisper", "arguments": {"target": "Char2", "text": "Psst."}},
                {"name": "emote", "arguments": {"text": "polishes a glass."}},
            ]
        )
        self.llm.reply(tool_calls=[{"name": "move", "arguments": {"exit": "out"}}])
        self.llm.reply("On my way.")
        heard, other = self.listen(self.char1), self.listen(self.char2)
        self.char1.at_say("Barkeep, please go out")
        settle(lambda: self.assistant.location == self.room2, what="the assistant moved")
        settle(lambda: self.llm.pending == 0 and not self.assistant.mindspace.busy)
        results = [
            json.loads(m["content"])
            for m in self.llm.requests[-1]["messages"]
            if m["role"] == "tool"
        ]
        inspected, looked, whispered, emoted, moved = results
        assert inspected["location"] == "Room"
        assert inspected["exits"] == [{"name": "out", "leads_to": "Room2"}]
        assert set(inspected["characters"]) == {"Char", "Char2"}
        assert "Room" in looked["description"]
        assert whispered == {"success": True, "whispered": "Psst.", "target": "Char2"}
        assert 'Barkeep whispers: "Psst."' in other
        assert not any("Psst" in line for line in heard)
        assert emoted["success"]
        assert "Barkeep polishes a glass." in heard
        assert moved == {"success": True, "location": "Room2", "came_from": "Room"}
        assert not any("On my way" in line for line in heard)  # said in Room2

    def test_a_tool_error_goes_back_to_the_model(self) -> None:
        self.llm.reply(tool_calls=[{"name": "move", "arguments": {"exit": "north"}}])
        self.llm.reply("There is no way north.")
        heard = self.listen(self.char1)
        self.char1.at_say("Barkeep, go north")
        self.hear(heard, "no way north")
        (result,) = [m for m in self.llm.requests[-1]["messages"] if m["role"] == "tool"]
        error = json.loads(result["content"])
        assert error["success"] is False
        assert error["error"] == "No exit called 'north' here"
        assert "Exits: out" in error["suggestion"]

    def test_execute_command_always_waits_for_approval(self) -> None:
        self.llm.reply(
            tool_calls=[{"name": "execute_command", "arguments": {"command": "dig Cellar"}}]
        )
        self.llm.reply("I have asked for the cellar to be dug.")
        heard = self.listen(self.char1)
        self.char1.at_say("Barkeep, build a cellar")
        self.hear(heard, "asked for the cellar")
        (approval,) = self.on_loop(lambda a: a.views.pending_approvals())
        assert (approval.id, approval.tool) == ("apr_1", "execute_command")
        assert json.loads(approval.arguments) == {"command": "dig Cellar"}
        (result,) = [m for m in self.llm.requests[-1]["messages"] if m["role"] == "tool"]
        assert json.loads(result["content"])["status"] == "awaiting_approval"
        from evennia.objects.models import ObjectDB

        assert not ObjectDB.objects.filter(db_key="Cellar").exists()  # nothing ran

    def test_a_tick_interrupted_by_shutdown_is_retried(self) -> None:
        first = Bridge(reactor, name="mindspace-first")
        config = resolve_config(self.assistant)
        install_runtime(self.assistant, AssistantRuntime(self.assistant, config, bridge=first))
        gate = self.llm.hold()
        heard = self.listen(self.char1)
        self.char1.at_say("Barkeep, hello?")
        settle(gate.arrived.is_set, what="the tick reached the model")
        first.stop()  # what a reload does to the server process
        gate.release()
        settle(lambda: not self.assistant.mindspace.busy)
        second = Bridge(reactor, name="mindspace-second")
        self.addCleanup(second.stop)
        install_runtime(self.assistant, AssistantRuntime(self.assistant, config, bridge=second))
        (event,) = self.events()
        assert (event.status, event.attempts) == ("processing", 1)
        self.llm.reply("Sorry, I was miles away. Hello!")
        self.assistant.mindspace.poll()
        self.hear(heard, "miles away")
        assert self.events() == []
        done = self.on_loop(lambda a: a.views.event(event.id))
        assert (done.status, done.attempts) == ("done", 2)

    def test_configuration_order(self) -> None:
        from django.test import override_settings

        from mindspace.errors import ConfigError

        cls = type(self.assistant)
        for name, value in (("mindspace_thinking_delay", 7.0), ("mindspace_tick_rate_awake", 9.0)):
            setattr(cls, name, value)  # what a game's subclass does
            self.addCleanup(delattr, cls, name)
        self.assistant.attributes.remove("mindspace_thinking_delay")
        with override_settings(MINDSPACE_THINKING_DELAY=4.0, MINDSPACE_LLM_TIMEOUT=11.0):
            config = resolve_config(self.assistant)
            assert config.options.thinking_delay == 7.0  # class beats settings
            assert config.settings.llm_timeout == 11.0  # settings beat the default
            assert config.settings.tick_rate_awake == 9.0
            assert config.settings.model_limit == 128_000  # the default
            self.assistant.attributes.add("mindspace_thinking_delay", 1.5)
            assert resolve_config(self.assistant).options.thinking_delay == 1.5  # attribute wins
            self.assistant.attributes.add("mindspace_tick_rate_awake", "soon")
            try:
                resolve_config(self.assistant)
            except ConfigError as exc:
                message = str(exc)
            assert "tick_rate_awake from Attribute 'mindspace_tick_rate_awake'" in message
            assert "'soon'" in message
        assert config.store_url == f"sqlite:///{self.mindspace_dir / 'mindspace.db'}"
        assert config.names == ("Barkeep",)
