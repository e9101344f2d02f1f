"""A quote that names its own speaker: "My name is Magrim.", "My name... Clarota."

The DM voices a creature for a while before it says who it is; its name comes in its own
words, and a reader takes two things from them: whose the quote is (its "I" and "my" are
that NPC's, as `quote_speaker` reads a speaker its narration introduces), and that the NPC
spoke with the character it answered. This module reads both:

- a DM quote whose words before an NPC's (or creature's) name are only "my name is", "my
  name's", "I am", "I'm", "call me" or "they call me" names its speaker; so does a bare name
  quoted right after a quote that ends on those words ("My name..." / "Clarota."). Not "I am
  Kima's friend" (the name must end the clause) and not a player's words (their "I" is
  their own character already);
- the NPC `spoke_with` the one character whose player spoke since the DM's last turn
  (`characters.repliers`, the `reply` reading of `addressee`), or the one whose player's
  turn right before asked a name ("What was your name, again?"); several characters, or none
  known, make no fact. It pays the reply reading's penalty, so it goes to the DM's review.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from glyphoxa_pipelines.memory.models import Entity, Entry
from glyphoxa_pipelines.processing.extraction.characters import Cast, player_entities, repliers
from glyphoxa_pipelines.processing.extraction.name_spans import Sentence
from glyphoxa_pipelines.processing.extraction.relations import Fact, base_confidence
from glyphoxa_pipelines.processing.extraction.resolution import name_key

SPEAKER_TYPES = frozenset({"npc", "creature"})
REPLY_PENALTY = 0.25  # as `svo.COREFERENCE_PENALTY["reply"]`: the table's last voice
_NAMING = r"(?:my\s+name(?:\s+is|['’]s)?|i\s+am|i['’]m|(?:they\s+)?call\s+me)"
_BEFORE_NAME = re.compile(r"^\W*" + _NAMING + r"[\s.,:;…\-]*$", re.I)
_ENDS_NAMING = re.compile(r"\b" + _NAMING + r"\s*(?:\.{2,}|…|-{1,2})\s*$", re.I)
_AFTER_NAME = re.compile(r"^\s*(?:[.!?,;…]|-{1,2}|$)")


def _named_first(s: Sentence, mentions: Sequence[tuple[int, int, str]],
                 entities: dict[str, Entity], before: re.Pattern[str]) -> str | None:
    """The NPC whose name is the sentence's first mention, said after words `before` takes
    and ending its clause."""
    if not mentions:
        return None
    a, b, eid = mentions[0]
    if entities[eid].type not in SPEAKER_TYPES:
        return None
    if before.match(s.text[:a]) and _AFTER_NAME.match(s.text[b:]):
        return eid
    return None


_NOTHING = re.compile(r"^\W*$")


def self_named(
    sentences: Sequence[Sentence],
    spans: Sequence[Sequence[tuple[int, int, str]]],
    entities: dict[str, Entity],
) -> list[str | None]:
    """Per sentence (parallel to `sentences` and their mentions), the NPC a DM quote names
    as its own speaker, else None."""
    out: list[str | None] = []
    previous: Sentence | None = None
    for s, mentions in zip(sentences, spans, strict=True):
        who = None
        if s.quoted and s.entry.speaker_role == "dm":
            who = _named_first(s, mentions, entities, _BEFORE_NAME)
            if who is None and previous is not None and previous.entry is s.entry and (
                    previous.quoted and _ENDS_NAMING.search(previous.text)):
                who = _named_first(s, mentions, entities, _NOTHING)
        out.append(who)
        previous = s
    return out


_ASKS_NAME = re.compile(r"\bname\b[^.!?]*\?")


def _nearest_player_turn(entries: Sequence[Entry], index: int) -> str:
    """The text of the player turn right before the DM's turn `index` ("" if none)."""
    for j in range(index - 1, -1, -1):
        if entries[j].speaker_role == "dm":
            return ""
        if entries[j].speaker_role == "player":
            return entries[j].text
    return ""


def introduction_facts(
    entries: Sequence[Entry],
    sentences: Sequence[Sentence],
    spans: Sequence[Sequence[tuple[int, int, str]]],
    cast: Cast,
    entities: dict[str, Entity],
) -> list[Fact]:
    """`spoke_with` from each NPC that names itself to the one character it answers."""
    characters = player_entities(entities)
    index_of = {id(e): i for i, e in enumerate(entries)}
    out: list[Fact] = []
    named = self_named(sentences, spans, entities)
    for i, (s, who) in enumerate(zip(sentences, named, strict=True)):
        if who is None or entities[who].type != "npc":
            continue  # `spoke_with` is between people (`svo.SVO_TYPES`)
        spoke = repliers(entries, index_of[id(s.entry)], cast)
        if spoke and _ASKS_NAME.search(_nearest_player_turn(entries, index_of[id(s.entry)])):
            spoke = spoke[:1]  # "What was your name, again?": the one who asked is answered
        answered = {characters.get(name_key(c or "")) for c in spoke}
        if len(answered) != 1 or None in answered:
            continue
        (them,) = answered
        before = sentences[i - 1] if i else None
        evidence = (f"{before.text} {s.text}" if before is not None and before.entry is s.entry
                    and before.quoted and _ENDS_NAMING.search(before.text) else s.text)
        out.append(Fact(who, them, "spoke_with", round(base_confidence(s) - REPLY_PENALTY, 3),
                        "stated", evidence, s.entry,
                        {"method": "self_naming", "coreference": "reply"}))
    return out
