"""Where each turn sits whole inside a chunk's text: the spans late chunking reads turn
vectors from.

Why: the embedding step embeds every chunk, and every short turn is a line of some chunk. A
turn's vector can then be the chunk pass's token states averaged over that line, instead of a
pass of its own (`embeddings.LATE_MODEL_ID`). A turn is placed in the FIRST chunk (by `seq`)
whose text holds its line whole; the window overlap puts a turn in two chunks, and a fixed rule
makes a re-run give the same vector. A turn the chunker split (longer than a chunk) is in no
chunk whole and is embedded on its own; so is one whose chunk was cut from older text (a
correction since), because its line is no longer there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from glyphoxa_pipelines.memory.models import Chunk, Entry
from glyphoxa_pipelines.processing.chunking import turn_line


@dataclass(frozen=True, slots=True)
class TurnSpan:
    """Entry `entry_id`'s line is `chunk_id`'s text[start:end]."""

    entry_id: int
    chunk_id: str
    start: int
    end: int


def turn_spans(entries: Sequence[Entry], chunks: Sequence[Chunk]) -> dict[int, TurnSpan]:
    """Entry id -> the span of its line in the first chunk holding it whole.

    `entries` are the session's entries (any order: they are put in the chunker's spoken
    order), `chunks` its chunks. Within a chunk, entries are matched to lines in order, so a
    line said twice in one window ("MARISHA: Yeah.") is each entry's own; lines no entry
    matches are the pieces of a split turn."""
    ordered = sorted(entries, key=lambda e: (e.spoken_at, e.id))
    position = {e.id: i for i, e in enumerate(ordered)}
    out: dict[int, TurnSpan] = {}
    for chunk in sorted(chunks, key=lambda c: c.seq):
        first = position.get(chunk.first_entry_id) if chunk.first_entry_id is not None else None
        last = position.get(chunk.last_entry_id) if chunk.last_entry_id is not None else None
        if first is None or last is None or last < first:
            continue  # the chunk's turns are gone (stale chunk set): nothing to read there
        lines = chunk.text.split("\n")
        starts = [0] * len(lines)
        for k in range(1, len(lines)):
            starts[k] = starts[k - 1] + len(lines[k - 1]) + 1
        cursor = 0
        for entry in ordered[first : last + 1]:
            line = turn_line(entry)
            if not line:
                continue
            try:
                k = lines.index(line, cursor)
            except ValueError:
                continue  # split into pieces, or its text changed since the chunking
            cursor = k + 1
            if entry.id not in out:
                out[entry.id] = TurnSpan(entry.id, chunk.id, starts[k], starts[k] + len(line))
    return out
