"""The test Messages-API server answers as Anthropic's API does, to the real SDK."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import anthropic
import pytest

from mindspace.testing import MessagesServer, QuirkSettings


def _sdk(url: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=url, api_key="t", max_retries=0, timeout=10)


def _ask(sdk: anthropic.Anthropic) -> anthropic.types.Message:
    return sdk.messages.create(
        model="claude-test", max_tokens=50, messages=[{"role": "user", "content": "hi"}]
    )


def test_the_sdk_reads_text_tool_use_usage_and_models() -> None:
    with MessagesServer(model="claude-test", model_info={"max_input_tokens": 200000}) as server:
        server.reply("Adding it.", tool_calls=[{"name": "add_goal", "arguments": {"a": 1}}])
        server.reply("plain")
        with _sdk(server.url) as sdk:
            first, second = _ask(sdk), _ask(sdk)
            models = sdk.models.list()
        assert server.connections == 1  # keep-alive
    text, use = first.content
    assert text.type == "text"
    assert text.text == "Adding it."
    assert use.type == "tool_use"
    assert (use.name, use.input) == ("add_goal", {"a": 1})
    assert use.id.startswith("toolu_")
    assert first.stop_reason == "tool_use"
    assert first.usage.input_tokens == 1
    assert first.usage.output_tokens == 12
    assert second.stop_reason == "end_turn"
    assert models.data[0].id == "claude-test"
    assert models.data[0].model_dump()["max_input_tokens"] == 200000


@pytest.mark.parametrize(
    ("status", "error", "kind"),
    [
        (529, anthropic.OverloadedError, "overloaded_error"),
        (429, anthropic.RateLimitError, "rate_limit_error"),
        (401, anthropic.AuthenticationError, "authentication_error"),
        (500, anthropic.InternalServerError, "api_error"),
    ],
)
def test_failures_have_the_api_s_error_shape(
    status: int, error: type[anthropic.APIStatusError], kind: str
) -> None:
    with MessagesServer() as server:
        server.fail(status, retry_after=3)
        with _sdk(server.url) as sdk, pytest.raises(error) as caught:
            _ask(sdk)
    assert caught.value.status_code == status
    assert caught.value.response.headers["retry-after"] == "3"
    body = caught.value.body
    assert isinstance(body, dict)
    assert body["type"] == "error"
    assert body["error"]["type"] == kind


def test_every_answer_has_a_content_length_and_unknown_routes_are_404() -> None:
    with MessagesServer() as server:
        host, port = server.url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=5)
        try:
            statuses = []
            for method, path, body in [
                ("POST", "/v1/messages", b"{}"),  # no step left: 500
                ("POST", "/v1/chat/completions", b"{}"),  # not this protocol: 404
                ("GET", "/v1/models", None),
            ]:
                conn.request(method, path, body=body)
                answer = conn.getresponse()
                assert answer.getheader("Content-Length") is not None
                answer.read()
                statuses.append(answer.status)
        finally:
            conn.close()
        assert statuses == [500, 404, 200]
        assert server.connections == 1


def test_slow_and_loading_quirks_apply() -> None:
    settings = QuirkSettings(loading_requests=1, slow_seconds=0.05)
    with MessagesServer(quirks=["loading", "slow"], quirk_settings=settings) as server:
        server.reply("ready")
        with _sdk(server.url) as sdk:
            with pytest.raises(anthropic.ServiceUnavailableError):
                _ask(sdk)
            assert _ask(sdk).content[0].text == "ready"  # type: ignore[union-attr]


def test_the_module_runs_as_a_process(tmp_path: Path) -> None:
    script = tmp_path / "steps.jsonl"
    script.write_text(
        json.dumps({"status": 529, "headers": {"retry-after": "0"}})
        + "\n"
        + json.dumps({"content": "after the overload"})
        + "\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "mindspace.testing.messages_server", "--script", str(script)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        with _sdk(url) as sdk:
            with pytest.raises(anthropic.OverloadedError):
                _ask(sdk)
            assert _ask(sdk).content[0].text == "after the overload"  # type: ignore[union-attr]
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 0
