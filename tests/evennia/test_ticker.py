"""The ticker: tick rates by mode, the busy guard, nudges, and the Script that polls.

The ticker's time is a Twisted ``task.Clock`` advanced by hand, so no test sleeps to
wait for a tick to come due.
"""

from __future__ import annotations

from typing import Any

from evennia.utils.test_resources import BaseEvenniaTest
from twisted.internet.task import Clock

from mindspace.hosts.evennia.config import resolve_config
from mindspace.hosts.evennia.runtime import AssistantRuntime, install_runtime, runtime_for
from mindspace.hosts.evennia.testing import AssistantTestMixin, settle, wait
from mindspace.hosts.evennia.typeclasses import TICKER_KEY


class TestTicker(AssistantTestMixin, BaseEvenniaTest):
    def setUp(self) -> None:
        super().setUp()
        self.clock = Clock()
        self.clock.advance(1_000)
        self.runtime = AssistantRuntime(
            self.assistant, resolve_config(self.assistant), now=self.clock.seconds
        )
        install_runtime(self.assistant, self.runtime)

    def tick(self) -> None:
        assert self.runtime.poll(), "a tick was due"
        settle(lambda: not self.runtime.busy, what="the tick finished")

    def test_awake_ticks_come_every_tick_rate_awake(self) -> None:
        self.tick()
        assert self.runtime.ticks == 1
        assert self.runtime.mode == "awake"
        assert self.runtime.next_due == 1_005  # tick_rate_awake = 5 s
        assert not self.runtime.poll()
        self.clock.advance(4.9)
        assert not self.runtime.poll()
        self.clock.advance(0.1)
        self.tick()
        assert self.runtime.ticks == 2

    def test_a_running_tick_is_never_overlapped(self) -> None:
        gate = self.llm.hold()
        self.on_loop(
            lambda a: a.enqueue_event(
                "hello", source_entity="Char", metadata={"classification": "direct_addressing"}
            )
        )
        assert self.runtime.poll()
        settle(gate.arrived.is_set, what="the tick reached the model")
        self.clock.advance(60)
        assert not self.runtime.poll()  # busy: the Script's next repeats do nothing
        assert self.runtime.busy
        self.runtime.nudge()  # an addressed event while busy: tick again right after
        gate.release()  # the held request fails (503): the event fails, the tick ends
        settle(lambda: self.runtime.ticks == 2 and not self.runtime.busy, what="a second tick")
        assert self.runtime.last_report is not None
        assert self.runtime.last_report.kind == "idle"  # the nudged tick found nothing left

    def test_asleep_ticks_follow_the_sleep_rate(self) -> None:
        wait(self.runtime.call(_asleep))
        self.tick()
        assert self.runtime.mode == "sleep"
        assert self.runtime.rate == 60
        assert self.runtime.next_due == 1_060
        self.runtime.nudge()  # an event that is not urgent does not rush a sleeper's ticks
        assert not self.runtime.busy
        assert self.runtime.next_due == 1_060
        self.clock.advance(60)
        self.tick()
        assert self.runtime.ticks == 2
        self.runtime.nudge(urgent=True)  # an urgent one does (the tick may wake it)
        settle(lambda: self.runtime.ticks == 3 and not self.runtime.busy, what="a rushed tick")
        assert self.clock.seconds() == 1_060

    def test_an_event_tick_is_followed_at_once_by_the_next(self) -> None:
        addressed = {"classification": "direct_addressing"}
        for text in ("Barkeep, one ale", "Barkeep, and one cider"):
            self.on_loop(
                lambda a, t=text: a.enqueue_event(
                    t, type="say", source_entity="Char", metadata=addressed
                )
            )
        self.llm.reply("An ale.")
        self.llm.reply("A cider.")
        self.tick()
        assert self.runtime.next_due == self.clock.seconds()  # the backlog drains
        self.tick()
        assert self.runtime.next_due == self.clock.seconds()
        self.tick()  # idle: nothing left
        assert self.runtime.next_due == self.clock.seconds() + 5
        first, second = (str(r["messages"]) for r in self.llm.requests)
        assert "Barkeep, one ale" in first
        assert "Barkeep, and one cider" in second

    def test_the_ticker_script_polls_its_character(self) -> None:
        (script,) = self.assistant.scripts.get(TICKER_KEY)
        script.at_repeat()
        assert self.runtime.busy or self.runtime.ticks == 1
        settle(lambda: self.runtime.ticks == 1)
        assert script.at_repeat() is None  # never a Deferred for the Script to wait on

    def test_changing_an_attribute_reopens_the_assistant(self) -> None:
        assert runtime_for(self.assistant) is self.runtime
        self.assistant.attributes.add("mindspace_tick_rate_awake", 2.5)
        reopened = runtime_for(self.assistant)
        assert reopened is not self.runtime
        assert self.runtime.closed
        assert reopened.config.settings.tick_rate_awake == 2.5
        assert not self.runtime.poll()  # a closed runtime never ticks


async def _asleep(assistant: Any) -> None:
    await assistant.sleep("test", deep=True)
