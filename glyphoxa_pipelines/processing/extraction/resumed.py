"""A sentence a speaker broke off with a dash and picked up again after someone cut in.

At a table people talk over each other, and the transcript shows it: "But I play Vex'ahlia,
who is a half-elf ranger, and I have an amazing--" / "Ranger!" / "-- companion bear named
Trinket". A reader hears one sentence, its subject in the first turn and its object in the
second. The rule is the transcript's own convention: a turn whose last sentence ends on a dash,
and the same speaker's next turn, within `RESUME_TURNS` turns, opening on a dash. Only narration
and in-character words (not an NPC's quote) are joined, and only these two pieces; the rest of
each turn stays its own.

Only a sentence cut off inside a phrase is picked up: its last word, or the one before, is a
word English never ends a sentence on (an article, a possessive, a preposition, a conjunction:
"an amazing--", "please excuse my--", "pulls you aside as--"). After a phrase that could end
("As you guys begin to wander off--" / "-- Vax, you vanish") the speaker more often starts
afresh, and joining would hand the second clause the first one's "you guys".
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from glyphoxa_pipelines.memory.models import Entry
from glyphoxa_pipelines.processing.extraction.vocabulary import words

RESUME_TURNS = 4  # turns after a broken-off one in which its speaker may pick it up
_BROKEN_OFF = re.compile(r"\s*(?:--|—|–)\s*$")
_PICKED_UP = re.compile(r"^\s*(?:--|—|–)\s*")


# words a sentence cannot end on: the phrase they open is still to come
_OPEN = frozenset(words(
    "a an the my your his her its our their this that these those any some every each no "
    "of to in into on onto at with for from by about towards toward through over under "
    "and or but nor as because while if when where which who whose than"
))
_WORD = re.compile(r"[A-Za-z']+")


def broken_off(text: str) -> bool:
    """The text ends on a dash inside an open phrase ("I have an amazing--")."""
    if _BROKEN_OFF.search(text) is None:
        return False
    last = _WORD.findall(_BROKEN_OFF.sub("", text).lower())[-2:]
    return any(w in _OPEN for w in last)


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
    """"I have an amazing--" and "-- companion bear" as one sentence, one dash between: the
    parser reads across it, and a name after it still opens its clause ("As you guys begin
    to wander off -- Vax, you vanish": a vocative, not what they wander off)."""
    return f"{_BROKEN_OFF.sub('', first)} -- {_PICKED_UP.sub('', second)}".strip()
