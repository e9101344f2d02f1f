"""The NPC's LLM turn over any OpenAI-compatible chat endpoint, streamed.

Streaming because the first sentence can be spoken while the rest is generated: the loop
hands text to TTS sentence by sentence. Tool calls arrive as fragments spread over chunks
(id and name first, the arguments' JSON in pieces), so they are assembled by index and
handed over whole when the stream ends.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from realtime.voice.interfaces import ChatEvent, ToolCall

DEFAULT_API_KEY_ENV = "GLYPHOXA_LLM_API_KEY"


@dataclass
class OpenAIChat:
    """`model` at `base_url` (a local server by configuration: llama.cpp, vLLM, Ollama).

    No retries on the voice path: a retried turn answers seconds late, which is worse at the
    table than a short "hm?" the caller can play instead.
    """

    model: str
    base_url: str | None = None
    api_key: str | None = None
    temperature: float = 0.7
    max_tokens: int = 200
    timeout_s: float = 20.0
    _client: Any = field(default=None, repr=False)

    def client(self) -> Any:
        if self._client is None:
            from openai import AsyncOpenAI

            key = (self.api_key or os.environ.get(DEFAULT_API_KEY_ENV)
                   or os.environ.get("OPENAI_API_KEY") or "not-needed")
            self._client = AsyncOpenAI(base_url=self.base_url, api_key=key,
                                       timeout=self.timeout_s, max_retries=0)
        return self._client

    async def stream(
        self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]
    ) -> AsyncIterator[ChatEvent]:
        kwargs: dict[str, Any] = {}
        if tools:
            kwargs["tools"] = list(tools)
            kwargs["tool_choice"] = "auto"
        stream = await self.client().chat.completions.create(
            model=self.model, messages=list(messages), stream=True,
            temperature=self.temperature, max_tokens=self.max_tokens, **kwargs,
        )
        calls: dict[int, dict[str, str]] = {}
        async for chunk in stream:
            if not chunk.choices:
                continue
            delta = chunk.choices[0].delta
            if delta.content:
                yield ChatEvent(text=delta.content)
            for piece in delta.tool_calls or ():
                call = calls.setdefault(piece.index, {"id": "", "name": "", "arguments": ""})
                call["id"] = piece.id or call["id"]
                if piece.function is not None:
                    # some servers repeat the name in every fragment: it is not concatenated
                    call["name"] = call["name"] or piece.function.name or ""
                    call["arguments"] += piece.function.arguments or ""
        if calls:
            yield ChatEvent(tool_calls=[
                ToolCall(c["id"] or f"call_{i}", c["name"], c["arguments"])
                for i, c in sorted(calls.items())
            ])
