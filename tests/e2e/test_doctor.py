"""``mindspace doctor`` in a real process against the test server in every quirk mode.

Its text output is compared with snapshots in ``tests/e2e/snapshots/doctor/`` (the
server's URL and the latencies masked). After a deliberate change of the output, run
with ``MINDSPACE_UPDATE_SNAPSHOTS=1`` once and review the diff of the snapshots.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mindspace.hosts.cli.doctor import PROBE_TOOL_NAME, TURN_CONTEXT_TOKENS
from mindspace.hosts.cli.doctor_probes import timeout_for
from mindspace.testing import ChatCompletionsServer, MessagesServer, Quirk, Step

SNAPSHOTS = Path(__file__).parent / "snapshots" / "doctor"
CHAT_REPLY = "Ready. I can hear you clearly and I am ready to help."


def respond(body: dict[str, Any]) -> Step:
    """A coherent model: calls the probe tool when offered, answers JSON when asked.

    It quotes a tool's description only when it was given the tool, and without tools
    it talks about the tool it was asked to call (as models do when tools are dropped).
    """
    asked = str(body["messages"][-1]["content"])
    if "secret word" in asked:
        described = " ".join(t.get("function", t)["description"] for t in body.get("tools", []))
        words = re.findall(r"secret word is (\w+)", described)
        return Step(words[0] if words else "I do not know any secret word.")
    if body.get("tools"):
        return Step(tool_calls=[{"name": PROBE_TOOL_NAME, "arguments": {"city": "Paris"}}])
    if PROBE_TOOL_NAME in asked:
        return Step(f"I would use {PROBE_TOOL_NAME} to look up Paris for you.")
    if "JSON" in asked:
        return Step('{"status": "ok", "count": 3}')
    return Step(CHAT_REPLY)


def doctor(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MINDSPACE_")}
    clean.update({"COLUMNS": "200", "MINDSPACE_LLM_MAX_RETRIES": "2", **env})
    return subprocess.run(
        [sys.executable, "-m", "mindspace.hosts.cli.app", "doctor", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=clean,
        check=False,
    )


def masked(text: str, url: str | None = None) -> str:
    if url:
        text = text.replace(url, "<URL>")
    text = re.sub(r"\d[\d,]* prompt tokens/s", "N prompt tokens/s", text)
    return re.sub(r"\(\d+ ms\)", "(N ms)", text)


def check_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("MINDSPACE_UPDATE_SNAPSHOTS") == "1":
        path.write_text(text)
    assert path.exists(), f"no snapshot {path}; run with MINDSPACE_UPDATE_SNAPSHOTS=1"
    assert text == path.read_text()


EXIT_CODES = {None: 0, Quirk.BAD_JSON: 1}


@pytest.mark.parametrize("quirk", [None, *Quirk], ids=lambda q: q or "default")
def test_doctor_output_in_each_quirk_mode(quirk: Quirk | None) -> None:
    with ChatCompletionsServer(
        quirks=[quirk] if quirk else [], respond=respond, model_info={"context_length": 8192}
    ) as server:
        done = doctor(MINDSPACE_LLM_BASE_URL=server.url, MINDSPACE_LLM_MODEL="scripted")
    assert done.returncode == EXIT_CODES.get(quirk, 0), done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr == ""
    check_snapshot(quirk or "default", masked(done.stdout, server.url))


def test_doctor_without_an_llm_names_the_offline_model() -> None:
    done = doctor()
    assert done.returncode == 0
    check_snapshot("offline", done.stdout)


def test_doctor_on_an_unreachable_endpoint_exits_2_without_a_traceback() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    done = doctor("--base-url", url, "--model", "m", MINDSPACE_LLM_MAX_RETRIES="0")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert f"  fail  reachable                  Cannot reach the LLM at {url!r}" in done.stdout
    assert "Verdict: unreachable. The endpoint cannot be reached" in done.stdout


def test_doctor_json_with_options_overriding_the_environment() -> None:
    with ChatCompletionsServer(
        model="qwen2.5:7b",
        quirks=["tools_need_tool_choice"],
        respond=respond,
        model_info={"meta": {"n_ctx_train": 32768}},
    ) as server:
        done = doctor(
            "--json",
            "--base-url",
            server.url,
            "--model",
            "qwen2.5:7b",
            MINDSPACE_LLM_BASE_URL="http://127.0.0.1:9/v1",
            MINDSPACE_LLM_MODEL="other",
        )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["base_url"] == server.url
    assert report["verdict"] == "usable"
    assert report["exit_code"] == 0
    assert report["context_window"] == 32768
    assert report["tool_calls"] == "native"
    assert report["tool_calls_without_tool_choice"] == "none"
    assert report["json_output"] == "json"
    assert report["settings"] == {
        "MINDSPACE_LLM_TOOL_CHOICE": "auto",
        "MINDSPACE_LLM_TIMEOUT": "120",
        "MINDSPACE_MODEL_LIMIT": "32768",
    }
    names = [p["name"] for p in report["probes"]]
    assert names[:4] == ["reachable", "model listed", "context window", "chat"]
    assert all(isinstance(p["latency_ms"], int) for p in report["probes"] if p["name"] == "chat")
    # tool_choice "auto" went with the first tool probe (asked 3 times) and the delivery
    # probe only
    tool_requests = [r for r in server.requests if r.get("tools")]
    assert [r.get("tool_choice") for r in tool_requests] == ["auto"] * 3 + [None] * 3 + ["auto"]


def test_doctor_without_a_model_lists_what_the_endpoint_serves() -> None:
    with ChatCompletionsServer(model="llama3.2", respond=respond) as server:
        done = doctor(MINDSPACE_LLM_BASE_URL=server.url)
    assert done.returncode == 1
    assert "MINDSPACE_LLM_MODEL is not set; set it to a model the endpoint serves ('llama3.2')" in (
        done.stdout
    )


def _without_anthropic_key(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``doctor`` with ANTHROPIC_API_KEY only when the test sets it."""
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MINDSPACE_") and k != "ANTHROPIC_API_KEY"
    }
    clean.update({"COLUMNS": "200", **env})
    return subprocess.run(
        [sys.executable, "-m", "mindspace.hosts.cli.app", "doctor", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=clean,
        check=False,
    )


def test_doctor_probes_the_anthropic_provider_through_the_messages_api() -> None:
    with MessagesServer(model="claude-sonnet-4-5", respond=respond) as server:
        done = _without_anthropic_key(
            MINDSPACE_LLM_PROVIDER="anthropic",
            MINDSPACE_LLM_MODEL="claude-sonnet-4-5",
            MINDSPACE_LLM_BASE_URL=server.url,
            ANTHROPIC_API_KEY="sk-ant-test",
        )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    assert lines[0] == (
        f"mindspace doctor: Anthropic Messages API at {server.url}, model 'claude-sonnet-4-5', "
        "API key from ANTHROPIC_API_KEY"
    )
    assert "No LLM is configured" not in done.stdout
    assert "Verdict: usable. The endpoint is usable." in lines
    settings = lines[lines.index("Settings to use:") + 1 :]
    assert settings[:3] == [
        "  MINDSPACE_LLM_PROVIDER=anthropic",
        f"  MINDSPACE_LLM_BASE_URL={server.url}",
        "  MINDSPACE_LLM_MODEL=claude-sonnet-4-5",
    ]
    # Every probe went to the Messages API: chat, two tool probes asked 3 times each,
    # the delivery probe (with and without the tool), JSON, prompt speed.
    assert len(server.requests) == 11
    assert all(r["model"] == "claude-sonnet-4-5" for r in server.requests)


def test_doctor_on_anthropic_without_a_key_names_the_variables_and_the_default_url() -> None:
    done = _without_anthropic_key(
        "--json", MINDSPACE_LLM_PROVIDER="anthropic", MINDSPACE_LLM_MODEL="claude-sonnet-4-5"
    )
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["provider"] == "anthropic"
    assert report["base_url"] == "https://api.anthropic.com"
    assert report["model"] == "claude-sonnet-4-5"
    assert report["api_key_from"] is None
    assert report["verdict"] == "unusable"
    assert "set MINDSPACE_LLM_API_KEY (or ANTHROPIC_API_KEY)" in report["summary"]
    assert report["probes"] == []


def test_doctor_on_anthropic_reads_mindspace_llm_api_key_first() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    done = _without_anthropic_key(
        MINDSPACE_LLM_PROVIDER="anthropic",
        MINDSPACE_LLM_MODEL="claude-haiku-4-5",
        MINDSPACE_LLM_BASE_URL=f"http://127.0.0.1:{port}",
        MINDSPACE_LLM_API_KEY="sk-ant-mine",
        ANTHROPIC_API_KEY="sk-ant-other",
        MINDSPACE_LLM_MAX_RETRIES="0",
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stdout.splitlines()[0].endswith(
        "model 'claude-haiku-4-5', API key from MINDSPACE_LLM_API_KEY"
    )
    assert f"Cannot reach the Anthropic API at 'http://127.0.0.1:{port}'" in done.stdout


def test_doctor_sees_that_a_server_dropped_the_tools() -> None:
    """As llama-server --jinja with a template without a tool section: prose that names
    the tool is no tool call, and the delivery probe proves the tools never arrived."""
    with ChatCompletionsServer(quirks=["drops_tools"], respond=respond) as server:
        server.props = {
            "default_generation_settings": {"n_ctx": 8192},
            "chat_template_caps": {"supports_tools": False},
        }
        done = doctor("--json", MINDSPACE_LLM_BASE_URL=server.url, MINDSPACE_LLM_MODEL="m")
    report = json.loads(done.stdout)
    assert report["tools_delivered"] == "dropped"
    assert report["tool_calls"] == "none"  # not "text", although the prose names the tool
    assert report["tool_calls_without_tool_choice"] == "none"
    assert any("no tool section" in note for note in report["notes"])
    assert any("supports_tools is false" in note for note in report["notes"])
    assert report["settings"]["MINDSPACE_TOOL_PROFILE"] == "compact"
    delivered = next(p for p in report["probes"] if p["name"] == "tools reach the model")
    assert delivered["status"] == "fail"


def test_doctor_takes_the_context_the_server_runs_not_the_training_context() -> None:
    with ChatCompletionsServer(
        respond=respond, model_info={"meta": {"n_ctx_train": 8192}}
    ) as server:
        server.props = {"default_generation_settings": {"n_ctx": 2048}}
        done = doctor("--json", MINDSPACE_LLM_BASE_URL=server.url, MINDSPACE_LLM_MODEL="scripted")
        slots = [r for r in server.requests if "slots" in str(r)]
    report = json.loads(done.stdout)
    assert report["context_window"] == 2048
    assert report["settings"]["MINDSPACE_MODEL_LIMIT"] == "2048"
    assert report["settings"]["MINDSPACE_TOOL_PROFILE"] == "compact"
    window = next(p for p in report["probes"] if p["name"] == "context window")
    assert window["detail"] == ("2048 tokens (llama.cpp /props n_ctx; the model's entry says 8192)")
    assert slots == []


def test_doctor_derives_the_timeout_from_the_measured_prompt_speed() -> None:
    """A slow CPU server: 1 s for the 100 tokens of the speed probe (100 tokens/s)."""

    def slow_prompts(body: dict[str, Any]) -> Step:
        if "Barrel 1 is full." in str(body["messages"][-1]["content"]):
            return Step("done", delay=1.0, usage={"prompt_tokens": 100, "completion_tokens": 1})
        return respond(body)

    with ChatCompletionsServer(respond=slow_prompts, model_info={"context_length": 8192}) as server:
        done = doctor(
            "--json",
            MINDSPACE_LLM_BASE_URL=server.url,
            MINDSPACE_LLM_MODEL="scripted",
            MINDSPACE_LLM_MAX_TOKENS="2000",
        )
    report = json.loads(done.stdout)
    rate = report["prompt_tokens_per_second"]
    assert 50 < rate <= 100
    # A cold compact turn (650 + 1,500 tokens) and a 2,000-token reply at a tenth of it.
    assert report["settings"]["MINDSPACE_TOOL_PROFILE"] == "compact"
    assert report["settings"]["MINDSPACE_LLM_TIMEOUT"] == str(
        timeout_for(650 + TURN_CONTEXT_TOKENS, rate, 2000, rate / 10)
    )
    assert int(report["settings"]["MINDSPACE_LLM_TIMEOUT"]) > 120
