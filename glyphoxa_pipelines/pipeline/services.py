"""What the pipeline steps run against: the database, the embedder, the optional LLM and the
optional speech endpoint.

Why one object: the Dagster resources and the in-process runner (`glyphoxa process`, the demo,
the bench) must hand the *same* step code the same things. Providers are built lazily, so a
step that needs no embedder never loads torch.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from glyphoxa_pipelines.config import Settings

if TYPE_CHECKING:
    from glyphoxa_pipelines.correction import LLMCorrector
    from glyphoxa_pipelines.db import Database
    from glyphoxa_pipelines.providers.embeddings import Embedder
    from glyphoxa_pipelines.providers.llm import ChatLLM
    from glyphoxa_pipelines.providers.speech import SpeechSynthesizer


def embedder_from_settings(settings: Settings) -> Embedder:
    """The configured embedding model: an OpenAI-compatible endpoint when a base URL is set,
    else the bundled all-MiniLM-L6-v2 (offline)."""
    from glyphoxa_pipelines.providers.embeddings import get_embedder

    if settings.embedding_base_url:
        return get_embedder(
            "openai",
            model=settings.embedding_model,
            dimension=settings.embedding_dimension,
            base_url=settings.embedding_base_url,
        )
    return get_embedder(
        "local", model=settings.embedding_model, dimension=settings.embedding_dimension
    )


def llm_from_settings(settings: Settings) -> ChatLLM | None:
    from glyphoxa_pipelines.providers.llm import get_llm

    if not settings.llm_model:
        return None
    return get_llm(base_url=settings.llm_base_url, model=settings.llm_model)


def corrector_llm_from_settings(settings: Settings) -> LLMCorrector | None:
    """Stage-2 correction model, when an LLM is configured."""
    if not settings.llm_model:
        return None
    from glyphoxa_pipelines.correction import LLMCorrector

    return LLMCorrector(model=settings.llm_model, base_url=settings.llm_base_url)


def speech_from_settings(settings: Settings) -> SpeechSynthesizer | None:
    """Spoken recaps, when a speech model is configured; None keeps recaps text only."""
    from glyphoxa_pipelines.providers.speech import get_speech

    return get_speech(
        model=settings.tts_model, voice=settings.tts_voice, base_url=settings.tts_base_url
    )


@dataclass
class PipelineServices:
    """A database plus lazily built providers. `embedder_factory` / `llm_factory` can be
    swapped (tests, a second embedding model for a backfill)."""

    db: Database
    settings: Settings = field(default_factory=Settings.from_env)
    embedder_factory: Callable[[], Embedder] | None = None
    llm_factory: Callable[[], ChatLLM | None] | None = None
    corrector_llm_factory: Callable[[], LLMCorrector | None] | None = None
    speech_factory: Callable[[], SpeechSynthesizer | None] | None = None
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def embedder(self) -> Embedder:
        if "embedder" not in self._cache:
            factory = self.embedder_factory or (lambda: embedder_from_settings(self.settings))
            self._cache["embedder"] = factory()
        return self._cache["embedder"]

    @property
    def llm(self) -> ChatLLM | None:
        if "llm" not in self._cache:
            factory = self.llm_factory or (lambda: llm_from_settings(self.settings))
            self._cache["llm"] = factory()
        return self._cache["llm"]

    @property
    def corrector_llm(self) -> LLMCorrector | None:
        if "corrector_llm" not in self._cache:
            factory = self.corrector_llm_factory or (
                lambda: corrector_llm_from_settings(self.settings)
            )
            self._cache["corrector_llm"] = factory()
        return self._cache["corrector_llm"]

    @property
    def speech(self) -> SpeechSynthesizer | None:
        if "speech" not in self._cache:
            factory = self.speech_factory or (lambda: speech_from_settings(self.settings))
            self._cache["speech"] = factory()
        return self._cache["speech"]


SMALL_BATCH = 8


@contextmanager
def _few_threads(small: bool) -> Iterator[None]:
    """One torch thread for a handful of short texts: the per-call cost of waking a thread
    pool dominates tiny inputs (17 ms vs 650 ms per name on a busy 2-core machine)."""
    torch = sys.modules.get("torch")
    if not small or torch is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class MemoizingEmbedder:
    """Wraps an embedder and remembers every text's vector for one step.

    Why: entity resolution embeds the known names again each time the graph grows; with a memo
    only the texts never seen are sent to the model, so a session's extraction costs a few
    small batches instead of re-embedding every name for every new entity.
    """

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dimension = inner.dimension
        self.max_tokens = inner.max_tokens
        self._memo: dict[str, Any] = {}

    def embed(self, texts: list[str]) -> Any:
        import numpy as np

        todo = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if todo:
            with _few_threads(len(todo) <= SMALL_BATCH):
                vectors = self.inner.embed(todo)
            for text, vec in zip(todo, vectors, strict=True):
                self._memo[text] = vec
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.vstack([self._memo[t] for t in texts]).astype(np.float32, copy=False)

    @property
    def distinct_texts(self) -> int:
        """How many distinct texts went through the model so far."""
        return len(self._memo)

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)
