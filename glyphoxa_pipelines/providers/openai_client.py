"""One way to reach an OpenAI-compatible endpoint: client construction (key resolution) and
the retry policy with backoff, shared by the chat LLM, the LLM corrector and the embedder."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def make_client(
    base_url: str | None,
    api_key: str | None = None,
    *,
    api_key_env: str = "GLYPHOXA_LLM_API_KEY",
    timeout_s: float = 60.0,
    max_retries: int = 0,
) -> Any:
    """An `openai.OpenAI` client. The key comes from the argument, `api_key_env`, then
    OPENAI_API_KEY; local servers (Ollama, vLLM) need none, so a placeholder is sent."""
    from openai import OpenAI

    key = api_key or os.environ.get(api_key_env) or os.environ.get("OPENAI_API_KEY")
    return OpenAI(
        base_url=base_url, api_key=key or "not-needed", timeout=timeout_s, max_retries=max_retries
    )


def with_backoff(
    attempts: int, max_wait_s: float
) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Retry transient endpoint failures (connection, timeout, rate limit, 5xx) with
    exponential backoff and jitter; other errors surface at once."""
    import openai
    from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_exponential_jitter

    retryable = (
        openai.APIConnectionError,
        openai.APITimeoutError,
        openai.RateLimitError,
        openai.InternalServerError,
    )
    return retry(
        retry=retry_if_exception_type(retryable),
        stop=stop_after_attempt(max(1, attempts)),
        wait=wait_exponential_jitter(initial=0.5, max=max_wait_s),
        reraise=True,
    )
