"""``mindspace doctor``: what the configured LLM endpoint can do, and which settings to use.

It probes the endpoint the way mindspace will use it, through the same adapter and
retry policy: is it reachable, is the model listed (and its context window, when the
server says), does it answer a chat, does it make native tool calls (with and without
``tool_choice``) or write them as text, does it produce a parseable JSON object, and
how long each probe took. The verdict names the settings to use. Exit status: 0 when
the endpoint is usable (or no endpoint is configured and the offline model runs), 1
when it answers but is unusable, 2 when it cannot be reached.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

import typer

from mindspace.errors import LLMConnectionError, LLMError, LLMProviderError
from mindspace.hosts.cli.common import load_settings
from mindspace.hosts.cli.doctor_probes import (
    TOOL_SECTION_CHECK,
    ServerFacts,
    context_window_of,
    delivery,
    json_output,
    recommended_timeout,
    secret_tool,
    server_facts,
    speed_prompt,
    text_call_names,
    timeout_for,
)
from mindspace.hosts.cli.doctor_report import (
    DoctorReport,
    ProbeResult,
    Status,
    ToolSupport,
    render,
)
from mindspace.hosts.cli.doctor_target import Provider, probe_target
from mindspace.llm.port import LLMResponse, Message

if TYPE_CHECKING:
    from mindspace.config import Settings
    from mindspace.runtime import EndpointLLM

__all__ = ["PROBE_TOOL", "DoctorReport", "ProbeResult", "diagnose", "doctor_command"]


PROBE_TOOL_NAME = "report_weather"
PROBE_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": PROBE_TOOL_NAME,
        "description": "Report the weather in a city (a harmless probe: it does nothing).",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city."}},
            "required": ["city"],
        },
    },
}
"""The one tool offered to the model; calling it has no effect."""

PROBE_REPEATS = 3
"""Each tool probe is asked this many times; the report says how many agreed."""
SPEED_TOKENS = 800
"""About this many prompt tokens measure the prompt-processing speed (a 135M model on
two loaded cores reads ~30 tokens/s: the probe must stay short)."""
SMALL_CONTEXT = 16_384
"""Below this context window the compact tool profile is recommended."""
TURN_CONTEXT_TOKENS = 1_500
"""Prompt tokens of a turn besides the tool definitions (persona, memory, history)."""

CHAT_PROMPT = "Reply with one word: ready."
TOOL_PROMPT = f"Call the {PROBE_TOOL_NAME} tool for the city Paris. Do not answer in prose."
JSON_PROMPT = 'Reply with only this JSON object and nothing else: {"status": "ok", "count": 3}'

_T = TypeVar("_T")


class _Prober:
    """Runs probes through adapters that count the retries they needed."""

    def __init__(
        self,
        settings: Settings,
        base_url: str,
        model: str,
        api_key: str | None,
        provider: Provider = "openai",
    ):
        # Imported here so that `mindspace --help` does not load the openai SDK.
        from mindspace.runtime import probe_llm

        self.retries = 0
        self.settings = settings

        async def counted_sleep(delay: float) -> None:
            self.retries += 1
            await asyncio.sleep(delay)

        def adapter(tool_choice: Literal["auto", "omit"]) -> EndpointLLM:
            return probe_llm(
                settings,
                base_url=base_url,
                model=model,
                api_key=api_key,
                tool_choice=tool_choice,
                sleep=counted_sleep,
                provider=provider,
            )

        self.auto = adapter("auto")
        self.omit = adapter("omit")
        self.probes: list[ProbeResult] = []

    async def run(
        self, name: str, call: Callable[[], Awaitable[_T]]
    ) -> tuple[_T | None, LLMError | None, ProbeResult]:
        before = self.retries
        started = time.perf_counter()
        try:
            value: _T | None = await call()
            error: LLMError | None = None
        except LLMError as exc:
            value, error = None, exc
        probe = ProbeResult(
            name,
            "fail" if error else "ok",
            str(error) if error else "",
            latency_ms=round((time.perf_counter() - started) * 1000),
            retries=self.retries - before,
        )
        self.probes.append(probe)
        return value, error, probe

    async def close(self) -> None:
        await self.auto.aclose()
        await self.omit.aclose()


def _tool_support(answer: LLMResponse) -> ToolSupport:
    if any(call.name == PROBE_TOOL_NAME for call in answer.tool_calls):
        return "native"
    # Only a call that parses and names the offered tool: prose that merely mentions
    # the tool's name is no tool call (a server that dropped the tools gets that).
    if text_call_names(answer.text, PROBE_TOOL_NAME):
        return "text"
    return "none"


_TOOL_DETAIL: dict[ToolSupport, str] = {
    "native": "native tool call",
    "text": "tool call written as text in the reply",
    "none": "no tool call (answered in prose)",
    "error": "the request failed",
}


async def _probe_tools(prober: _Prober, report: DoctorReport) -> None:
    ask = [Message(role="user", content=TOOL_PROMPT)]
    labels = ((prober.auto, "tools (tool_choice auto)"), (prober.omit, "tools (no tool_choice)"))
    for adapter, label in labels:
        call = functools.partial(adapter.complete, ask, [PROBE_TOOL], max_tokens=128)
        # A small model answers differently each time: ask again and report agreement.
        seen: list[ToolSupport] = []
        first = len(prober.probes)
        for _ in range(PROBE_REPEATS):
            answer, _, probe = await prober.run(label, call)
            seen.append("error" if answer is None else _tool_support(answer))
            if answer is None:
                break
        # One line for the repeats: the slowest time, every retry.
        asked = prober.probes[first:]
        del prober.probes[first:]
        probe.latency_ms = max(p.latency_ms or 0 for p in asked)
        probe.retries = sum(p.retries for p in asked)
        prober.probes.append(probe)
        support = max(set(seen), key=lambda s: (seen.count(s), s == "native"))
        if support != "error":
            agree = seen.count(support)
            probe.status = "ok" if support == "native" and agree == len(seen) else "warn"
            probe.detail = f"{_TOOL_DETAIL[support]} ({agree} of {len(seen)} agree)"
            if agree < len(seen):
                others = ", ".join(sorted({_TOOL_DETAIL[s] for s in seen if s != support}))
                probe.detail += f"; otherwise {others}"
        if adapter is prober.auto:
            report.tool_calls = support
        else:
            report.tool_calls_without_tool_choice = support
    await _probe_delivery(prober, report)


async def _probe_delivery(prober: _Prober, report: DoctorReport) -> None:
    """Do offered tools reach the model? Ask for a word only the tool's description holds."""
    tool, word = secret_tool(PROBE_TOOL_NAME)
    ask = [
        Message(
            "user",
            f"Your tool {PROBE_TOOL_NAME} has a secret word in its "
            "description. Reply with that word only.",
        )
    ]
    with_tool, _, probe = await prober.run(
        "tools reach the model", lambda: prober.auto.complete(ask, [tool], max_tokens=16)
    )
    if with_tool is None:
        return
    without = await prober.auto.complete(ask, max_tokens=16)
    found = delivery(word, with_tool, without)
    report.tools_delivered = found
    if found == "dropped":
        probe.status, probe.detail = (
            "fail",
            ("dropped: the request with a tool had no more prompt tokens than without"),
        )
        # Whatever the prose said, no tool call can come from a model without tools.
        report.tool_calls = report.tool_calls_without_tool_choice = "none"
        report.notes.append(TOOL_SECTION_CHECK)
    elif found == "delivered":
        probe.detail = "yes (the model quoted the tool's description, or the prompt grew)"
    else:
        probe.status, probe.detail = "warn", "unclear (no token usage to compare)"


