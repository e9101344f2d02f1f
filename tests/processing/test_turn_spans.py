"""Late chunking's map of turns to chunk lines: every short turn is found, in the first chunk
holding it whole, at its own position; split and since-corrected turns are not."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from glyphoxa_pipelines.memory.models import Entry
from glyphoxa_pipelines.processing.chunking import chunk_transcript, turn_line
from glyphoxa_pipelines.processing.turn_spans import turn_spans

START = datetime(2026, 3, 1, 19, 0, tzinfo=UTC)


def words(text: str) -> int:
    """A word-piece counter for the chunker: one piece a word, plus [CLS] and [SEP]."""
    return len(text.split()) + 2


def entries(turns: list[tuple[str, str]]) -> list[Entry]:
    return [
        Entry(
            id=100 + n, campaign_id="c1", session_id="s1", idempotency_key=f"k{n}",
            speaker_id=speaker.lower(), speaker_name=speaker, speaker_role="player",
            raw_text=text, text=text, npc_id=None,
            spoken_at=START + timedelta(seconds=3 * n), duration_s=2.0,
        )
        for n, (speaker, text) in enumerate(turns)
    ]


def test_each_short_turn_is_found_whole_in_the_first_chunk_that_holds_it() -> None:
    said = entries(
        [("MATT", f"line {i} of the tale about the  ruined keep") for i in range(12)]
        + [("SAM", "Yeah."), ("LAURA", "Yeah."), ("SAM", "Yeah.")]
    )
    chunks = chunk_transcript(said, count_tokens=words, max_tokens=40, target_tokens=30)
    assert len(chunks) > 2  # several windows, overlapping by a turn
    spans = turn_spans(list(reversed(said)), chunks)  # any order in
    assert set(spans) == {e.id for e in said}
    by_id = {c.id: c for c in chunks}
    seq = {c.id: c.seq for c in chunks}
    for entry in said:
        span = spans[entry.id]
        chunk = by_id[span.chunk_id]
        assert chunk.text[span.start : span.end] == turn_line(entry)  # whitespace folded
        holding = [c.seq for c in chunks if turn_line(entry) in c.text.split("\n")
                   and c.first_entry_id <= entry.id <= c.last_entry_id]
        assert seq[span.chunk_id] == min(holding)
    # "SAM: Yeah." twice in one window: each entry its own line, not the first one's
    first, last = said[-3], said[-1]
    assert spans[first.id].chunk_id == spans[last.id].chunk_id
    assert spans[first.id].start < spans[last.id].start


def test_a_split_turn_and_a_turn_corrected_since_the_chunking_have_no_span() -> None:
    long_text = " ".join(f"w{i}" for i in range(70))  # over a 40-piece chunk: split
    said = entries([("MATT", "We begin."), ("MATT", long_text), ("SAM", "I roll."),
                    ("LAURA", "Nat twenty!")])
    chunks = chunk_transcript(said, count_tokens=words, max_tokens=40, target_tokens=30)
    spans = turn_spans(said, chunks)
    assert said[1].id not in spans  # in pieces only
    assert {said[0].id, said[2].id, said[3].id} <= set(spans)
    corrected = [*said[:3], replace(said[3], text="Natural twenty!")]
    assert said[3].id not in turn_spans(corrected, chunks)  # its line is no longer there
