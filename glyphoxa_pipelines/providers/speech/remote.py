"""Text to speech through any OpenAI-compatible `/audio/speech` endpoint, for spoken recaps.

Why a wrapper: the recap step needs the same retry policy as the other endpoints and a file
that is either complete or absent (a player's bot may pick it up at any moment), so the audio
is written to a temporary file in the target folder and renamed into place.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from glyphoxa_pipelines.providers.openai_client import make_client, with_backoff

DEFAULT_VOICE = "alloy"
DEFAULT_FORMAT = "mp3"
DEFAULT_API_KEY_ENV = "GLYPHOXA_TTS_API_KEY"


class SpeechError(RuntimeError):
    """The speech endpoint failed after retries, or answered no audio."""


@dataclass
class SpeechSynthesizer:
    """`model` speaking with `voice` at `base_url` (OpenAI itself when None).

    The key comes from `api_key`, else GLYPHOXA_TTS_API_KEY, else OPENAI_API_KEY; local servers
    accept any key.
    """

    model: str
    voice: str = DEFAULT_VOICE
    base_url: str | None = None
    api_key: str | None = None
    api_key_env: str = DEFAULT_API_KEY_ENV
    response_format: str = DEFAULT_FORMAT
    timeout_s: float = 120.0
    max_retries: int = 4
    max_wait_s: float = 30.0
    client: Any = None

    def _client(self) -> Any:
        if self.client is None:
            self.client = make_client(
                self.base_url, self.api_key, api_key_env=self.api_key_env, timeout_s=self.timeout_s
            )
        return self.client

    def synthesize(self, text: str) -> bytes:
        """The audio bytes for `text`; transient errors are retried with backoff."""
        import openai

        @with_backoff(self.max_retries, max_wait_s=self.max_wait_s)
        def call() -> bytes:
            response = self._client().audio.speech.create(
                model=self.model,
                voice=self.voice,
                input=text,
                response_format=self.response_format,
            )
            return response.content

        try:
            audio = call()
        except openai.OpenAIError as exc:
            raise SpeechError(f"speech call to {self.base_url or 'openai'} failed: {exc}") from exc
        if not audio:
            raise SpeechError(f"{self.model} returned no audio")
        return audio

    def synthesize_to(self, text: str, path: Path) -> int:
        """Write the audio for `text` to `path` atomically; returns the number of bytes."""
        audio = self.synthesize(text)
        write_atomic(path, audio)
        return len(audio)


def write_atomic(path: Path, data: bytes) -> None:
    """Temp file in the same folder, fsync, rename: readers see the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def get_speech(
    *,
    model: str | None = None,
    voice: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    **_ignored: Any,
) -> SpeechSynthesizer | None:
    """A synthesizer when a model is configured, else None (recaps stay text only)."""
    if not model:
        return None
    return SpeechSynthesizer(
        model=model, voice=voice or DEFAULT_VOICE, base_url=base_url, api_key=api_key
    )
