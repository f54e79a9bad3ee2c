"""The test chat-completions server behaves like real servers: keep-alive and quirk modes."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import openai
import pytest

from mindspace.testing import ChatCompletionsServer, Quirk, QuirkSettings, Step
from mindspace.testing.quirks import UNRENDERED_TOOLS_REPLY

TOOL = {
    "type": "function",
    "function": {
        "name": "add_goal",
        "parameters": {"type": "object", "properties": {"description": {"type": "string"}}},
    },
}
CALL = {"name": "add_goal", "arguments": {"description": "Fix the gate"}}


Connect = Callable[..., openai.OpenAI]


@pytest.fixture
def client() -> Iterator[Connect]:
    """Makes SDK clients (no SDK retries) and closes them after the test."""
    made: list[openai.OpenAI] = []

    def make(url: str, **options: Any) -> openai.OpenAI:
        made.append(openai.OpenAI(base_url=url, api_key="test", max_retries=0, **options))
        return made[-1]

    yield make
    for sdk in made:
        sdk.close()


def _chat(client: openai.OpenAI, **extra: Any) -> Any:
    return client.chat.completions.create(
        model="scripted", messages=[{"role": "user", "content": "hi"}], **extra
    )


def test_one_client_reuses_one_connection_for_several_requests(client: Connect) -> None:
    with ChatCompletionsServer() as server:
        server.reply("one")
        server.reply("two")
        server.reply("three")
        sdk = client(server.url)
        answers = [_chat(sdk).choices[0].message.content for _ in range(3)]
        assert sdk.models.list().data[0].id == "scripted"
        assert answers == ["one", "two", "three"]
        assert server.connections == 1


def test_every_answer_has_a_content_length_and_keeps_the_connection_open() -> None:
    with ChatCompletionsServer() as server:
        host, port = server.url.removeprefix("http://").removesuffix("/v1").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=5)
        try:
            for method, path, body in [
                ("POST", "/v1/chat/completions", b"{}"),  # no step left: 500
                ("GET", "/v1/nowhere", None),  # 404
                ("POST", "/v1/chat/completions", b"not json"),  # 400
                ("GET", "/v1/models", None),
            ]:
                conn.request(method, path, body=body)
                answer = conn.getresponse()
                payload = answer.read()
                assert answer.version == 11
                assert int(answer.headers["Content-Length"]) == len(payload)
                assert answer.headers.get("Connection") != "close"
        finally:
            conn.close()
        assert server.connections == 1


@pytest.mark.parametrize(
    ("quirk", "expected"),
    [
        (
            Quirk.TEXT_TOOL_CALLS_JSON,
            'On it.\n{"name": "add_goal", "arguments": {"description": "Fix the gate"}}',
        ),
        (
            Quirk.TEXT_TOOL_CALLS_TAGS,
            "On it.\n<tool_call>\n"
            '{"name": "add_goal", "arguments": {"description": "Fix the gate"}}\n</tool_call>',
        ),
        (
            Quirk.TEXT_TOOL_CALLS_FENCED,
            'On it.\n```json\n{"name": "add_goal", "arguments": {"description": "Fix the gate"}}'
            "\n```",
        ),
    ],
)
def test_text_tool_call_quirks_write_the_call_into_the_content(
    client: Connect, quirk: Quirk, expected: str
) -> None:
    with ChatCompletionsServer(quirks=[quirk]) as server:
        server.reply("On it.", tool_calls=[CALL])
        choice = _chat(client(server.url), tools=[TOOL]).choices[0]
    assert choice.message.content == expected
    assert choice.message.tool_calls is None
    assert choice.finish_reason == "stop"


def test_tools_need_tool_choice_answers_text_unless_tool_choice_is_set(client: Connect) -> None:
    with ChatCompletionsServer(quirks=["tools_need_tool_choice"]) as server:
        server.reply(tool_calls=[CALL])
        server.reply(tool_calls=[CALL])
        sdk = client(server.url)
        without = _chat(sdk, tools=[TOOL]).choices[0]
        with_choice = _chat(sdk, tools=[TOOL], tool_choice="auto").choices[0]
    assert without.message.content == UNRENDERED_TOOLS_REPLY
    assert without.message.tool_calls is None
    assert with_choice.message.tool_calls[0].function.name == "add_goal"
    assert json.loads(with_choice.message.tool_calls[0].function.arguments) == CALL["arguments"]
    assert with_choice.finish_reason == "tool_calls"


def test_length_cuts_the_reply_and_says_so(client: Connect) -> None:
    with ChatCompletionsServer(quirks=["length"], quirk_settings=QuirkSettings(3)) as server:
        server.reply("The tavern opens at dawn every day.")
        server.reply("Short one.")
        sdk = client(server.url)
        cut, short = _chat(sdk).choices[0], _chat(sdk).choices[0]
    assert (cut.message.content, cut.finish_reason) == ("The tavern opens", "length")
    assert (short.message.content, short.finish_reason) == ("Short one.", "stop")


def test_no_usage_leaves_usage_out(client: Connect) -> None:
    with ChatCompletionsServer(quirks=["no_usage"]) as server:
        server.reply("hello")
        assert _chat(client(server.url)).usage is None
    with ChatCompletionsServer() as server:
        server.reply("hello")
        assert _chat(client(server.url)).usage.completion_tokens == 1


def test_loading_answers_503_for_the_first_requests_then_serves(client: Connect) -> None:
    settings = QuirkSettings(loading_requests=2)
    with ChatCompletionsServer(quirks=["loading"], quirk_settings=settings) as server:
        server.reply("ready")
        sdk = client(server.url)
        for _ in range(2):
            with pytest.raises(openai.InternalServerError) as caught:
                _chat(sdk)
            assert caught.value.status_code == 503
            assert caught.value.body == {"message": "Loading model", "type": "unavailable_error"}
        assert _chat(sdk).choices[0].message.content == "ready"
        assert server.pending == 0


def test_bad_json_answers_200_with_a_body_that_is_not_json() -> None:
    with ChatCompletionsServer(quirks=["bad_json"]) as server:
        server.reply("never seen")
        host, port = server.url.removeprefix("http://").removesuffix("/v1").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=5)
        conn.request("POST", "/v1/chat/completions", body=b"{}")
        answer = conn.getresponse()
        assert (answer.status, answer.read()) == (200, b"not json {")
        conn.close()


def test_slow_delays_every_answer(client: Connect) -> None:
    settings = QuirkSettings(slow_seconds=0.5)
    with ChatCompletionsServer(quirks=["slow"], quirk_settings=settings) as server:
        server.reply("late")
        with pytest.raises(openai.APITimeoutError):
            _chat(client(server.url, timeout=0.1))


def test_respond_answers_when_no_step_is_queued(client: Connect) -> None:
    def respond(body: dict[str, Any]) -> Step:
        return Step(content=f"echo: {body['messages'][-1]['content']}")

    with ChatCompletionsServer(respond=respond, model_info={"context_length": 8192}) as server:
        server.reply("scripted first")
        sdk = client(server.url)
        assert _chat(sdk).choices[0].message.content == "scripted first"
        assert _chat(sdk).choices[0].message.content == "echo: hi"
        entry = sdk.models.list().data[0]
        assert entry.model_dump()["context_length"] == 8192


def test_the_module_runs_as_a_process_with_quirks(tmp_path: Any) -> None:
    script = tmp_path / "steps.jsonl"
    script.write_text(json.dumps({"content": "one two three four five six"}) + "\n")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mindspace.testing.chat_server",
            "--script",
            str(script),
            "--quirk",
            "length",
            "--quirk",
            "no_usage",
            "--length-words",
            "2",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        with openai.OpenAI(base_url=url, api_key="t", max_retries=0, timeout=10) as sdk:
            answer = _chat(sdk)
        assert answer.choices[0].message.content == "one two"
        assert answer.choices[0].finish_reason == "length"
        assert answer.usage is None
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 0


def test_an_unknown_quirk_is_refused() -> None:
    with pytest.raises(ValueError, match="'sleepy'"):
        ChatCompletionsServer(quirks=["sleepy"])


def test_a_client_resetting_a_kept_alive_connection_is_not_an_error(
    capfd: pytest.CaptureFixture[str],
) -> None:
    with ChatCompletionsServer() as server:
        host, port = server.url.removeprefix("http://").removesuffix("/v1").split(":")
        with socket.create_connection((host, int(port))) as sock:
            sock.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n")
            assert sock.recv(65536).startswith(b"HTTP/1.1 200")
            # linger 0: close with a reset, as a client whose event loop died does
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        time.sleep(0.2)  # let the server's thread meet the reset (real I/O, not a clock)
    assert "Traceback" not in capfd.readouterr().err
