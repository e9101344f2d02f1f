"""The embedding step sends each distinct text to the model once: a repeated turn, a turn that
is a whole chunk by itself, and a repeated chunk share one vector, and every row is stored."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from glyphoxa_pipelines.db.operations import Op, fetch_all
from glyphoxa_pipelines.memory import NewEntry, SemanticIndex, SessionStore
from glyphoxa_pipelines.pipeline.runner import run_session_chain
from glyphoxa_pipelines.pipeline.services import PipelineServices
from tests.support.hash_embedder import HashEmbedder


class CountingEmbedder(HashEmbedder):
    """The hashed-words model, recording every text it is asked for."""

    model_id = "test-count-16"
    max_tokens = 40

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.seen.extend(texts)
        return super().embed(texts)


def _rows(db: Any, query: str, params: Any) -> list[dict[str, Any]]:
    def op() -> Op:
        return (yield fetch_all(query, params))

    return db.run(op(), transaction=False)


def test_each_distinct_text_is_embedded_once_and_every_row_is_stored(
    db: Any, campaign_id: str, pipeline_services: PipelineServices
) -> None:
    store = SessionStore(db)
    session_id = store.start_session(campaign_id).id
    long_turn = " ".join(f"word{i}" for i in range(36))  # a chunk by itself (limit 40)
    said = [
        ("matt", "Okay."), ("laura", "Yes."), ("matt", "Okay."), ("matt", long_turn),
        ("laura", "Yes."), ("sam", "We open the door."), ("matt", "Okay."),
    ]
    for i, (speaker, text) in enumerate(said):
        store.write_entry(
            session_id, NewEntry(f"k{i}", text, speaker_id=speaker, speaker_name=speaker.upper())
        )
    counting = CountingEmbedder()
    services = PipelineServices(
        db,
        replace(pipeline_services.settings, embedding_model=CountingEmbedder.model_id),
        embedder_factory=lambda: counting,
    )
    outcome = run_session_chain(
        services, session_id, assets=["transcript_chunks", "chunk_embeddings"]
    )["chunk_embeddings"]

    chunks = SemanticIndex(db).get_chunks(session_id)
    turn_texts = [f"{s.upper()}: {t}" for s, t in said]
    assert f"MATT: {long_turn}" in {c.text for c in chunks}  # the turn is also a chunk
    assert len(counting.seen) == len(set(counting.seen))  # nothing went through twice
    assert set(counting.seen) == {c.text for c in chunks} | set(turn_texts)
    assert outcome.metadata["distinct_texts_embedded"] == len(counting.seen)
    assert outcome.metadata["embedded"] == len(chunks)
    assert outcome.metadata["turns_embedded"] == len(said)
    assert all(c.passed for c in outcome.checks), outcome.checks

    stored = _rows(
        db,
        """SELECT e.text, e.speaker_name, x.embedding FROM entry_embeddings x
           JOIN session_entries e ON e.id = x.entry_id
           WHERE x.session_id = %s AND x.model = %s""",
        (session_id, CountingEmbedder.model_id),
    )
    assert len(stored) == len(said)
    for row in stored:  # each row is its own text's vector, shared or not
        want = CountingEmbedder().embed([f"{row['speaker_name']}: {row['text']}"])[0]
        assert np.allclose(row["embedding"].to_numpy(), want, atol=1e-6)
