"""The chain with an LLM configured: correction stage 2, structured extraction, abstractive
summary and recap, all through the real `openai` client against a local HTTP stub."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from glyphoxa_pipelines.memory import RecapStore, SummaryStore
from glyphoxa_pipelines.memory.pipeline_rows.knowledge_rows import session_facts_op
from glyphoxa_pipelines.pipeline.runner import run_session_chain
from glyphoxa_pipelines.pipeline.services import PipelineServices
from glyphoxa_pipelines.processing.summaries import LLM_SUMMARIZER_VERSION


def _answer(body: dict[str, Any]) -> str:
    system = body["messages"][0]["content"]
    if "knowledge graph" in system:
        return json.dumps(
            {
                "entities": [
                    {"name": "Grimjaw", "type": "npc", "aliases": []},
                    {"name": "Ironhold", "type": "location", "aliases": []},
                ],
                "relationships": [
                    {
                        "source": "Grimjaw",
                        "type": "lives_in",
                        "target": "Ironhold",
                        "evidence": "Grimjaw lives in Ironhold, above the Rusty Anvil.",
                        "confidence": 0.9,
                        "assertion": "stated",
                    }
                ],
            }
        )
    if "summarize" in system:
        return json.dumps(
            {
                "summary": "The party reached Ironhold and learned who rules the city.",
                "key_points": ["Vexmira leads the Silver Hand.", "Grimjaw lives in Ironhold."],
            }
        )
    if "Previously" in system:
        return json.dumps({"recap": "Previously: the party reached Ironhold at dusk."})
    return "{}"  # correction stage 2: nothing to change


def test_chain_uses_the_configured_llm(
    db: Any, facts_session: tuple[str, str], pipeline_services: PipelineServices, openai_stub: Any
) -> None:
    campaign_id, session_id = facts_session
    openai_stub.chat = _answer
    settings = replace(
        pipeline_services.settings, llm_model="stub-model", llm_base_url=openai_stub.base_url
    )
    services = PipelineServices(db, settings, embedder_factory=lambda: pipeline_services.embedder)
    results = run_session_chain(services, session_id)
    assert all(c.passed for o in results.values() for c in o.checks)
    assert results["corrected_transcript"].metadata["corrector_version"].endswith("+llm")
    assert results["extracted_knowledge"].metadata["method"] == "llm"
    facts = [
        (f.source_id, f.rel_type, f.target_id, f.extractor_version)
        for f in db.run(session_facts_op(session_id))
    ]
    assert ("grimjaw", "lives_in", "ironhold", "llm-v2") in facts
    assert SummaryStore(db).get(session_id).method == LLM_SUMMARIZER_VERSION
    assert RecapStore(db).get(session_id).text.startswith("Previously")
    paths = {path for path, _ in openai_stub.requests}
    assert paths == {"/v1/chat/completions"}
