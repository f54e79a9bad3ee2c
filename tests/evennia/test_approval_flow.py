"""The approval flow end to end in Evennia: the model asks, a Builder decides, the model hears.

The engine keeps the approval and tells the model the decision (an ``approval`` event
on its next tick); these tests read what the scripted LLM received on that tick.
"""

from __future__ import annotations

from typing import Any

from evennia.objects.models import ObjectDB
from evennia.utils.test_resources import BaseEvenniaCommandTest

from mindspace.hosts.evennia.commands import CmdAssistant
from mindspace.hosts.evennia.testing import AssistantTestMixin, settle, wait


def _prompt_text(request: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in request["messages"])


class TestApprovalFlow(AssistantTestMixin, BaseEvenniaCommandTest):
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

    def ask_for(self, command: str) -> list[str]:
        """Char asks Barkeep for something; the model requests ``command`` and says so."""
        self.llm.reply(tool_calls=[{"name": "execute_command", "arguments": {"command": command}}])
        self.llm.reply("I asked a Builder for that.")
        heard = self.listen(self.char1)
        self.char1.at_say("Barkeep, we need a cellar")
        self.hear(heard, "asked a Builder")
        pending = self.on_loop(lambda a: [p.id for p in a.views.pending_approvals()])
        assert pending == ["apr_1"]
        return heard

    def next_prompt(self, heard: list[str], answer: str) -> str:
        """What the model received on the tick after the decision (it answers ``answer``)."""
        self.hear(heard, answer)
        settle(lambda: not self.assistant.mindspace.busy, what="the tick finished")
        return _prompt_text(self.llm.requests[-1])

    def test_an_approved_request_runs_and_the_model_is_told_it_ran(self) -> None:
        self.assistant.permissions.add("Builder")
        heard = self.ask_for("dig Cellar")
        assert not ObjectDB.objects.filter(db_key="Cellar").exists()  # not before approval
        self.llm.reply("The cellar is dug!")
        out = self.admin("Barkeep approve 1")
        assert out.startswith("Approved apr_1; it ran. Output:")
        assert ObjectDB.objects.filter(db_key="Cellar").exists()
        prompt = self.next_prompt(heard, "cellar is dug")
        assert "[approval from Char" in prompt
        assert "Char approved your request apr_1 (execute_command); it ran." in prompt
        assert "Created room Cellar" in prompt  # the command's output reaches the model
        approval = self.on_loop(lambda a: a.views.approval("apr_1"))
        assert (approval.status, approval.decided_by) == ("approved", "Char")

    def test_a_rejected_request_never_runs_and_the_model_is_told(self) -> None:
        self.assistant.permissions.add("Builder")
        heard = self.ask_for("dig Cellar")
        self.llm.reply("Fine, no cellar then.")
        out = self.admin("Barkeep reject 1 we have no shovels")
        assert "Rejected apr_1; it will not run." in out
        prompt = self.next_prompt(heard, "no cellar then")
        assert "[approval from Char" in prompt
        assert (
            "Char rejected your request apr_1 (execute_command): we have no shovels. "
            "It did not run." in prompt
        )
        assert not ObjectDB.objects.filter(db_key="Cellar").exists()
        approval = self.on_loop(lambda a: a.views.approval("apr_1"))
        assert (approval.status, approval.decided_by) == ("rejected", "Char")

    def test_a_command_the_character_may_not_use_is_not_reported_as_run(self) -> None:
        # Barkeep holds no Builder permission: the game refuses 'dig' as if unknown.
        heard = self.ask_for("dig Cellar")
        self.llm.reply("I may not dig, it seems.")
        out = self.admin("Barkeep approve 1")
        assert "it ran" not in out
        assert "Approved apr_1, but it failed:" in out
        assert "may not run 'dig Cellar'" in out
        assert not ObjectDB.objects.filter(db_key="Cellar").exists()
        prompt = self.next_prompt(heard, "may not dig")
        assert "Char approved your request apr_1 (execute_command); it failed:" in prompt
        assert "it ran" not in prompt
        approval = self.on_loop(lambda a: a.views.approval("apr_1"))
        assert approval.status == "failed"