async def _probe_speed(prober: _Prober, report: DoctorReport) -> None:
    """Prompt tokens per second on a prompt the server has not cached."""
    answer, _, probe = await prober.run(
        "prompt speed", lambda: prober.auto.complete(speed_prompt(SPEED_TOKENS), max_tokens=1)
    )
    if answer is None or probe.latency_ms is None:
        return
    if answer.usage is None:
        probe.status, probe.detail = "skip", "the server reports no token usage"
        return
    rate = answer.usage.prompt_tokens / max(probe.latency_ms / 1000, 0.001)
    report.prompt_tokens_per_second = round(rate, 1)
    probe.detail = f"{rate:,.0f} prompt tokens/s ({answer.usage.prompt_tokens} tokens)"


def _timeout(report: DoctorReport, settings: Settings, slowest: float) -> int:
    """From the measured prompt speed: a cold turn's prompt (tools, context) and a reply."""
    rate = report.prompt_tokens_per_second
    if not rate:
        return recommended_timeout(slowest)
    tools = 650 if report.settings.get("MINDSPACE_TOOL_PROFILE") == "compact" else 5_600
    turn = tools + TURN_CONTEXT_TOKENS
    if report.context_window is not None:
        turn = min(turn, report.context_window)
    return timeout_for(turn, rate, settings.llm_max_tokens, rate / 10)


