"""The ``assistant`` admin command, with Evennia's test classes."""

from __future__ import annotations

import json
from typing import Any

from evennia.objects.models import ObjectDB
from evennia.utils.test_resources import BaseEvenniaCommandTest

from mindspace.hosts.evennia.commands import AssistantAdminCmdSet, CmdAssistant
from mindspace.hosts.evennia.testing import AssistantTestMixin, wait


class TestAssistantCommand(AssistantTestMixin, BaseEvenniaCommandTest):
    def admin(self, args: str, caller: Any = None) -> str:
        """Run ``assistant <args>`` as ``caller`` and wait for its (asynchronous) answer."""
        caller = caller or self.char1
        heard = self.listen(caller)
        command = CmdAssistant()
        command.caller = command.obj = caller
        command.cmdname = command.cmdstring = "assistant"
        command.args = " " + args if args else ""
        command.session = None
        command.account = caller.account
        assert command.access(caller, "cmd")
        command.parse()
        deferred = command.func()
        if deferred is not None:
            wait(deferred)
        return "\n".join(heard)

    def converse(self) -> None:
        """Char talks to Barkeep, who sets a goal, writes a journal entry and answers."""
        self.llm.reply(
            tool_calls=[
                {"name": "add_goal", "arguments": {"description": "Keep the cellar stocked"}},
                {
                    "name": "add_journal_entry",
                    "arguments": {"content": "Char asked about the cellar stock", "importance": 6},
                },
                {
                    "name": "update_entity_observation",
                    "arguments": {"entity_id": "Char", "observation": "Char likes dark ale"},
                },
            ]
        )
        self.llm.reply("I will keep the cellar full.")
        heard = self.listen(self.char2)
        self.char1.at_say("Barkeep, keep the cellar stocked")
        self.hear(heard, "keep the cellar full")

    def test_only_builders_and_above_may_use_it(self) -> None:
        command = CmdAssistant()
        assert command.access(self.char1, "cmd")  # Developer
        assert not command.access(self.char2, "cmd")  # Player
        self.char2.cmdset.add(AssistantAdminCmdSet)
        heard = self.listen(self.char2)
        self.char2.execute_cmd("assistant Barkeep status")
        assert any("not available" in line for line in heard)

    def test_status_shows_mode_ticker_model_and_store(self) -> None:
        out = self.admin("Barkeep status")
        assert "Assistant barkeep" in out
        assert "Barkeep (#" in out
        assert "in Room" in out
        assert "awake" in out
        assert f"scripted at {self.llm.url}" in out
        assert "mindspace.db" in out
        assert "No approvals pending." in out
        assert "No open events." in out

    def test_goals_journal_memories_and_entities(self) -> None:
        self.converse()
        goals = self.admin("barkeep goals")
        assert "Goals of barkeep" in goals
        assert "Keep the cellar stocked" in " ".join(goals.split())
        assert "[----------] 0%" in goals
        journal = self.admin("Barkeep journal")
        assert "Char asked about the cellar stock" in journal
        memories = self.admin("Barkeep memories")
        # What Char said is memory at once (formation), whatever the model did.
        assert "Barkeep, keep the cellar stocked" in " ".join(memories.split())
        wait(
            self.assistant.mindspace.call(
                lambda a: a.call_tool("store_memory", {"content": "The cellar holds 12 casks"})
            )
        )
        assert "The cellar holds 12 casks" in self.admin("Barkeep memories")
        entities = self.admin("Barkeep entities")
        assert "Char" in entities
        assert "Char likes dark" in entities  # (the column wraps at 78 characters)

    def test_sleep_and_wake(self) -> None:
        asleep = self.admin("Barkeep sleep deep")
        assert "is asleep (deep sleep) until " in asleep  # every sleep says when it ends
        assert "sleep: deep sleep" in self.admin("Barkeep status")
        assert self.on_loop(lambda a: a.views.mode().mode) == "sleep"
        assert self.assistant.mindspace.next_due <= self.assistant.mindspace.seconds()
        assert "is awake" in self.admin("Barkeep wake")
        assert self.on_loop(lambda a: a.views.mode().mode) == "awake"
        assert "Use 'assistant Barkeep sleep [deep]'" in self.admin("Barkeep sleep soundly")

    def test_prompt_shows_and_replaces_the_operator_prompt(self) -> None:
        assert "You are Barkeep" in self.admin("Barkeep prompt")
        out = self.admin("Barkeep prompt You are Barkeep, a gruff dwarf. Answer in one line.")
        assert "a gruff dwarf" in out
        prompt = self.on_loop(lambda a: a.views.user_system_prompt())
        assert prompt == "You are Barkeep, a gruff dwarf. Answer in one line."

    def test_approving_runs_the_command_as_the_assistant(self) -> None:
        self.assistant.permissions.add("Builder")
        self.llm.reply(
            tool_calls=[{"name": "execute_command", "arguments": {"command": "dig Cellar"}}]
        )
        self.llm.reply("I asked for a cellar.")
        self.llm.reply("The cellar is dug, thank you!")  # its answer to the approval event
        heard = self.listen(self.char1)
        self.char1.at_say("Barkeep, we need a cellar")
        self.hear(heard, "asked for a cellar")
        status = self.admin("Barkeep status")
        assert "Pending approvals" in status
        assert '{"command": "dig Cellar"}' in " ".join(status.split())
        out = self.admin("Barkeep approve 1")
        assert out.startswith("Approved apr_1; it ran. Output:")
        assert "Created room Cellar" in out
        assert ObjectDB.objects.filter(db_key="Cellar").exists()
        self.hear(heard, "cellar is dug")
        approval = self.on_loop(lambda a: a.views.approval("apr_1"))
        assert (approval.status, approval.decided_by) == ("approved", "Char")
        assert "No approvals pending." in self.admin("Barkeep status")
        assert "No pending approval 'apr_1'" in self.admin("Barkeep approve 1")

    def test_rejecting_and_the_rank_rule(self) -> None:
        self.assistant.permissions.add("Developer")
        for number in (1, 2):
            wait(self.assistant.mindspace.call(lambda a, n=number: _request(a, f"dig Room{n}")))
        self.char1.permissions.remove("Developer")
        self.char1.account.permissions.remove("Developer")
        self.char1.account.permissions.add("Builder")  # checked for a puppeted character
        out = self.admin("Barkeep approve 1")
        assert "Barkeep holds the permission 'Developer', above yours" in out
        assert "it ran" not in out
        self.llm.reply("Understood, no new room today.")
        heard = self.listen(self.char2)
        assert "Rejected apr_2" in self.admin("Barkeep reject 2 not today")
        pending = self.on_loop(lambda a: [p.id for p in a.views.pending_approvals()])
        assert pending == ["apr_1"]
        self.hear(heard, "no new room today")  # the assistant is told, and answers
        prompt = str(self.llm.requests[-1]["messages"])
        assert "[approval from Char" in prompt
        assert (
            "Char rejected your request apr_2 (execute_command): not today. It did not run."
            in prompt
        )

    def test_bad_input_gets_clear_errors(self) -> None:
        assert "No assistant called 'Bob'. Assistants: Barkeep (#" in self.admin("Bob status")
        assert "Unknown subcommand 'dance'" in self.admin("Barkeep dance")
        assert "Give the number of the approval" in self.admin("Barkeep approve first")
        assert "Unclosed quote" in self.admin('"Barkeep status')
        long_prompt = "x" * 9000
        assert "user_system_prompt" in self.admin(f"Barkeep prompt {long_prompt}")
        self.assistant.attributes.add("mindspace_llm_timeout", -1)
        out = self.admin("Barkeep status")
        assert "Invalid mindspace configuration for Barkeep(#" in out
        assert "llm_timeout from Attribute 'mindspace_llm_timeout'" in out

    def test_listing_and_finding_by_key_dbref_and_quotes(self) -> None:
        listing = self.admin("")
        assert "Assistants" in listing
        assert "barkeep" in listing
        assert "Assistant barkeep" in self.admin(f"{self.assistant.dbref} status")
        assert "Assistant barkeep" in self.admin('"Barkeep" status')


async def _request(assistant: Any, command: str) -> dict[str, Any]:
    result: dict[str, Any] = await assistant.call_tool(
        "execute_command", json.dumps({"command": command})
    )
    assert result["status"] == "awaiting_approval"
    return result
