"""The ``openai`` provider against a fake endpoint on 127.0.0.1: requests, retries, errors,
timeouts, streaming, and the API key kept out of every message."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from fake_openai import FakeEndpoint, Reply
from ragspine.errors import ConfigError, ProviderError
from ragspine.llm.openai_compat import OpenAICompatibleProvider
from ragspine.llm.provider import Message, ProviderName, Role, ToolSpec
from ragspine.llm.settings import LLMSettings, load_settings

KEY = "sk-test-SECRET-0123456789"
HELLO = [Message(Role.USER, "hello")]


def provider(endpoint: FakeEndpoint, **changes: object) -> tuple[OpenAICompatibleProvider, list]:
    waits: list[float] = []
    settings = LLMSettings(
        ProviderName.OPENAI,
        endpoint.base_url,
        "tiny",
        KEY,
        **changes,  # type: ignore[arg-type]
    )
    return OpenAICompatibleProvider(settings, sleep=waits.append), waits


def test_a_completion_is_one_post_with_model_messages_tools_and_the_key(
    fake_endpoint: FakeEndpoint,
) -> None:
    fake_endpoint.script = [Reply("Hi there.", tool_calls=[("search_documents", '{"query":"x"}')])]
    made, _ = provider(fake_endpoint)
    tool = ToolSpec("search_documents", "search", {"type": "object"})
    reply = made.generate(HELLO, tools=[tool])
    assert reply.text == "Hi there." and reply.complete
    (call,) = reply.tool_calls
    assert (call.name, call.arguments) == ("search_documents", '{"query":"x"}')
    (request,) = fake_endpoint.requests
    assert request["path"] == "/v1/chat/completions"
    body = request["body"]
    assert body["model"] == "tiny" and body["temperature"] == 0
    assert body["messages"] == [{"role": "user", "content": "hello"}]
    assert body["tools"][0]["function"]["name"] == "search_documents"
    assert fake_endpoint.headers[0]["Authorization"] == f"Bearer {KEY}"


def test_429_then_200_is_retried_after_a_backoff(fake_endpoint: FakeEndpoint) -> None:
    fake_endpoint.script = [Reply(status=429), Reply(status=503), Reply("Fine.")]
    made, waits = provider(fake_endpoint)
    assert made.generate(HELLO).text == "Fine."
    assert len(fake_endpoint.requests) == 3 and waits == [0.5, 1.0]


def test_retry_after_is_honoured_within_its_cap(fake_endpoint: FakeEndpoint) -> None:
    fake_endpoint.script = [Reply(status=429, headers={"Retry-After": "3"}), Reply("ok")]
    made, waits = provider(fake_endpoint)
    assert made.generate(HELLO).text == "ok" and waits == [3.0]


def test_retries_are_bounded(fake_endpoint: FakeEndpoint) -> None:
    fake_endpoint.script = [Reply(status=500)] * 5
    made, waits = provider(fake_endpoint, max_retries=2)
    with pytest.raises(ProviderError, match=r"HTTP 500 3 times.*try again later"):
        made.generate(HELLO)
    assert len(fake_endpoint.requests) == 3 and len(waits) == 2


def test_a_4xx_is_a_clear_error_at_once_and_never_shows_the_key(
    fake_endpoint: FakeEndpoint,
) -> None:
    fake_endpoint.script = [Reply(status=401, error=f"Incorrect API key provided: {KEY}")]
    made, waits = provider(fake_endpoint)
    with pytest.raises(ProviderError) as raised:
        made.generate(HELLO)
    message = str(raised.value)
    assert "HTTP 401" in message and "check the model name, the API key" in message
    assert KEY not in message and "***" in message
    assert len(fake_endpoint.requests) == 1 and waits == []


def test_a_timeout_is_a_clear_error(fake_endpoint: FakeEndpoint) -> None:
    fake_endpoint.script = [Reply("late", delay=1.0)]
    made, _ = provider(fake_endpoint, timeout=0.2)
    with pytest.raises(ProviderError, match=r"did not answer within 0\.2 s"):
        made.generate(HELLO)


def test_an_unreachable_endpoint_says_so() -> None:
    settings = LLMSettings(ProviderName.OPENAI, "http://127.0.0.1:9/v1", "tiny", KEY)
    with pytest.raises(ProviderError, match="cannot reach the model endpoint") as raised:
        OpenAICompatibleProvider(settings).generate(HELLO)
    assert KEY not in str(raised.value)


def test_a_body_that_is_not_a_completion_is_an_error(fake_endpoint: FakeEndpoint) -> None:
    fake_endpoint.script = [Reply(status=200)]
    made, _ = provider(fake_endpoint)

    def broken(handler: object, reply: Reply) -> None:
        data = b"<html>proxy login</html>"
        handler.send_response(200)  # type: ignore[attr-defined]
        handler.send_header("Content-Length", str(len(data)))  # type: ignore[attr-defined]
        handler.end_headers()  # type: ignore[attr-defined]
        handler.wfile.write(data)  # type: ignore[attr-defined]

    fake_endpoint._send = broken  # type: ignore[method-assign]
    with pytest.raises(ProviderError, match="not a chat completion"):
        made.generate(HELLO)


def test_a_stream_is_read_to_its_end_and_a_cut_one_is_partial(
    fake_endpoint: FakeEndpoint,
) -> None:
    text = "Revenue rose 12% in FY2024. [1] Net income improved. [1]"
    fake_endpoint.script = [Reply(text, stream=True), Reply(text, stream=True, cut=True)]
    made, _ = provider(fake_endpoint, stream=True)
    whole = made.generate(HELLO)
    assert whole.text == text and whole.complete
    assert fake_endpoint.requests[0]["body"]["stream"] is True
    partial = made.generate(HELLO)
    assert text.startswith(partial.text) and len(partial.text) < len(text)
    assert not partial.complete


def test_the_key_is_in_no_repr_and_no_log_line(
    fake_endpoint: FakeEndpoint, caplog: pytest.LogCaptureFixture
) -> None:
    fake_endpoint.script = [Reply("ok")]
    with caplog.at_level(logging.DEBUG):
        made, _ = provider(fake_endpoint)
        made.generate(HELLO)
    assert KEY not in repr(made) and KEY not in repr(made._settings)
    assert KEY not in caplog.text


def test_settings_come_from_llm_toml_with_the_environment_on_top(tmp_path: Path) -> None:
    (tmp_path / "llm.toml").write_text(
        'provider = "openai"\nbase_url = "http://127.0.0.1:1/v1"\nmodel = "a"\ntimeout = 5\n',
        encoding="utf-8",
    )
    settings = load_settings(tmp_path, {"RAGSPINE_LLM_MODEL": "b", "RAGSPINE_LLM_API_KEY": KEY})
    assert settings.provider is ProviderName.OPENAI and settings.timeout == 5
    assert settings.model == "b" and settings.api_key == KEY
    assert settings.endpoint() == ("http://127.0.0.1:1/v1", "b")
    assert load_settings(tmp_path / "none", {}) == LLMSettings()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("timeout = 0\n", "timeout must be a number of seconds > 0"),
        ("max_retries = 99\n", "max_retries must be a whole number from 0 to 10"),
        ('base_url = "ftp://x/v1"\n', "must be an http:// or https:// URL ending in /v1"),
        ('base_url = "http://x/v1/chat/completions"\n', "names the chat endpoint itself"),
        ('provider = "gpt"\n', "unknown provider 'gpt': use extractive, openai"),
        ('api_base = "x"\n', "unknown keys \\['api_base'\\]"),
        ("model = [\n", "is not valid TOML"),
    ],
)
def test_bad_settings_are_clear_errors(tmp_path: Path, content: str, message: str) -> None:
    (tmp_path / "llm.toml").write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_settings(tmp_path, {})


def test_a_missing_endpoint_says_which_variable_to_set() -> None:
    with pytest.raises(ConfigError, match=r"RAGSPINE_LLM_BASE_URL.*RAGSPINE_LLM_MODEL"):
        LLMSettings(ProviderName.OPENAI).endpoint()


def test_the_base_install_needs_no_httpx() -> None:
    """Without httpx, everything but the openai provider imports, and that names the extra."""
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['httpx'] = None\n"
        "import ragspine, ragspine.answer.router, ragspine.answer.agent, ragspine.cli.answer\n"
        "from ragspine.errors import MissingExtraError\n"
        "from ragspine.llm.openai_compat import OpenAICompatibleProvider\n"
        "from ragspine.llm.settings import LLMSettings\n"
        "try:\n"
        "    OpenAICompatibleProvider(LLMSettings(base_url='http://127.0.0.1:1/v1', model='m'))\n"
        "except MissingExtraError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'ragspine[llm]'" in done.stdout