def _conclude(report: DoctorReport, slowest: float, settings: Settings) -> None:
    """The verdict, the settings to use and the notes, from the probes' findings."""
    with_choice, without = report.tool_calls, report.tool_calls_without_tool_choice
    choice = "auto"
    if with_choice == "native" and without != "native":
        report.notes.append(
            "Tools work only when the request sets tool_choice (as llama-cpp-python's "
            "chatml-function-calling): keep MINDSPACE_LLM_TOOL_CHOICE=auto."
        )
    elif with_choice in ("error", "none") and without == "native":
        choice = "omit"
        report.notes.append(
            "The endpoint calls tools only without tool_choice: set MINDSPACE_LLM_TOOL_CHOICE=omit."
        )
    elif "text" in (with_choice, without) and "native" not in (with_choice, without):
        report.notes.append(
            "The model writes tool calls as text instead of native tool_calls; mindspace "
            "has to recognise them in the reply, so a model or chat template with native "
            "tool calling is more reliable."
        )
    elif with_choice == "none" and without == "none":
        report.notes.append(
            "The model made no tool call: it will rarely use its tools. Memory still "
            "works (observations and the night's extraction), goals and journaling will not."
        )
    if report.json_output == "fenced":
        report.notes.append("The model wraps JSON answers in a fenced block (```json).")
    elif report.json_output == "none":
        report.notes.append(
            "The model did not answer with a JSON object: structured answers (importance "
            "scores, reflection) will often need their repair attempt or fallback."
        )
    report.settings["MINDSPACE_LLM_TOOL_CHOICE"] = choice
    small = report.context_window is not None and report.context_window < SMALL_CONTEXT
    if small or report.tools_delivered == "dropped" or with_choice != "native":
        report.settings["MINDSPACE_TOOL_PROFILE"] = "compact"
        report.notes.append(
            "Use the compact tool profile: a few tools with short descriptions (about 650 "
            "tokens instead of 5,600), the rest behind one more_tools entry."
        )
    report.settings["MINDSPACE_LLM_TIMEOUT"] = str(_timeout(report, settings, slowest))
    if report.context_window is not None:
        report.settings["MINDSPACE_MODEL_LIMIT"] = str(report.context_window)
    if any(p.retries for p in report.probes):
        report.notes.append(
            "Some probes needed retries (the server was loading or busy); if that is "
            "common, raise MINDSPACE_LLM_MAX_RETRIES."
        )


async def diagnose(
    settings: Settings,
    base_url: str | None,
    model: str | None,
    api_key: str | None,
    *,
    provider: Provider = "openai",
    api_key_from: str | None = None,
) -> DoctorReport:
    """Probe the endpoint and build the report (never raises for endpoint failures).

    Args:
        settings: Timeouts and retries come from here.
        base_url: The endpoint; None means the offline model.
        model: The model name to probe.
        api_key: The key, if the endpoint needs one.
        provider: How to talk to it: chat completions or Anthropic's Messages API.
        api_key_from: Where the key came from (an option or variable name), for the report.

    Raises:
        ConfigError: the provider's SDK is not installed.
    """
    if base_url is None:
        from mindspace.runtime import offline_notice

        return DoctorReport(
            None,
            None,
            "offline",
            f"No LLM is configured. {offline_notice()} Then run mindspace doctor again "
            "(or pass --base-url and --model).",
        )
    report = DoctorReport(
        base_url, model, "usable", "", provider=provider, api_key_from=api_key_from
    )
    if provider == "anthropic" and not api_key:
        # The SDK refuses to send a request without one: say so instead of probing.
        report.verdict = "unusable"
        report.summary = (
            "The LLM provider is 'anthropic' but no API key is set; set "
            "MINDSPACE_LLM_API_KEY (or ANTHROPIC_API_KEY), any value for a local server."
        )
        return report
    prober = _Prober(settings, base_url, model or "unset", api_key, provider)
    report.probes = prober.probes
    try:
        await _diagnose(prober, report)
    finally:
        await prober.close()
    return report


