"""A small chat wrapper for any OpenAI-compatible endpoint, used by the LLM paths of extraction,
summaries and recaps.

Why a wrapper: every caller needs the same three things — retries with backoff on transient
errors, a process-wide cap on concurrent requests (so a backfill cannot flood the endpoint), and
JSON-object answers parsed robustly (models wrap JSON in prose or code fences).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from typing import Any

from glyphoxa_pipelines.providers.openai_client import make_client, with_backoff

DEFAULT_API_KEY_ENV = "GLYPHOXA_LLM_API_KEY"


class LLMError(RuntimeError):
    """The endpoint failed after retries, or answered something unusable."""


class LLMOutputError(LLMError):
    """The model's answer could not be parsed as the JSON object we asked for."""

    def __init__(self, message: str, raw: str) -> None:
        super().__init__(f"{message}; answer began: {raw[:200]!r}")
        self.raw = raw


_SEMAPHORES: dict[tuple[str, int], threading.BoundedSemaphore] = {}
_SEMAPHORES_LOCK = threading.Lock()


def _semaphore(key: str, limit: int) -> threading.BoundedSemaphore:
    """One limiter per endpoint and limit, shared by every ChatLLM in the process."""
    with _SEMAPHORES_LOCK:
        sem = _SEMAPHORES.get((key, limit))
        if sem is None:
            sem = _SEMAPHORES[(key, limit)] = threading.BoundedSemaphore(max(1, limit))
        return sem


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in `text` (bare, fenced, or embedded in prose), else None."""
    if not text:
        return None
    candidates = [text.strip()]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(text)]
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except (json.JSONDecodeError, ValueError):
            continue
        if isinstance(value, dict):
            return value
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except (json.JSONDecodeError, ValueError):
            continue
        if isinstance(value, dict):
            return value
    return None


@dataclass
class ChatLLM:
    """Chat completions against `base_url` with `model`.

    The API key comes from `api_key`, else the environment variable named by `api_key_env`,
    else OPENAI_API_KEY; local servers (Ollama, vLLM) accept any key.
    """

    model: str
    base_url: str | None = None
    api_key: str | None = None
    api_key_env: str = DEFAULT_API_KEY_ENV
    temperature: float = 0.0
    max_tokens: int | None = 2048
    timeout_s: float = 120.0
    max_retries: int = 4
    concurrency: int = 4
    json_mode: bool = True  # send response_format=json_object; retried without it if refused
    client: Any = None

    def __post_init__(self) -> None:
        self._sem = _semaphore(self.base_url or "openai", self.concurrency)

    def _client(self) -> Any:
        if self.client is None:
            self.client = make_client(
                self.base_url, self.api_key, api_key_env=self.api_key_env, timeout_s=self.timeout_s
            )
        return self.client

    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        json_object: bool = False,
        schema: dict[str, Any] | None = None,
    ) -> str:
        """The assistant's text; transient errors are retried with exponential backoff.

        With `schema` (a JSON schema with a "name" and its "schema"), structured outputs are
        asked for; an endpoint that refuses them is asked for a plain JSON object instead."""
        import openai

        use_format = (json_object or schema is not None) and self.json_mode

        @with_backoff(self.max_retries, max_wait_s=30)
        def call(with_format: bool) -> str:
            kwargs: dict[str, Any] = {
                "model": self.model,
                "messages": messages,
                "temperature": self.temperature,
            }
            if self.max_tokens:
                kwargs["max_tokens"] = self.max_tokens
            if with_format and schema is not None:
                kwargs["response_format"] = {"type": "json_schema", "json_schema": schema}
            elif with_format:
                kwargs["response_format"] = {"type": "json_object"}
            with self._sem:
                response = self._client().chat.completions.create(**kwargs)
            if not response.choices:
                raise LLMError(f"{self.model} returned no choices")
            return response.choices[0].message.content or ""

        try:
            try:
                return call(use_format)
            except openai.BadRequestError:
                if not use_format:
                    raise
                if schema is not None:  # no structured outputs: a JSON object, else the prompt
                    schema = None
                    try:
                        return call(True)
                    except openai.BadRequestError:
                        pass
                return call(False)  # endpoint without JSON mode: the prompt still asks for JSON
        except openai.OpenAIError as exc:
            raise LLMError(f"LLM call to {self.base_url or 'openai'} failed: {exc}") from exc

    def complete_json(
        self,
        system: str,
        user: str,
        *,
        required: bool = False,
        schema: dict[str, Any] | None = None,
    ) -> dict[str, Any] | None:
        """A JSON object answer; None when unparseable (or LLMOutputError if `required`).

        One re-ask with a terse reminder is made before giving up, since most parse failures
        are prose around the object.
        """
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        raw = self.complete(messages, json_object=True, schema=schema)
        parsed = parse_json_object(raw)
        if parsed is None:
            messages += [
                {"role": "assistant", "content": raw},
                {"role": "user", "content": "Answer again with only one valid JSON object."},
            ]
            raw = self.complete(messages, json_object=True, schema=schema)
            parsed = parse_json_object(raw)
        if parsed is None and required:
            raise LLMOutputError(f"{self.model} did not return a JSON object", raw)
        return parsed


def get_llm(
    *,
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    temperature: float = 0.0,
    concurrency: int = 4,
    **_ignored: Any,
) -> ChatLLM | None:
    """A ChatLLM when a model is configured, else None (callers fall back to offline methods)."""
    if not model:
        return None
    return ChatLLM(
        model=model,
        base_url=base_url,
        api_key=api_key,
        temperature=temperature,
        concurrency=concurrency,
    )
