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
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

import typer

from mindspace.errors import LLMConnectionError, LLMError, LLMProviderError
from mindspace.hosts.cli.common import load_settings
from mindspace.hosts.cli.doctor_target import Provider, probe_target
from mindspace.llm.port import LLMResponse, Message

if TYPE_CHECKING:
    from mindspace.config import Settings
    from mindspace.runtime import EndpointLLM

__all__ = ["PROBE_TOOL", "DoctorReport", "ProbeResult", "diagnose", "doctor_command"]

Status = Literal["ok", "warn", "fail", "skip"]
Verdict = Literal["usable", "unusable", "unreachable", "offline"]
ToolSupport = Literal["native", "text", "none", "error"]

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

CHAT_PROMPT = "Reply with one word: ready."
TOOL_PROMPT = f"Call the {PROBE_TOOL_NAME} tool for the city Paris. Do not answer in prose."
JSON_PROMPT = 'Reply with only this JSON object and nothing else: {"status": "ok", "count": 3}'
# Keys servers use for the context window in their /v1/models entries: OpenRouter and
# LM Studio (context_length), vLLM (max_model_len), llama.cpp (meta.n_ctx_train).
_CONTEXT_KEYS = ("context_length", "max_model_len", "context_window", "max_context_length")

_T = TypeVar("_T")


@dataclass
class ProbeResult:
    """One probe: its status, what was seen, and how long it took."""

    name: str
    status: Status
    detail: str
    latency_ms: int | None = None
    retries: int = 0


@dataclass
class DoctorReport:
    """Everything ``mindspace doctor`` found, as printed by ``--json``."""

    base_url: str | None
    model: str | None
    verdict: Verdict
    summary: str
    probes: list[ProbeResult] = field(default_factory=list)
    context_window: int | None = None
    tool_calls: ToolSupport | None = None
    tool_calls_without_tool_choice: ToolSupport | None = None
    json_output: Literal["json", "fenced", "none"] | None = None
    settings: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    provider: Provider | None = None
    api_key_from: str | None = None

    @property
    def exit_code(self) -> int:
        """0 usable (or offline), 1 unusable, 2 unreachable."""
        return {"usable": 0, "offline": 0, "unusable": 1, "unreachable": 2}[self.verdict]


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


def _context_window(entry: dict[str, Any]) -> tuple[int, str] | None:
    for key in _CONTEXT_KEYS:
        value = entry.get(key)
        if isinstance(value, int) and value > 0:
            return value, key
    meta = entry.get("meta")
    if isinstance(meta, dict):
        for key in ("n_ctx_train", "n_ctx"):
            value = meta.get(key)
            if isinstance(value, int) and value > 0:
                return value, f"meta.{key}"
    return None


def _tool_support(answer: LLMResponse) -> ToolSupport:
    if any(call.name == PROBE_TOOL_NAME for call in answer.tool_calls):
        return "native"
    # Diagnosis only: the call is recognised, not parsed (the ReAct loop parses it).
    if answer.text and PROBE_TOOL_NAME in answer.text:
        return "text"
    return "none"


def _json_output(text: str | None) -> Literal["json", "fenced", "none"]:
    body = (text or "").strip()
    for candidate, kind in ((body, "json"), (_unfence(body), "fenced")):
        try:
            if isinstance(json.loads(candidate), dict):
                return "json" if kind == "json" else "fenced"
        except ValueError:
            continue
    return "none"


def _unfence(text: str) -> str:
    if text.startswith("```") and text.endswith("```"):
        inner = text[3:-3]
        return inner.split("\n", 1)[1] if "\n" in inner else inner
    return text


def _recommended_timeout(slowest_seconds: float) -> int:
    # Probe replies are a few tokens; a full reply is up to llm_max_tokens, so allow
    # about twenty times the slowest probe, in steps of 30 s, within 120-600 s.
    return max(120, min(600, math.ceil(slowest_seconds * 20 / 30) * 30))


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
        answer, error, probe = await prober.run(label, call)
        support: ToolSupport = "error" if answer is None else _tool_support(answer)
        if error is None:
            probe.status = "ok" if support == "native" else "warn"
            probe.detail = _TOOL_DETAIL[support]
        if adapter is prober.auto:
            report.tool_calls = support
        else:
            report.tool_calls_without_tool_choice = support


def _conclude(report: DoctorReport, slowest: float) -> None:
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
    report.settings["MINDSPACE_LLM_TIMEOUT"] = str(_recommended_timeout(slowest))
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
    window = _context_window(entry) if entry else None
    if window is not None:
        report.context_window = window[0]
        prober.probes.append(
            ProbeResult("context window", "ok", f"{window[0]} tokens ({window[1]})")
        )
    else:
        prober.probes.append(ProbeResult("context window", "skip", "the server does not say"))
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
        report.json_output = _json_output(json_answer.text)
        json_probe.status = "ok" if report.json_output == "json" else "warn"
        json_probe.detail = {
            "json": "a JSON object",
            "fenced": "a JSON object in a fenced block",
            "none": f"not a JSON object: {(json_answer.text or '')[:60]!r}",
        }[report.json_output]
    slowest = max((p.latency_ms or 0) for p in prober.probes) / 1000
    _conclude(report, slowest)
    report.summary = (
        "The endpoint is usable."
        if report.tool_calls != "none"
        else ("The endpoint is usable for conversation; tool use is weak.")
    )


def render(report: DoctorReport) -> str:
    """The report as the text ``mindspace doctor`` prints."""
    if report.verdict == "offline":
        return f"mindspace doctor: {report.summary}\n"
    if report.provider == "anthropic":
        lines = [
            f"mindspace doctor: Anthropic Messages API at {report.base_url}, "
            f"model {report.model!r}, API key from {report.api_key_from or 'nowhere'}"
        ]
    else:
        lines = [f"mindspace doctor: {report.base_url}, model {report.model!r}"]
    for probe in report.probes:
        timing = f" ({probe.latency_ms} ms)" if probe.latency_ms is not None else ""
        retried = f" after {probe.retries} retries" if probe.retries else ""
        lines.append(f"  {probe.status:<5} {probe.name:<26} {probe.detail}{timing}{retried}")
    lines.append(f"Verdict: {report.verdict}. {report.summary}")
    for note in report.notes:
        lines.append(f"  - {note}")
    if report.settings:
        lines.append("Settings to use:")
        if report.provider == "anthropic":
            lines.append("  MINDSPACE_LLM_PROVIDER=anthropic")
        lines.append(f"  MINDSPACE_LLM_BASE_URL={report.base_url}")
        lines.append(f"  MINDSPACE_LLM_MODEL={report.model}")
        lines.extend(f"  {name}={value}" for name, value in report.settings.items())
    return "\n".join(lines) + "\n"


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
