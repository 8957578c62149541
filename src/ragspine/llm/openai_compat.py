"""The ``openai`` provider: any OpenAI-compatible ``/v1/chat/completions`` endpoint over httpx.

OpenAI, vLLM, Ollama, llama.cpp's server and LM Studio all speak this one request. Requests have
a timeout; a ``429`` or ``5xx`` answer is tried again up to ``max_retries`` times, waiting
``BACKOFF_SECONDS * 2**attempt`` (or the server's ``Retry-After``, at most ``MAX_WAIT_SECONDS``);
any other ``4xx`` is a :class:`~ragspine.errors.ProviderError` at once. A streamed reply
(server-sent events) is read to its end; one that stops early is returned with
``finish_reason`` ``None``.
The API key goes in the ``Authorization`` header only: no message, log line or ``repr`` holds it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ragspine.errors import MissingExtraError, ProviderError, quote_input
from ragspine.llm.provider import Generation, Message, ProviderName, ToolCall, ToolSpec
from ragspine.llm.settings import LLMSettings

if TYPE_CHECKING:
    import httpx

BACKOFF_SECONDS = 0.5
MAX_WAIT_SECONDS = 8.0
ERROR_EXCERPT = 200
"""How many characters of an endpoint's error body a message shows."""


def _httpx() -> Any:
    try:
        import httpx
    except ImportError:
        raise MissingExtraError("the openai provider", "llm") from None
    return httpx


