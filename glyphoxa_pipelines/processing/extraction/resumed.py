"""A sentence a speaker broke off with a dash and picked up again after someone cut in.

At a table people talk over each other, and the transcript shows it: "But I play Vex'ahlia,
who is a half-elf ranger, and I have an amazing--" / "Ranger!" / "-- companion bear named
Trinket". A reader hears one sentence, its subject in the first turn and its object in the
second. The rule is the transcript's own convention: a turn whose last sentence ends on a dash,
and the same speaker's next turn, within `RESUME_TURNS` turns and before anyone else's second
turn, opening on a dash. Only narration and in-character words (not an NPC's quote) are
joined, and only these two pieces; the rest of each turn stays its own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from glyphoxa_pipelines.memory.models import Entry

RESUME_TURNS = 4  # turns after a broken-off one in which its speaker may pick it up
_BROKEN_OFF = re.compile(r"\s*(?:--|—|–)\s*$")
_PICKED_UP = re.compile(r"^\s*(?:--|—|–)\s*")


def broken_off(text: str) -> bool:
    return _BROKEN_OFF.search(text) is not None


def picked_up(text: str) -> bool:
    return _PICKED_UP.match(text) is not None


def resumed_turns(entries: Sequence[Entry]) -> dict[int, int]:
    """Index of a turn that ends mid-sentence -> index of its speaker's next turn, when that
    turn opens by picking the sentence up. The speaker's next turn must come within
    `RESUME_TURNS` turns; if it does not open on a dash, the sentence was abandoned."""
    out: dict[int, int] = {}
    for i, entry in enumerate(entries):
        if not broken_off(entry.text):
            continue
        for j in range(i + 1, min(i + 1 + RESUME_TURNS, len(entries))):
            if entries[j].speaker_name == entry.speaker_name:
                if picked_up(entries[j].text):
                    out[i] = j
                break
    return out


def joined(first: str, second: str) -> str:
    """"I have an amazing--" and "-- companion bear" as one sentence, the dashes gone."""
    return f"{_BROKEN_OFF.sub('', first)} {_PICKED_UP.sub('', second)}".strip()
