"""The ReAct loop under a composed execution pattern.

Each iteration asks the LLM once, then runs the tool calls it made:

* a tool that is not offered in this context (filtered out by name or category) is
  refused, as are unknown tools and malformed arguments; the error goes back to the
  model and counts towards ``recent_errors``;
* a call identical to an earlier one in the same loop (same name, same canonical JSON
  arguments) is not run again: the model gets an error result that quotes the earlier
  result's key fields, and nothing is written twice;
* SAFE_CHAIN tools continue the loop; a TERMINAL tool ends it when the pattern says so;
* a DANGEROUS tool under ``dangerous_requires_confirm`` becomes a pending approval and
  the model is told it awaits approval;
* ASYNC_REQUIRED tools are awaited like any other.

A response without native tool calls is searched for tool calls written as text
(:mod:`mindspace.llm.parsing.text_calls`); those run like native calls under synthesised ids,
and unreadable ones are failed calls the model is told about. The loop ends on a
plain-text answer (the reply, cleaned by :mod:`mindspace.engine.hygiene`; a reply cut
by the length limit is continued once, then ended at its last full sentence), a
terminal tool, a single-action pattern after its one round, or ``max_iterations`` - a
hard stop. Prose written around text tool calls is the reply only if the loop ends
without another answer.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from mindspace.clock import Clock, format_time
from mindspace.context.assembly import AssembledPrompt
from mindspace.context.contexts import ContextConfig
from mindspace.context.patterns import ExecutionPattern
from mindspace.engine.hygiene import Removal, ReplyPolicy, end_at_sentence
from mindspace.engine.records import EngineState
from mindspace.engine.tool_calls import (
    ToolCallRecord,
    ToolRunnerFn,
    calls_from_text,
    canonical,
    one_call,
    repeated,
    result_text,
    unreadable,
)
from mindspace.llm.parsing.text_calls import scan_text_calls
from mindspace.llm.port import (
    LLM,
    LLMResponse,
    Message,
    ToolSchema,
    Usage,
    clean_response,
)
from mindspace.state.unit import Unit
from mindspace.tools.base import Tool, ToolCategory
from mindspace.tools.profiles import MORE_TOOLS, ToolProfile, listed_schemas, more_tools_result
from mindspace.tools.registry import ToolRegistry
from mindspace.workspace.records import ContextUsage
from mindspace.workspace.status import LoopSnapshot

__all__ = [
    "CONTINUE_PROMPT",
    "LoopResult",
    "SideSession",
    "offered_tools",
    "run_react_loop",
]

logger = logging.getLogger("mindspace.engine")

StopReason = Literal["final_answer", "terminal_tool", "single_action", "max_iterations"]
CutHandling = Literal["continued", "trimmed"]
CONTINUE_PROMPT = (
    "Your last reply was cut off by the length limit. Continue it exactly where it "
    "stopped, starting with the very next characters; do not repeat anything."
)


@dataclass
class LoopResult:
    """How the loop went."""

    reply: str | None = None
    stopped_by: StopReason = "max_iterations"
    iterations: int = 0
    calls: list[ToolCallRecord] = field(default_factory=list)
    transcript: list[Message] = field(default_factory=list)
    recent_errors: int = 0
    last_tool_result: str | None = None
    offered_tools: int = 0
    offered_names: tuple[str, ...] = ()
    """The names of the tools offered."""
    text_only: int = 0
    """Model answers with no tool call at all (native or written as text)."""
    cut: CutHandling | None = None
    """The reply hit the length limit: continued once, or trimmed to its last sentence."""
    cleaned: tuple[Removal, ...] = ()
    """What hygiene removed from the reply."""
    not_text: int = 0
    """Lone surrogates and NULs in the model's output, replaced by U+FFFD (a tick note)."""
    tool_tokens: int = 0
    """Estimated tokens of the offered tools' definitions, sent with every request."""
    side_sessions: list[SideSession] = field(default_factory=list)
    """Sessions its tools ran (``goal_decompose``, sub-agents), in order."""
    assessment: dict[str, Any] | None = None
    """The layer-3 assessment the model gave (the spec's ``llm_assessment`` keys)."""
    assessment_problem: str | None = None
    """Why the model's assessment was ignored (malformed), when it was."""
    usages: list[Usage] = field(default_factory=list)
    """The provider's token counts of each request that reported them, in order."""

    @property
    def prompt_tokens(self) -> int:
        """Prompt tokens of every request of the loop, as the provider counted them."""
        return sum(u.prompt_tokens for u in self.usages)

    @property
    def cached_tokens(self) -> int:
        """Of :attr:`prompt_tokens`, those the provider read from its prompt cache."""
        return sum(u.cached_tokens for u in self.usages)

    @property
    def valid_calls(self) -> int:
        """Calls that reached a tool with arguments it accepted."""
        return sum(1 for c in self.calls if c.valid and c.status != "repeated")

    @property
    def invalid_calls(self) -> int:
        """Unknown tools, bad arguments, refused and unreadable calls."""
        return sum(1 for c in self.calls if not c.valid and c.status != "repeated")

    @property
    def repeated_calls(self) -> int:
        """Identical repeats answered without running."""
        return sum(1 for c in self.calls if c.status == "repeated")

    @property
    def calls_from_text(self) -> int:
        """Calls the model wrote as text."""
        return sum(1 for c in self.calls if c.from_text)