class OpenAICompatibleProvider:
    """Chat completions from the endpoint ``settings`` names (see :mod:`ragspine.llm.settings`).

    ``transport`` (an ``httpx.BaseTransport``) and ``sleep`` are seams for tests.
    """

    name = ProviderName.OPENAI

    def __init__(
        self,
        settings: LLMSettings,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._httpx = _httpx()
        self._base_url, self.model = settings.endpoint()
        self._settings = settings
        self._sleep = sleep
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if settings.api_key:
            headers["Authorization"] = f"Bearer {settings.api_key}"
        self._client = self._httpx.Client(
            headers=headers, timeout=settings.timeout, transport=transport
        )

    def __repr__(self) -> str:
        return f"OpenAICompatibleProvider(base_url={self._base_url!r}, model={self.model!r})"

    def close(self) -> None:
        self._client.close()

    def generate(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        timeout: float | None = None,
    ) -> Generation:
        """One chat completion (see the module docstring for retries and errors)."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [message.to_wire() for message in messages],
            "temperature": 0,
        }
        if tools:
            body["tools"] = [tool.to_wire() for tool in tools]
        if self._settings.stream:
            body["stream"] = True
        url = f"{self._base_url}/chat/completions"
        wait = timeout if timeout is not None else self._settings.timeout
        attempt = 0
        while True:
            try:
                return self._request(url, body, wait)
            except _Retry as retry:
                if attempt >= self._settings.max_retries:
                    raise ProviderError(
                        f"the model endpoint {self._base_url} answered HTTP {retry.status} "
                        f"{attempt + 1} times: {retry.detail}; try again later"
                    ) from None
                self._sleep(retry.wait if retry.wait is not None else _backoff(attempt))
                attempt += 1

    def _request(self, url: str, body: dict[str, Any], timeout: float) -> Generation:
        httpx = self._httpx
        try:
            with self._client.stream("POST", url, json=body, timeout=timeout) as response:
                status = response.status_code
                if status == 429 or status >= 500:
                    raise _Retry(status, self._detail(response), _retry_after(response))
                if status >= 400:
                    raise ProviderError(
                        f"the model endpoint {self._base_url} refused the request with HTTP "
                        f"{status}: {self._detail(response)}; check the model name, the API key "
                        f"and the base URL"
                    )
                if body.get("stream"):
                    return _read_stream(response.iter_lines(), self._redact)
                return _read_completion(response.read(), self._redact)
        except httpx.TimeoutException:
            raise ProviderError(
                f"the model endpoint {self._base_url} did not answer within {timeout:g} s: "
                "raise timeout in llm.toml or check the server"
            ) from None
        except httpx.TransportError as exc:
            raise ProviderError(
                f"cannot reach the model endpoint {self._base_url}: "
                f"{self._redact(type(exc).__name__ + ': ' + str(exc))}; is the server running?"
            ) from None

    def _detail(self, response: httpx.Response) -> str:
        try:
            raw = response.read().decode("utf-8", "replace")
        except self._httpx.HTTPError:
            raw = ""
        try:
            parsed = json.loads(raw)
            error = parsed.get("error") if isinstance(parsed, dict) else None
            message = error.get("message") if isinstance(error, dict) else error
            if isinstance(message, str):
                raw = message
        except ValueError:
            pass
        return quote_input(self._redact(raw.strip()) or "(no message)", ERROR_EXCERPT)

    def _redact(self, text: str) -> str:
        key = self._settings.api_key
        return text.replace(key, "***") if key else text


class _Retry(Exception):
    def __init__(self, status: int, detail: str, wait: float | None) -> None:
        super().__init__(status)
        self.status = status
        self.detail = detail
        self.wait = wait


def _backoff(attempt: int) -> float:
    return float(min(BACKOFF_SECONDS * 2**attempt, MAX_WAIT_SECONDS))


def _retry_after(response: httpx.Response) -> float | None:
    raw = response.headers.get("retry-after")
    try:
        seconds = float(raw) if raw is not None else None
    except ValueError:
        return None
    if seconds is None or not seconds >= 0:
        return None
    return min(seconds, MAX_WAIT_SECONDS)


def _shape_error(what: str) -> ProviderError:
    return ProviderError(f"the model endpoint's reply is not a chat completion ({what})")


def _read_completion(raw: bytes, redact: Callable[[str], str]) -> Generation:
    try:
        data = json.loads(raw)
        choice = data["choices"][0]
        message = choice["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        start = redact(raw[:80].decode("utf-8", "replace"))
        raise _shape_error(f"body starts {quote_input(start)}") from None
    if not isinstance(message, dict):
        raise _shape_error("message is not an object")
    content = message.get("content") or ""
    if not isinstance(content, str):
        raise _shape_error("content is not text")
    calls = []
    for index, call in enumerate(message.get("tool_calls") or ()):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            raise _shape_error(f"tool call {index} has no function")
        arguments = function.get("arguments")
        if not isinstance(arguments, str):  # some servers send an object: keep it as JSON text
            arguments = json.dumps(arguments)
        calls.append(
            ToolCall(str(call.get("id") or f"call_{index}"), str(function.get("name")), arguments)
        )
    finish = choice.get("finish_reason") if isinstance(choice, dict) else None
    return Generation(content, tuple(calls), str(finish) if finish else "stop")


def _read_stream(lines: Iterator[str], redact: Callable[[str], str]) -> Generation:
    """Accumulate a server-sent-events reply; a stream that stops before ``[DONE]`` or a
    finish reason is a partial reply (``finish_reason`` ``None``)."""
    text: list[str] = []
    calls: dict[int, dict[str, str]] = {}
    finish: str | None = None
    try:
        for line in lines:
            if not line.startswith("data:"):
                continue
            payload = line[len("data:") :].strip()
            if payload == "[DONE]":
                finish = finish or "stop"
                break
            try:
                choice = json.loads(payload)["choices"][0]
            except (ValueError, KeyError, IndexError, TypeError):
                raise _shape_error(f"event {quote_input(redact(payload), 80)}") from None
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                text.append(delta["content"])
            for part in delta.get("tool_calls") or ():
                empty = {"id": "", "name": "", "args": ""}
                slot = calls.setdefault(int(part.get("index", 0)), empty)
                function = part.get("function") or {}
                slot["id"] = part.get("id") or slot["id"]
                slot["name"] += function.get("name") or ""
                slot["args"] += function.get("arguments") or ""
            if choice.get("finish_reason"):
                finish = str(choice["finish_reason"])
    except _httpx().TransportError:
        finish = None  # the connection dropped: what arrived is a partial reply
    tool_calls = tuple(
        ToolCall(slot["id"] or f"call_{index}", slot["name"], slot["args"])
        for index, slot in sorted(calls.items())
    )
    return Generation("".join(text), tool_calls, finish)
