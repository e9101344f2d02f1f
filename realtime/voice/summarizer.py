"""Summarising the oldest part of a live conversation, for `ContextManager`.

A provider behind a Protocol: by configuration the OpenAI-compatible chat server the NPC
already talks to writes the summary; offline (no server, or the server fails mid-session)
an extractive summary keeps the first sentence of each message with its speaker. The voice
must keep going, so a failed model call falls back rather than raising.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

log = logging.getLogger(__name__)

SUMMARY_PROMPT = (
    "Summarise this part of a tabletop role-playing conversation in at most five short "
    "sentences, keeping names, places, promises, prices and anything a character learned. "
    "Write plain prose in the past tense."
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


class Summarizer(Protocol):
    async def summarize(self, messages: Sequence[dict[str, Any]]) -> str: ...


def _speaker(message: dict[str, Any]) -> str:
    """User lines already start with "Name: "; the assistant is the NPC."""
    return "NPC" if message.get("role") == "assistant" else ""


def _line(message: dict[str, Any], text: str) -> str:
    who = _speaker(message)
    return f"{who}: {text}" if who else text


@dataclass
class ExtractiveSummarizer:
    """The first sentence of each message, with its speaker, cut to `max_chars` in all."""

    max_chars: int = 1_200

    async def summarize(self, messages: Sequence[dict[str, Any]]) -> str:
        lines: list[str] = []
        used = 0
        for m in messages:
            text = str(m.get("content") or "").strip()
            if not text:
                continue
            first = _SENTENCE_END.split(text, maxsplit=1)[0]
            line = _line(m, first)
            if used + len(line) > self.max_chars:
                break
            lines.append(line)
            used += len(line) + 1
        return "\n".join(lines)


@dataclass
class ChatSummarizer:
    """`model` at `base_url` writes the summary; any failure falls back to `fallback`."""

    model: str
    base_url: str | None = None
    api_key: str | None = None
    timeout_s: float = 20.0
    max_tokens: int = 300
    fallback: Summarizer = field(default_factory=ExtractiveSummarizer)
    _client: Any = field(default=None, repr=False)

    def client(self) -> Any:
        if self._client is None:
            from openai import AsyncOpenAI

            key = (self.api_key or os.environ.get("GLYPHOXA_LLM_API_KEY")
                   or os.environ.get("OPENAI_API_KEY") or "not-needed")
            self._client = AsyncOpenAI(base_url=self.base_url, api_key=key,
                                       timeout=self.timeout_s, max_retries=0)
        return self._client

    async def summarize(self, messages: Sequence[dict[str, Any]]) -> str:
        import openai

        transcript = "\n".join(_line(m, str(m.get("content") or "")) for m in messages)
        try:
            response = await self.client().chat.completions.create(
                model=self.model, max_tokens=self.max_tokens, temperature=0.2,
                messages=[{"role": "system", "content": SUMMARY_PROMPT},
                          {"role": "user", "content": transcript}],
            )
            text = (response.choices[0].message.content or "").strip()
        except openai.OpenAIError:
            log.warning("summary by %s failed; using the extractive summary", self.model,
                        exc_info=True)
            text = ""
        return text or await self.fallback.summarize(messages)
