"""Where the model endpoint is: the workspace's ``llm.toml`` and the environment.

``llm.toml`` in the workspace folder (all keys optional)::

    provider = "openai"                      # the default provider of ask: extractive or openai
    base_url = "http://127.0.0.1:11434/v1"   # an OpenAI-compatible endpoint, ending in /v1
    model = "qwen2.5:7b-instruct"
    api_key = "..."                          # better: RAGSPINE_LLM_API_KEY in the environment
    timeout = 60                             # seconds per request
    max_retries = 2                          # further tries after a 429 or a 5xx answer
    stream = false                           # read the reply as a stream of events

The environment variables ``RAGSPINE_LLM_BASE_URL``, ``RAGSPINE_LLM_MODEL`` and
``RAGSPINE_LLM_API_KEY`` override the file. The key is kept out of ``repr`` and out of every
message this package writes.
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragspine.errors import ConfigError, quote_input
from ragspine.llm.provider import ProviderName

SETTINGS_FILENAME = "llm.toml"
ENV_BASE_URL = "RAGSPINE_LLM_BASE_URL"
ENV_MODEL = "RAGSPINE_LLM_MODEL"
ENV_API_KEY = "RAGSPINE_LLM_API_KEY"
DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_RETRIES = 2
MAX_RETRIES_LIMIT = 10
_KEYS = ("provider", "base_url", "model", "api_key", "timeout", "max_retries", "stream")


@dataclass(frozen=True, slots=True)
class LLMSettings:
    """How to reach a model endpoint (``api_key`` is never shown by ``repr``)."""

    provider: ProviderName = ProviderName.EXTRACTIVE
    base_url: str | None = None
    model: str | None = None
    api_key: str | None = field(default=None, repr=False)
    timeout: float = DEFAULT_TIMEOUT
    max_retries: int = DEFAULT_MAX_RETRIES
    stream: bool = False

    def __post_init__(self) -> None:
        timeout: object = self.timeout
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not math.isfinite(timeout)
            or timeout <= 0
        ):
            raise ConfigError(f"llm timeout must be a number of seconds > 0, got {timeout!r}")
        retries: object = self.max_retries
        if (
            isinstance(retries, bool)
            or not isinstance(retries, int)
            or not 0 <= retries <= MAX_RETRIES_LIMIT
        ):
            raise ConfigError(
                f"llm max_retries must be a whole number from 0 to {MAX_RETRIES_LIMIT}, "
                f"got {retries!r}"
            )
        if not isinstance(self.stream, bool):
            raise ConfigError(f"llm stream must be true or false, got {self.stream!r}")
        if self.base_url is not None:
            _check_base_url(self.base_url)

    def endpoint(self) -> tuple[str, str]:
        """The base URL and model, or a :class:`ConfigError` saying how to set them."""
        missing = [
            name
            for name, value, env in (
                ("base_url", self.base_url, ENV_BASE_URL),
                ("model", self.model, ENV_MODEL),
            )
            if not value
        ]
        if missing:
            where = " and ".join(
                f"{name} ({ENV_BASE_URL if name == 'base_url' else ENV_MODEL})" for name in missing
            )
            raise ConfigError(
                f"the openai provider needs {where}: set the environment variable or the key in "
                f"the workspace's {SETTINGS_FILENAME}"
            )
        assert self.base_url is not None and self.model is not None
        return self.base_url.rstrip("/"), self.model


def _check_base_url(url: str) -> None:
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ConfigError(
            f"llm base_url {quote_input(url)} must be an http:// or https:// URL ending in /v1"
        )
    if url.rstrip("/").endswith("/chat/completions"):
        raise ConfigError(
            f"llm base_url {quote_input(url)} names the chat endpoint itself: give the base "
            "ending in /v1 (RAGSpine adds /chat/completions)"
        )


def load_settings(folder: Path | None, environ: Mapping[str, str] | None = None) -> LLMSettings:
    """The settings of the workspace at ``folder`` (its ``llm.toml``, when present) with the
    environment's ``RAGSPINE_LLM_*`` variables on top. Read again whenever the file (its size
    and modification time) or those variables change; otherwise the last reading is reused,
    since every ``ask`` asks."""
    env = os.environ if environ is None else environ
    path = None if folder is None else folder / SETTINGS_FILENAME
    try:
        stat = None if path is None else path.stat()
        signature: tuple[object, ...] | None = (
            path,
            None if stat is None else (stat.st_mtime_ns, stat.st_size, stat.st_ino),
            tuple(env.get(name) for name in (ENV_BASE_URL, ENV_MODEL, ENV_API_KEY)),
        )
    except FileNotFoundError:
        signature = (path, None, tuple(env.get(n) for n in (ENV_BASE_URL, ENV_MODEL, ENV_API_KEY)))
    except OSError:
        signature = None  # unreadable: read below, which reports it
    cached = _LAST.get(path)
    if signature is not None and cached is not None and cached[0] == signature:
        return cached[1]
    settings = _load(path, env)
    if signature is not None:
        _LAST[path] = (signature, settings)
    return settings


_LAST: dict[Path | None, tuple[tuple[object, ...], LLMSettings]] = {}
"""The last settings read per folder and what they were read from (one assignment per entry:
safe between threads)."""


def _load(path: Path | None, env: Mapping[str, str]) -> LLMSettings:
    values: dict[str, Any] = {}
    if path is not None and path.is_file():
        values = _read_file(path)
    for key, name in (("base_url", ENV_BASE_URL), ("model", ENV_MODEL), ("api_key", ENV_API_KEY)):
        if env.get(name):
            values[key] = env[name]
    if "provider" in values:
        values["provider"] = ProviderName.parse(values["provider"])
    try:
        return LLMSettings(**values)
    except ConfigError as exc:
        source = f"{path}" if path is not None and path.is_file() else "the environment"
        raise ConfigError(f"{source}: {exc}") from None


def _read_file(path: Path) -> dict[str, Any]:
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    unknown = sorted(set(document) - set(_KEYS))
    if unknown:
        raise ConfigError(f"{path}: unknown keys {unknown}; use {', '.join(_KEYS)}")
    for key in ("base_url", "model", "api_key"):
        if key in document and not isinstance(document[key], str):
            raise ConfigError(f"{path}: {key} must be a string")
    return dict(document)
