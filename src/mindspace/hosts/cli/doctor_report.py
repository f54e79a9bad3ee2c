"""What ``mindspace doctor`` found: the report, its probes, and the text it prints."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from mindspace.hosts.cli.doctor_probes import Delivery
from mindspace.hosts.cli.doctor_target import Provider

__all__ = ["DoctorReport", "ProbeResult", "Status", "ToolSupport", "Verdict", "render"]

Status = Literal["ok", "warn", "fail", "skip"]
Verdict = Literal["usable", "unusable", "unreachable", "offline"]
ToolSupport = Literal["native", "text", "none", "error"]


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
    tools_delivered: Delivery | None = None
    """Whether offered tools reach the model (a server may drop them silently)."""
    prompt_tokens_per_second: float | None = None

    @property
    def exit_code(self) -> int:
        """0 usable (or offline), 1 unusable, 2 unreachable."""
        return {"usable": 0, "offline": 0, "unusable": 1, "unreachable": 2}[self.verdict]


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
