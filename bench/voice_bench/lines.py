"""The lines the voice-loop bench speaks: the demo campaign's own (few: 16 name someone), or
the STT corpus's lines with names (`bench/build_stt_corpus.py`: CRD3 and demo lines, each with
its scene's names and a tune / held-out split by a hash of the line id, so the split never
looks at how a line decodes).

A CRD3 line names people the demo campaign does not know, so the bench adds the corpus's
names to the campaign as entities, and each line is spoken in its own scene (its scene's
names present): the hotword prompt then ranks that line's scene first, as a table's live
scene would.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SPLITS = ("tune", "heldout")


@dataclass(frozen=True)
class BenchLine:
    text: str
    rate: float  # piper's length_scale
    scene: tuple[str, ...] = ()  # names present when it is said (corpus lines)
    line_id: str = ""


def corpus_lines(corpus: Path, split: str, count: int, skip: int = 0) -> list[BenchLine]:
    """The corpus's lines in `split` that name someone (CRD3 and demo), in the corpus's own
    seeded order, `skip` left out first."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, not {split!r}")
    if not corpus.is_file():
        raise FileNotFoundError(f"no STT corpus at {corpus} (bench/build_stt_corpus.py)")
    rows = [json.loads(raw) for raw in corpus.read_text(encoding="utf-8").splitlines()
            if raw.strip()]
    chosen = [r for r in rows if r.get("source") != "locomo" and r.get("names")
              and r.get("split") == split][skip:skip + count]
    return [BenchLine(r["reference"], float(r["length_scale"]), tuple(r.get("scene") or ()),
                      r["id"]) for r in chosen]


def corpus_entities(lines: list[BenchLine], known: set[str]) -> list[dict[str, Any]]:
    """Campaign entities (type npc) for the names in the lines' scenes that the campaign does
    not already know (compared case-folded)."""
    folded = {k.lower() for k in known}
    out: list[dict[str, Any]] = []
    for line in lines:
        for name in line.scene:
            if name.lower() not in folded and re.search(r"\w", name):
                folded.add(name.lower())
                out.append({"name": name, "type": "npc"})
    return out
