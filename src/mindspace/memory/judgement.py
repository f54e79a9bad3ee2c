"""The model's judgement on a close call between a new fact and the memories near it.

The rules of :mod:`mindspace.memory.reconcile` decide every write. At night, where a
model is at hand, a fact whose rules said "add" or "update" while the same speaker has
current memories close to it is shown to the model with those memories, and it answers
ADD, NOOP (the same fact) or UPDATE (a newer value of the same thing) as one JSON object
(strict structured output: one repair, then the rules' decision). Its answer is used only
within what the rules allow: it must name one of the memories shown, a NOOP must claim
the same numbers and polarity, and an unreachable or unusable model leaves the rules'
decision. The number of questions per tick is bounded (``memory_reconcile_model_calls``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from mindspace.errors import LLMError
from mindspace.llm.parsing.structured import ask_structured
from mindspace.llm.port import LLM, Message
from mindspace.memory.reconcile import Decision, Fact, Near, same_claim

__all__ = ["JUDGE_PROMPT", "Judgement", "ModelJudge"]

logger = logging.getLogger("mindspace.memory")

JUDGE_PROMPT = """You keep a long-term memory of facts. A new fact arrived. Below it are the \
stored facts most like it, each with its id.

Decide one action:
- NOOP: the new fact says the same as one stored fact (it is kept once).
- UPDATE: the new fact replaces one stored fact: the same person's same single thing \
(where they live, their job, a favourite) with a newer value. The old one is kept as past.
- ADD: the new fact is other information; store it beside them.

Answer with only a JSON object: {{"action": "ADD" or "NOOP" or "UPDATE", "id": the stored \
fact's id for NOOP or UPDATE, else null}}

New fact ({speaker}, {when}): {fact}

Stored facts:
{stored}"""

EXPECTED = 'a JSON object {"action": "ADD" | "NOOP" | "UPDATE", "id": "<id>" | null}'


class Judgement(BaseModel):
    """The model's answer."""

    model_config = ConfigDict(strict=True, extra="forbid")

    action: Literal["ADD", "NOOP", "UPDATE"]
    id: str | None = None


class ModelJudge:
    """Asks the model about close calls, within a budget of questions.

    Args:
        llm: The model.
        max_calls: How many questions at most (each may take one repair request).
        max_tokens: The answer's token limit.

    Attributes:
        asked: Questions asked so far.
        used: Answers that were used (parsed, valid and within the rules).
        refused: Answers that were not (unparsable, unknown id, a NOOP that claims
            otherwise); the rules decided those.
    """

    def __init__(self, llm: LLM, *, max_calls: int, max_tokens: int | None = 200) -> None:
        self.llm = llm
        self.max_calls = max_calls
        self.max_tokens = max_tokens
        self.asked = 0
        self.used = 0
        self.refused = 0
        self._down = False

    @property
    def available(self) -> bool:
        """Questions are left in the budget and the model has not failed."""
        return not self._down and self.asked < self.max_calls

    async def judge(self, fact: Fact, near: Sequence[Near], rules: Decision) -> Decision:
        """The decision for ``fact``: the model's, when usable, else ``rules``.

        Args:
            fact: The new fact.
            near: The close memories the model may name (the same speaker's, current).
            rules: What the rules decided; returned whenever the model's answer is not used.
        """
        if not near or not self.available:
            return rules
        self.asked += 1
        prompt = JUDGE_PROMPT.format(
            speaker=fact.source_entity or "no speaker",
            when=fact.occurred_at,
            fact=fact.content,
            stored="\n".join(
                f"[{n.memory.id}] ({n.memory.valid_from or n.memory.occurred_at}) "
                f"{n.memory.content}"
                for n in near
            ),
        )
        try:
            answer = await ask_structured(
                self.llm,
                [Message("user", prompt)],
                Judgement,
                expected=EXPECTED,
                max_tokens=self.max_tokens,
                temperature=0.0,
            )
        except LLMError as exc:
            # A model that cannot be reached now will not be reached for the next fact.
            logger.warning("Reconciliation fell back to the rules: %s", exc)
            self._down = True
            return rules
        decision = _within_rules(answer.value, fact, near)
        if decision is None:
            self.refused += 1
            return rules
        self.used += 1
        return decision


def _within_rules(value: Judgement | None, fact: Fact, near: Sequence[Near]) -> Decision | None:
    """The model's answer as a decision, or None when the rules do not allow it."""
    if value is None:
        return None
    if value.action == "ADD":
        return Decision("add", reason="the model: other information", by="model")
    chosen = next((n for n in near if n.memory.id == value.id), None)
    if chosen is None:
        return None
    if value.action == "NOOP":
        if not same_claim(fact.content, chosen.memory.content):
            return None
        return Decision("restate", (chosen.memory.id,), "the model: the same fact", "model")
    return Decision("update", (chosen.memory.id,), "the model: a newer value", "model")