@dataclass
class SideSession:
    """A session a tool ran inside the loop, kept for the context-window viewer."""

    context_type: str
    task: str
    pattern: ExecutionPattern
    prompt: AssembledPrompt
    loop: LoopResult


def offered_tools(
    registry: ToolRegistry, config: ContextConfig, pattern: ExecutionPattern
) -> list[Tool[Any]]:
    """The tools this context offers: its name filter and the pattern's categories."""
    tools = registry.tools()
    if config.tool_filter is not None:
        allowed = set(config.tool_filter)
        tools = [t for t in tools if t.name in allowed]
    if pattern.allowed_categories is not None:
        categories = set(pattern.allowed_categories)
        tools = [t for t in tools if t.category.value in categories]
    if not pattern.sub_agents_enabled:
        tools = [t for t in tools if not t.needs_sub_agents]
    return tools


@dataclass
class _Ask:
    """One model request of the loop, with its usage recorded."""

    llm: LLM
    unit: Unit
    clock: Clock
    max_tokens: int | None
    temperature: float | None
    record_usage: bool
    not_text: int = 0
    """Characters of the model's output that were not text (replaced by U+FFFD)."""
    usages: list[Usage] = field(default_factory=list)

    async def __call__(
        self, conversation: Sequence[Message], schemas: Sequence[ToolSchema]
    ) -> LLMResponse:
        response = await self.llm.complete(
            conversation, schemas, max_tokens=self.max_tokens, temperature=self.temperature
        )
        response, replaced = clean_response(response)
        self.not_text += replaced
        if response.usage is not None:
            self.usages.append(response.usage)
        if self.record_usage:
            _record_usage(self.unit, response, self.clock)
        return response


