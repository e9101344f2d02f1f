"""Dagster resources: the database, the embedding model and the optional LLM.

Configured from environment variables through `EnvVar` (see `definitions.py`), so the Dagster UI
shows where each value comes from without showing secrets. Each resource hands the pipeline's
plain provider objects to the step functions; open pools and loaded models are cached per
process, because the daemon evaluates sensors every few seconds and a run's steps share them.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

from dagster import ConfigurableResource

from glyphoxa_pipelines.config import DEFAULT_EMBEDDING_MODEL, Settings

_LOCK = threading.Lock()
_DATABASES: dict[tuple[str | None, str | None], Any] = {}
_EMBEDDERS: dict[tuple[Any, ...], Any] = {}


class GlyphoxaDatabase(ConfigurableResource):
    """The memory database: a DSN, else the embedded server under `home`."""

    home: str | None = None
    database_url: str | None = None

    def settings(self) -> Settings:
        base = Settings.from_env()
        return replace(
            base,
            home=Path(self.home).expanduser().resolve() if self.home else base.home,
            database_url=self.database_url or base.database_url,
        )

    def database(self) -> Any:
        """An open sync `Database` (started, migrated and pooled once per process)."""
        from glyphoxa_pipelines.db import Database, resolve_url

        key = (self.home, self.database_url)
        with _LOCK:
            db = _DATABASES.get(key)
            if db is None:
                db = Database(resolve_url(self.settings()), max_size=4).open()
                _DATABASES[key] = db
            return db


class EmbedderResource(ConfigurableResource):
    """The embedding model: bundled all-MiniLM-L6-v2 (offline) or an OpenAI-compatible
    endpoint when `base_url` is set. The model id is part of chunk_embeddings' code version."""

    model: str = DEFAULT_EMBEDDING_MODEL
    dimension: int | None = None
    base_url: str | None = None
    api_key: str | None = None

    def get(self) -> Any:
        from glyphoxa_pipelines.providers.embeddings import get_embedder

        key = (self.model, self.dimension, self.base_url)
        with _LOCK:
            embedder = _EMBEDDERS.get(key)
            if embedder is None:
                if self.base_url:
                    embedder = get_embedder(
                        "openai",
                        model=self.model,
                        dimension=self.dimension,
                        base_url=self.base_url,
                        api_key=self.api_key,
                    )
                else:
                    embedder = get_embedder("local", model=self.model, dimension=self.dimension)
                _EMBEDDERS[key] = embedder
            return embedder


class LLMResource(ConfigurableResource):
    """An OpenAI-compatible chat endpoint for correction stage 2, extraction, summaries and
    recaps; without `model` every step uses its offline method."""

    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    concurrency: int = 4  # requests in flight per process; pools cap concurrent steps

    def get(self) -> Any:
        if not self.model:
            return None
        from glyphoxa_pipelines.providers.llm import get_llm

        return get_llm(
            model=self.model,
            base_url=self.base_url,
            api_key=self.api_key,
            concurrency=self.concurrency,
        )

    def corrector(self) -> Any:
        if not self.model:
            return None
        from glyphoxa_pipelines.correction import LLMCorrector

        return LLMCorrector(model=self.model, base_url=self.base_url, api_key=self.api_key)


def pipeline_services(
    glyphoxa_db: GlyphoxaDatabase, embedder: EmbedderResource, llm: LLMResource
) -> Any:
    """The step functions' view of the three resources. The optional speech endpoint for
    spoken recaps needs no resource: its GLYPHOXA_TTS_* settings come from the environment."""
    from glyphoxa_pipelines.pipeline.services import PipelineServices

    settings = replace(
        glyphoxa_db.settings(),
        embedding_model=embedder.model,
        embedding_base_url=embedder.base_url,
        embedding_dimension=embedder.dimension,
        llm_model=llm.model,
        llm_base_url=llm.base_url,
    )
    return PipelineServices(
        glyphoxa_db.database(),
        settings,
        embedder_factory=embedder.get,
        llm_factory=llm.get,
        corrector_llm_factory=llm.corrector,
    )
