"""Transcript correction: fix misheard fantasy names, never corrupt what was said right.

Stage 1 (`find_corrections`) is phonetic matching against a prepared `NameIndex`, fast enough
for the live path; stage 2 (`LLMCorrector`) asks an OpenAI-compatible model about the spans
stage 1 left uncertain and trusts only declared, phonetically plausible changes. `correct` runs
both; `keyword_list` gives the names as an STT keyword-boost list.
"""

from glyphoxa_pipelines.correction.llm_corrector import LLMCorrector, llm_corrections
from glyphoxa_pipelines.correction.models import Correction, CorrectionConfig, CorrectionResult
from glyphoxa_pipelines.correction.name_index import (
    NameForm,
    NameIndex,
    build_index,
    keyword_list,
    normalize,
    parse_entity_lines,
    phonetic_codes,
)
from glyphoxa_pipelines.correction.phonetic import find_corrections, tokenize
from glyphoxa_pipelines.correction.pipeline import Corrector, apply_corrections, correct

CORRECTOR_VERSION = "phonetic-1"

__all__ = [
    "CORRECTOR_VERSION",
    "Correction",
    "CorrectionConfig",
    "CorrectionResult",
    "Corrector",
    "LLMCorrector",
    "NameForm",
    "NameIndex",
    "apply_corrections",
    "build_index",
    "correct",
    "find_corrections",
    "keyword_list",
    "llm_corrections",
    "normalize",
    "parse_entity_lines",
    "phonetic_codes",
    "tokenize",
]