async def _diagnose(prober: _Prober, report: DoctorReport) -> None:
    models, error, probe = await prober.run("reachable", prober.auto.list_models)
    if isinstance(error, LLMConnectionError):
        report.verdict = "unreachable"
        report.summary = "The endpoint cannot be reached (the reachable probe says why)."
        return
    listed = [str(m.get("id")) for m in models or ()]
    if error is None:
        probe.detail = f"/models lists {len(listed)} model(s)"
    elif isinstance(error, LLMProviderError) and "404" in str(error):
        probe.status, probe.detail = "warn", "reachable, but it has no /models route"
    if report.model is None:
        report.verdict = "unusable"
        served = ", ".join(repr(m) for m in listed) or "none listed"
        report.summary = (
            f"MINDSPACE_LLM_MODEL is not set; set it to a model the endpoint serves "
            f"({served}), or pass --model."
        )
        return
    entry = next((m for m in models or () if m.get("id") == report.model), None)
    if error is None:
        found = entry is not None
        prober.probes.append(
            ProbeResult(
                "model listed",
                "ok" if found else "warn",
                repr(report.model)
                if found
                else f"{report.model!r} is not listed (listed: "
                f"{', '.join(repr(m) for m in listed) or 'none'}); some servers accept any name",
            )
        )
    window = context_window_of(entry) if entry else None
    facts = ServerFacts()
    if report.provider != "anthropic":  # Anthropic's API has no such routes
        facts = await server_facts(report.base_url or "", report.model)
    if facts.context_window is not None:
        # What the server runs beats what the model was trained on (n_ctx_train).
        trained = f"; the model's entry says {window[0]}" if window else ""
        window = (facts.context_window, facts.source + trained)
    if window is not None:
        report.context_window = window[0]
        status: Status = "warn" if window[1] == "meta.n_ctx_train" else "ok"
        shown = window[1] + (
            " (the training context: the server may run less)" * (status == "warn")
        )
        prober.probes.append(ProbeResult("context window", status, f"{window[0]} tokens ({shown})"))
    else:
        prober.probes.append(ProbeResult("context window", "skip", "the server does not say"))
    if facts.template_supports_tools is False:
        report.notes.append(
            "llama.cpp says the chat template does not support tools "
            "(/props chat_template_caps.supports_tools is false)."
        )
    await _probe_chat_and_more(prober, report)


async def _probe_chat_and_more(prober: _Prober, report: DoctorReport) -> None:
    chat = [Message(role="user", content=CHAT_PROMPT)]
    answer, _, probe = await prober.run("chat", lambda: prober.auto.complete(chat, max_tokens=64))
    if answer is None:
        report.verdict = "unusable"
        report.summary = "The endpoint does not answer a chat (the chat probe says why)."
        return
    probe.detail = f"answered {(answer.text or '')[:60]!r} (finish_reason {answer.finish_reason!r})"
    if not (answer.text or "").strip():
        probe.status, probe.detail = "warn", "answered with empty text"
    if answer.finish_reason == "length":
        probe.status = "warn"
        report.notes.append(
            "A short reply was cut (finish_reason 'length'): the server's output or "
            "context limit is very small; raise it (e.g. llama.cpp -n / -c)."
        )
    if answer.usage is None:
        prober.probes.append(ProbeResult("usage", "warn", "the server reports no token usage"))
    await _probe_tools(prober, report)
    shape = [Message(role="user", content=JSON_PROMPT)]
    json_answer, _, json_probe = await prober.run(
        "JSON output", lambda: prober.auto.complete(shape, max_tokens=64)
    )
    if json_answer is not None:
        report.json_output = json_output(json_answer.text)
        json_probe.status = "ok" if report.json_output == "json" else "warn"
        json_probe.detail = {
            "json": "a JSON object",
            "fenced": "a JSON object in a fenced block",
            "none": f"not a JSON object: {(json_answer.text or '')[:60]!r}",
        }[report.json_output]
    await _probe_speed(prober, report)
    slowest = max((p.latency_ms or 0) for p in prober.probes if p.name != "prompt speed") / 1000
    _conclude(report, slowest, prober.settings)
    report.summary = (
        "The endpoint is usable."
        if report.tool_calls != "none"
        else ("The endpoint is usable for conversation; tool use is weak.")
    )


def doctor_command(
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", help="Endpoint to probe (default: MINDSPACE_LLM_BASE_URL)."),
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", help="Model to probe (default: MINDSPACE_LLM_MODEL).")
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option(
            "--api-key",
            help="API key (default: MINDSPACE_LLM_API_KEY; for anthropic, then ANTHROPIC_API_KEY).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Probe the LLM endpoint: reachable, model, chat, tool calls, JSON, latency; advise settings.

    Exit status 0 when the endpoint is usable (or none is configured), 1 when it answers
    but cannot be used, 2 when it cannot be reached.
    """
    settings = load_settings()
    provider, url, key_from, key = probe_target(settings, base_url, api_key)
    name = model or settings.llm_model
    # Each probe reports its own retries; the adapter's retry warnings would repeat them.
    logging.getLogger("mindspace.llm.openai").setLevel(logging.ERROR)
    logging.getLogger("mindspace.llm.anthropic").setLevel(logging.ERROR)
    report = asyncio.run(
        diagnose(settings, url, name, key, provider=provider, api_key_from=key_from)
    )
    if as_json:
        payload = {**asdict(report), "exit_code": report.exit_code}
        typer.echo(json.dumps(payload, indent=2, ensure_ascii=False))
    else:
        typer.echo(render(report), nl=False)
    raise typer.Exit(report.exit_code)
