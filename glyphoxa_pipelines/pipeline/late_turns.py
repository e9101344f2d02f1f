"""The embedding step's chunk pass when the model reads turn vectors off it (late chunking,
`embeddings.LATE_MODEL_ID`): one pass per chunk gives the chunk's vector and the vectors of the
turns whose lines it holds whole (`processing/turn_spans.py`).

Which chunks run: those missing a vector, and those holding a turn that is missing one (a turn
re-embedded alone would be another kind of vector under the same id). A chunk text said twice
(a replayed intro) runs once. Turns in no chunk whole are left to the caller's own pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from glyphoxa_pipelines.memory import SemanticIndex
from glyphoxa_pipelines.memory.models import Chunk, Entry, TurnText
from glyphoxa_pipelines.processing.turn_spans import turn_spans


@dataclass(slots=True)
class LatePass:
    """What the chunk pass wrote, and the turns it left to be embedded on their own."""

    chunks_written: int = 0
    turns_written: int = 0
    texts_run: int = 0  # distinct chunk texts through the model
    alone: list[TurnText] = field(default_factory=list)


def embed_chunks_and_their_turns(
    index: SemanticIndex,
    embedder: Any,
    model: str,
    *,
    chunks: Sequence[Chunk],
    entries: Sequence[Entry],
    missing_chunks: Sequence[Chunk],
    missing_turns: Sequence[TurnText],
    batch: int,
    progress: Callable[[int], None] | None = None,
) -> LatePass:
    """Run the chunk pass over `batch` chunks at a time and write each batch's chunk and turn
    rows as they come. `embedder.embed_with_spans` gives the vectors; `chunks` and `entries`
    are the session's all (a turn's span is looked for in every chunk, not only the missing
    ones); `progress(rows)` is told how many rows each batch wrote."""
    spans = turn_spans(entries, chunks)
    wanted = {c.id for c in missing_chunks}
    by_chunk: dict[str, list[TurnText]] = {}
    out = LatePass()
    for turn in missing_turns:
        span = spans.get(turn.entry_id)
        if span is None:
            out.alone.append(turn)
        else:
            by_chunk.setdefault(span.chunk_id, []).append(turn)
    to_run = [c for c in chunks if c.id in wanted or c.id in by_chunk]
    for start in range(0, len(to_run), batch):
        part = to_run[start : start + batch]
        # distinct texts, each with the spans of every turn read from it
        texts: dict[str, list[tuple[int, int]]] = {}
        for c in part:
            spans_here = texts.setdefault(c.text, [])
            for turn in by_chunk.get(c.id, []):
                span = spans[turn.entry_id]
                if (span.start, span.end) not in spans_here:
                    spans_here.append((span.start, span.end))
        order = list(texts)
        vectors, span_vectors = embedder.embed_with_spans(order, [texts[t] for t in order])
        out.texts_run += len(order)
        row = {t: i for i, t in enumerate(order)}
        chunk_rows = [(c.id, vectors[row[c.text]]) for c in part if c.id in wanted]
        turn_rows: list[tuple[int, Any]] = []
        turn_texts: list[str] = []
        for c in part:
            i = row[c.text]
            for turn in by_chunk.get(c.id, []):
                span = spans[turn.entry_id]
                vec = span_vectors[i][texts[c.text].index((span.start, span.end))]
                if vec is None:  # cut by the model's truncation: embedded alone
                    out.alone.append(turn)
                    continue
                turn_rows.append((turn.entry_id, vec))
                turn_texts.append(turn.text)
        index.add_embeddings(model, chunk_rows)
        index.add_entry_embeddings(model, turn_rows, texts=turn_texts)
        out.chunks_written += len(chunk_rows)
        out.turns_written += len(turn_rows)
        if progress:
            progress(len(chunk_rows) + len(turn_rows))
    return out
