"""Whom the DM's "you" means, sentence by sentence, and how sure that reading is.

Most of what happens in real play is told by the DM in the second person: "You use that to
give constitutional strength to ... Grog", "Grog, you reach over and grab the chain". A
reader resolves that "you" in three ways, and so does this module:

- **vocative**: the DM names a character at the table ("Grog, you ...", "..., Percy.",
  "Vex, you pick up ..."). The name holds for the rest of the turn, until another name or a
  plural cue. This is the only reading explicit enough for a fact to go straight to canon.
- **party**: the DM narrates to everyone ("you guys", "you all", "both of you", "the two of
  you"); "you" is then the campaign's party, an entity the DM marks with
  `attributes.party = true` (no such entity: the sentence's "you" is nobody, never the last
  speaker). Two characters named together ("Tiberius, Vax, you guys walk ...") are a group,
  not one of them.
- **reply**: otherwise, in a turn shorter than `NARRATION_WORDS`, "you" is the character of
  the one player who spoke since the DM's last turn (`characters.repliers`). When several
  players' characters spoke, the DM answers the table: "you" is the party. Voices with no
  known character (crosstalk, a guest) are not counted; with none left, "you" is nobody.
  A longer turn
  with no name called out is narration to the table (the session's opening recap, a scene
  set for everyone), read as the party; unless the turn right before it is one player
  declaring their own action ("I draw back the blade ... and I lop it off"): the long turn
  narrates that deed's outcome, and "you" is that player's character. At a table of seven,
  the last speaker is often not the one addressed (players talk over each other), so facts
  read this way go to the DM's review queue whatever the turn's length. A DM turn after one
  that spoke to the party, with only players' short reactions between ("you guys managed to
  survive." "Barely." "... where you had met Clarota"), still speaks to the party.

Player turns are not read here: a player's "you" is another player, unnamed; their "I" is
their own character (the `speaker` reading in `svo`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from glyphoxa_pipelines.memory.models import Entity, Entry
from glyphoxa_pipelines.processing.extraction.characters import (
    Cast,
    declared_by,
    player_entities,
    previous_dm_turn,
    repliers,
)
from glyphoxa_pipelines.processing.extraction.name_spans import Sentence

YouReading = Literal["vocative", "party", "reply"]
NARRATION_WORDS = 120  # a DM turn this long, with nobody called by name, speaks to everyone

_PLURAL_YOU = re.compile(
    r"\byou\s+(?:guys|all|both|two|three|four|folks|lot|people)\b|\b(?:all|both|each|either)"
    r"\s+of\s+you\b|\bthe\s+(?:two|three|four|five|six|seven|rest)\s+of\s+you\b|\by'?all\b|"
    r"\beveryone\b|\beverybody\b",
    re.I,
)
_YOU = re.compile(r"\byou(?:r|rs|rself)?\b", re.I)
# a name called out: "Grog, you ...", "Grog you're up", "Vex [sic] you look", "..., Percy."
_AFTER_VOCATIVE = re.compile(r"^\s*(?:\[[^\]]*\]\s*)?(?:,\s*|\s+)(?:you|your|you're|you've)\b",
                             re.I)
_AFTER_END_VOCATIVE = re.compile(r"^\s*(?:[.?!]+|,\s*(?:to|you)\b|-+)", re.I)
_BEFORE_VOCATIVE = re.compile(r"(?:,|^)\s*$")
# a name opens its clause ("Grog, you ...", "..., Vex, you pick up"), not "you see Keyleth, you"
_CLAUSE_START = re.compile(r"(?:^|[,;:.!?\-]|\b(?:so|and|okay|now|then|all right))\s*$", re.I)
# "You also note specifically, Vex, that ...": set off by commas inside a clause to "you"
_INSIDE_VOCATIVE = re.compile(r"^\s*,\s*(?!and\b|or\b|[A-Z])")


@dataclass(frozen=True, slots=True)
class You:
    """The entity a DM sentence's "you" stands for, and how it was read (None: nobody)."""

    entity: str | None = None
    reading: YouReading | None = None


