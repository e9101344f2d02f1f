"""Settings from the environment, read once per process.

Plain dataclass rather than pydantic-settings: a handful of variables, no nesting, and the
realtime service and the pipeline share it without another dependency.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2-int8-late1"


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError as exc:
        raise ValueError(f"{name}={raw!r} is not a number") from exc


@dataclass(frozen=True)
class Settings:
    """Where the data lives and which providers to use."""

    home: Path = field(default_factory=lambda: Path(".glyphoxa"))
    database_url: str | None = None
    # A hot standby for the realtime service's hot-context and tool reads (writes stay on
    # database_url); None: every read on the primary.
    read_database_url: str | None = None
    # Pre-fetch results shared through PostgreSQL so any worker or host serves the next hot
    # context alike. Off for one process: the shared pull is a round trip and a wait for
    # fetches in flight on every hot context (1.8 -> 20 ms p50 in bench/realtime.py --quick);
    # `serve --workers N` turns it on, and several hosts set GLYPHOXA_SHARED_PREFETCH=1.
    shared_prefetch: bool = False
    database_name: str = "glyphoxa"
    dagster_database_name: str = "dagster"
    embedding_model: str = DEFAULT_EMBEDDING_MODEL
    embedding_base_url: str | None = None
    embedding_dimension: int | None = None
    llm_base_url: str | None = None
    llm_model: str | None = None
    tts_base_url: str | None = None
    tts_model: str | None = None  # unset: recaps are text only
    tts_voice: str = "alloy"
    api_token: str | None = None
    review_threshold: float = 0.7

    @classmethod
    def from_env(cls) -> Settings:
        env = os.environ
        dim = env.get("GLYPHOXA_EMBEDDING_DIMENSION")
        return cls(
            home=Path(env.get("GLYPHOXA_HOME", ".glyphoxa")).expanduser().resolve(),
            database_url=env.get("GLYPHOXA_DATABASE_URL") or None,
            read_database_url=env.get("GLYPHOXA_READ_DATABASE_URL") or None,
            shared_prefetch=env.get("GLYPHOXA_SHARED_PREFETCH", "0") == "1",
            database_name=env.get("GLYPHOXA_DATABASE_NAME", "glyphoxa"),
            dagster_database_name=env.get("GLYPHOXA_DAGSTER_DATABASE_NAME", "dagster"),
            embedding_model=env.get("GLYPHOXA_EMBEDDING_MODEL", DEFAULT_EMBEDDING_MODEL),
            embedding_base_url=env.get("GLYPHOXA_EMBEDDING_BASE_URL") or None,
            embedding_dimension=int(dim) if dim else None,
            llm_base_url=env.get("GLYPHOXA_LLM_BASE_URL") or None,
            llm_model=env.get("GLYPHOXA_LLM_MODEL") or None,
            tts_base_url=env.get("GLYPHOXA_TTS_BASE_URL") or None,
            tts_model=env.get("GLYPHOXA_TTS_MODEL") or None,
            tts_voice=env.get("GLYPHOXA_TTS_VOICE") or "alloy",
            api_token=env.get("GLYPHOXA_API_TOKEN") or None,
            review_threshold=_env_float("GLYPHOXA_REVIEW_THRESHOLD", 0.7),
        )

    @property
    def pgdata(self) -> Path:
        return self.home / "pgdata"

    @property
    def spool_dir(self) -> Path:
        return self.home / "spool"
