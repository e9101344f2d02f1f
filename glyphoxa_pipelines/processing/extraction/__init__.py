"""Knowledge extraction: entities and facts (L3) from a session's corrected transcript.

Offline by default (`patterns`): a gazetteer of the campaign's known entities plus recurring
proper-name spans found in the transcript, typed by cue words, and relationships from
high-precision surface patterns between two mentions. With an LLM configured,
`extract_knowledge_llm` (`llm`) asks for the same structure as JSON. Both run every name
through the same resolver (`resolution`) and produce an `ExtractionResult`; `contradictions`
says which current facts the new ones overrule.
"""

from glyphoxa_pipelines.processing.extraction.contradictions import Contradiction, contradictions
from glyphoxa_pipelines.processing.extraction.llm import extract_knowledge_llm
from glyphoxa_pipelines.processing.extraction.patterns import extract_knowledge
from glyphoxa_pipelines.processing.extraction.resolution import (
    EntityResolver,
    Resolution,
    split_descriptor,
)
from glyphoxa_pipelines.processing.extraction.results import (
    EXTRACTOR_VERSION,
    LLM_EXTRACTOR_VERSION,
    ExtractionResult,
)

__all__ = [
    "EXTRACTOR_VERSION",
    "LLM_EXTRACTOR_VERSION",
    "Contradiction",
    "EntityResolver",
    "ExtractionResult",
    "Resolution",
    "contradictions",
    "extract_knowledge",
    "extract_knowledge_llm",
    "split_descriptor",
]