def _vocatives(s: Sentence, spans: Sequence[tuple[int, int, str]],
               players: set[str]) -> list[str]:
    """The player characters this sentence calls out by name, in order."""
    out = []
    for a, b, eid in spans:
        if eid not in players:
            continue
        before, after = s.text[:a], s.text[b:]
        clause = re.split(r"[,;:.!?]", before.rstrip(" ,"))[-1]
        if (_CLAUSE_START.search(before) and _AFTER_VOCATIVE.match(after)) or (
            _BEFORE_VOCATIVE.search(before) and _AFTER_END_VOCATIVE.match(after)
        ) or (
            before.rstrip().endswith(",") and _YOU.search(clause)
            and _INSIDE_VOCATIVE.match(after)
        ):
            out.append(eid)
    return out


def _to_party(entry: Entry, reading: You | None) -> bool:
    """The DM's turn spoke to the party: its last "you" was read so, or, for a turn the story
    sentences leave out (a fight's summary the classifier takes for rules talk), its words
    say "you guys"."""
    if reading is not None:
        return reading.reading == "party"
    return _PLURAL_YOU.search(entry.text) is not None


def party_entity(entities: dict[str, Entity]) -> str | None:
    """The campaign's party: the one entity the DM marked `party` (none or several: None)."""
    marked = [e.id for e in entities.values() if e.attributes.get("party") is True]
    return marked[0] if len(marked) == 1 else None


def dm_addressees(
    entries: Sequence[Entry],
    sentences: Sequence[Sentence],
    spans: Sequence[Sequence[tuple[int, int, str]]],
    cast: Cast,
    entities: dict[str, Entity],
) -> list[You]:
    """Per sentence (parallel to `sentences` and their mentions `spans`), whom "you" means.

    Only the DM's own narration gets a reading; quoted speech (an NPC's "you") and player
    turns get `You()`. The party is read first (a plural cue wins over a name called out in
    the same sentence: "Tiberius, Vax, you guys ..."), then a vocative (which then holds for
    the rest of the turn), then the turn's reply addressee."""
    players = {e.id for e in entities.values() if e.type == "player"}
    by_key = player_entities(entities)
    party = party_entity(entities)
    index_of = {id(e): i for i, e in enumerate(entries)}
    reply_of: dict[int, You] = {}
    addressed: dict[int, You] = {}  # per DM turn, its last sentence's "you" reading
    out: list[You] = []
    entry: Entry | None = None
    called: str | None = None  # the character the turn's last vocative named
    for s, mentions in zip(sentences, spans, strict=True):
        if s.entry is not entry:
            entry, called = s.entry, None
        if s.entry.speaker_role != "dm" or s.quoted:
            out.append(You())
            continue
        named = _vocatives(s, mentions, players)
        if _PLURAL_YOU.search(s.text) or len(set(named)) > 1:
            out.append(You(party, "party") if party else You())
            addressed[index_of[id(s.entry)]] = out[-1]
            called = None if len(set(named)) > 1 else called
            continue
        if named:
            called = named[0]
        if called is not None:
            out.append(You(called, "vocative"))
            addressed[index_of[id(s.entry)]] = out[-1]
            continue
        if not _YOU.search(s.text):
            out.append(You())
            continue
        i = index_of[id(s.entry)]
        if i not in reply_of:
            before = previous_dm_turn(entries, i)
            if before is not None and _to_party(entries[before], addressed.get(before)):
                # only a reaction between ("Barely."): still the party's story
                reply_of[i] = You(party, "party") if party else You()
            elif len(s.entry.text.split()) < NARRATION_WORDS:
                reply_of[i] = _reply(repliers(entries, i, cast), by_key, party)
            elif who := by_key.get(declared_by(entries, i, cast) or ""):
                reply_of[i] = You(who, "reply")  # a long outcome of one player's declared deed
            else:
                reply_of[i] = You(party, "party") if party else You()
        out.append(reply_of[i])
        addressed[i] = reply_of[i]
    return out


def _reply(spoke: Sequence[str | None], by_key: dict[str, str], party: str | None) -> You:
    """The reading of a short DM turn's "you" from who spoke before it: one character is
    that character; several characters are the party; unknown voices are not counted."""
    who = {by_key[c] for c in spoke if c and c in by_key}
    if len(who) > 1:
        return You(party, "party") if party else You()
    one = next(iter(who), None)
    return You(one, "reply") if one else You()
