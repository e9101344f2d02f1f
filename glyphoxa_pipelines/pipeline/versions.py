"""The version of each asset's logic, as Dagster `code_version`s and for staleness queries.

Why one place: a row made by another version than the current one is stale, and `glyphoxa
status` and the Dagster UI must agree on what "current" means. The embedding model id is part
of the embedding asset's version, the corrector's of the correction asset's, the speech model
and voice of the recap asset's.
"""

from __future__ import annotations

from glyphoxa_pipelines.config import Settings

STEP_LOGIC = "1"  # bump when the step glue (not the transforms) changes what is written
# What the embedding step writes besides chunk vectors: "turns" = one vector per session
# entry too (entry_embeddings). Part of that asset's code version, so sessions embedded
# before are shown stale and a backfill embeds their turns.
EMBEDDING_PRODUCTS = "turns"


def corrector_version(with_llm: bool = False) -> str:
    from glyphoxa_pipelines.correction import CORRECTOR_VERSION

    return f"{CORRECTOR_VERSION}+llm" if with_llm else CORRECTOR_VERSION


def _chunker_version() -> str:
    from glyphoxa_pipelines.processing.chunking import CHUNKER_VERSION as version

    return version


CHUNKER_VERSION = _chunker_version()


def extractor_versions() -> tuple[str, str]:
    """(offline, LLM) extractor versions: rows of either are current."""
    from glyphoxa_pipelines.processing.extraction import EXTRACTOR_VERSION, LLM_EXTRACTOR_VERSION

    return EXTRACTOR_VERSION, LLM_EXTRACTOR_VERSION


def summarizer_version(with_llm: bool = False) -> str:
    from glyphoxa_pipelines.processing.summaries import (
        LLM_SUMMARIZER_VERSION,
        SUMMARIZER_VERSION,
    )

    return LLM_SUMMARIZER_VERSION if with_llm else SUMMARIZER_VERSION


def recap_version(with_llm: bool = False) -> str:
    try:
        from glyphoxa_pipelines.processing import recaps
    except ImportError:
        return "recap-unavailable"
    return str(getattr(recaps, "LLM_RECAP_VERSION" if with_llm else "RECAP_VERSION", "recap"))


def code_versions(settings: Settings) -> dict[str, str]:
    """Dagster code_version per asset for the configured providers."""
    llm = bool(settings.llm_model)
    offline, with_llm = extractor_versions()
    # A new speech model or voice re-speaks the recaps: part of the recap asset's version.
    spoken = f"+tts:{settings.tts_model}:{settings.tts_voice}" if settings.tts_model else ""
    return {
        "raw_transcript": f"observe-{STEP_LOGIC}",
        "corrected_transcript": f"{corrector_version(llm)}/{STEP_LOGIC}",
        "transcript_chunks": f"{CHUNKER_VERSION}/{STEP_LOGIC}",
        "chunk_embeddings": f"{settings.embedding_model}+{EMBEDDING_PRODUCTS}/{STEP_LOGIC}",
        "extracted_knowledge": f"{with_llm if llm else offline}/{STEP_LOGIC}",
        "session_summary": f"{summarizer_version(llm)}/{STEP_LOGIC}",
        "session_recap": f"{recap_version(llm)}{spoken}/{STEP_LOGIC}",
        "campaign_name_list": f"keywords/{STEP_LOGIC}",
        "campaign_consolidation": f"consolidate/{STEP_LOGIC}",
    }