async def run_react_loop(
    *,
    llm: LLM,
    messages: list[Message],
    registry: ToolRegistry,
    config: ContextConfig,
    pattern: ExecutionPattern,
    unit: Unit,
    run_tool: ToolRunnerFn,
    clock: Clock,
    max_tokens: int | None,
    temperature: float | None,
    event_id: str | None = None,
    record_usage: bool = True,
    reply_policy: ReplyPolicy | None = None,
    tool_profile: ToolProfile = "full",
) -> LoopResult:
    """Run the loop; raises :class:`~mindspace.errors.LLMError` when the model fails.

    Under the ``compact`` ``tool_profile`` the request lists fewer, shorter definitions
    (:mod:`mindspace.tools.profiles`); every tool of the context may still be called.
    """
    policy = reply_policy or ReplyPolicy()
    tools = offered_tools(registry, config, pattern)
    by_name = {t.name: t for t in tools}
    schemas, more = listed_schemas(tools, tool_profile)
    listed = [str(s["function"]["name"]) for s in schemas]
    known = [*registry.names(), MORE_TOOLS] if more else registry.names()
    result = LoopResult(
        recent_errors=unit.doc(EngineState).recent_errors,
        offered_tools=len(tools),
        offered_names=tuple(t.name for t in tools),
    )
    ask = _Ask(llm, unit, clock, max_tokens, temperature, record_usage, usages=result.usages)
    conversation = list(messages)
    names_this_cycle: list[str] = []
    seen: dict[str, ToolCallRecord] = {}
    pending_prose: str | None = None

    for iteration in range(1, pattern.max_iterations + 1):
        result.iterations = iteration
        response = await ask(conversation, schemas)
        calls = response.tool_calls
        content = response.text
        problems: dict[str, str] = {}
        written = False
        if not calls and content:
            scan = scan_text_calls(content, known)
            if scan.found:
                calls, problems = calls_from_text(scan, iteration)
                content, written = scan.prose, True
        if not calls:
            await _final_answer(ask, conversation, response, policy, result)
            result.not_text = ask.not_text
            return result

        said_text = policy.clean(content).text
        pending_prose = said_text if written else None
        said = Message("assistant", said_text, calls)
        conversation.append(said)
        result.transcript.append(said)
        ended = False
        for index, call in enumerate(calls):
            snapshot = LoopSnapshot(
                iteration=iteration,
                max_iterations=pattern.max_iterations,
                tools_this_cycle=tuple(names_this_cycle),
                in_chain=True,
                chain_depth=iteration,
                pending_tools=tuple(c.name for c in calls[index + 1 :]),
            )
            key = f"{call.name}\x00{canonical(call.arguments)}"
            earlier = seen.get(key) if call.id not in problems else None
            if call.id in problems:
                record = unreadable(call, iteration, problems[call.id])
            elif more and call.name == MORE_TOOLS:
                outcome = more_tools_result(tools, listed)
                record = ToolCallRecord(
                    iteration, call.id, call.name, call.arguments, True, outcome
                )
            elif earlier is not None:
                record = repeated(call, iteration, earlier)
            else:
                record = await one_call(
                    call,
                    iteration,
                    by_name,
                    registry,
                    pattern,
                    unit,
                    run_tool,
                    snapshot,
                    clock,
                    event_id,
                )
                seen[key] = record
            if written:
                record = replace(record, from_text=True)
            names_this_cycle.append(call.name)
            result.calls.append(record)
            result.recent_errors = 0 if record.ok else result.recent_errors + 1
            text = result_text(record.result)
            result.last_tool_result = f"{call.name}: {text}"
            answer = Message("tool", text, tool_call_id=call.id)
            conversation.append(answer)
            result.transcript.append(answer)
            tool = by_name.get(call.name)
            if (
                record.status == "ran"
                and tool is not None
                and tool.category is ToolCategory.TERMINAL
                and pattern.terminal_ends_loop
            ):
                ended = True
        if ended or pattern.mode == "single_action":
            result.stopped_by = "terminal_tool" if ended else "single_action"
            result.reply = pending_prose
            result.not_text = ask.not_text
            return result

    logger.warning(
        "ReAct loop stopped at max_iterations=%d without a final answer", pattern.max_iterations
    )
    result.stopped_by = "max_iterations"
    result.reply = pending_prose
    result.not_text = ask.not_text
    return result


async def _final_answer(
    ask: _Ask,
    conversation: list[Message],
    response: LLMResponse,
    policy: ReplyPolicy,
    result: LoopResult,
) -> None:
    """The plain-text answer: continued once if cut by the length limit, then cleaned."""
    text = response.text or ""
    result.text_only += 1
    if response.finish_reason == "length" and text.strip():
        more = await ask(
            [*conversation, Message("assistant", text), Message("user", CONTINUE_PROMPT)], ()
        )
        if more.tool_calls:
            logger.warning("The model answered a continuation request with tool calls; ignored")
        text += more.text or ""
        if more.finish_reason == "length":
            text = end_at_sentence(text)
            result.cut = "trimmed"
        else:
            result.cut = "continued"
        logger.warning("A reply hit the length limit and was %s", result.cut)
    cleaned = policy.clean(text)
    result.reply = cleaned.text
    result.cleaned = cleaned.removed
    if result.reply:
        result.transcript.append(Message("assistant", result.reply))
    result.stopped_by = "final_answer"


def _record_usage(unit: Unit, response: LLMResponse, clock: Clock) -> None:
    if response.usage is None:
        return
    unit.put_doc(
        ContextUsage(
            estimated_used=response.usage.prompt_tokens,
            cached_tokens=response.usage.cached_tokens,
            source="provider",
            recorded_at=format_time(clock.now()),
        )
    )
