"""Who speaks a quote in the DM's narration: the NPC whose "I" and "my" it is.

The DM voices NPCs in quotes ("Kima comes over and says, "..."") and an NPC's own words are
where their kin, friends and masters are said: "under the words of my dear, lifelong friend
Arcanist Allura". A reader takes the speaker from the narration that introduces the quote,
and so does this module:

- a quote right after a narrated sentence that ends on a verb of speech ("says,", "goes:",
  "replies") is the one NPC that sentence names;
- if it names nobody and says "he" or "she" ("She looks to you and says,"), it is the one
  NPC of the scene with that pronoun: among the NPCs the DM's narration named in the last
  few turns (`SCENE_TURNS`), those the session speaks of with that pronoun (`_genders`:
  "he"/"she" after the name in a sentence naming them alone, or in the turn's next
  sentence); exactly one, or nobody;
- a quote that names its own speaker ("My name is Magrim.", `self_naming`) is that NPC's;
- the next sentences of the same quote keep its speaker.

Tried and dropped: carrying the last speaker to a DM turn that opens with a quote, and "she"
as the NPC last named whatever its pronoun. On CRD3's C1E006 both gave Clarota twenty lines
that are Kima's: the two argue, and the DM names the one Kima glares at. Facts read through a
quote's speaker pay the `quote` coreference penalty (review).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence

from glyphoxa_pipelines.memory.models import Entity
from glyphoxa_pipelines.processing.extraction.name_spans import Sentence
from glyphoxa_pipelines.processing.extraction.self_naming import self_named

SCENE_TURNS = 30  # entries (any speaker) back the narration's NPCs count as the scene's
SPEAKER_TYPES = frozenset({"npc", "creature"})
_MIN_VOTES = 3  # pronoun uses before an NPC's pronoun counts as known
_SPEECH_CUE = re.compile(
    r"\b(?:says?|said|goes|went|replies|replied|asks?|asked|whispers?|whispered|shouts?|"
    r"shouted|yells?|yelled|continues?|continued|responds?|responded|answers?|answered|adds?|"
    r"added|speaks?|spoke|growls?|growled|mutters?|muttered|exclaims?|exclaimed)"
    r"(?:\s+\w+){0,3}\s*[,:\-]*\s*$",
    re.I,
)
_PRONOUN_SUBJECT = re.compile(r"\b(?:he|she)\b", re.I)
_HE = re.compile(r"\b(?:he|him|his|himself)\b", re.I)
_SHE = re.compile(r"\b(?:she|her|hers|herself)\b", re.I)


def _pronoun(text: str) -> str | None:
    """"he" or "she" when the text uses one and not the other."""
    he, she = bool(_HE.search(text)), bool(_SHE.search(text))
    return "he" if he and not she else "she" if she and not he else None


def _genders(sentences: Sequence[Sentence], spans: Sequence[Sequence[tuple[int, int, str]]],
             entities: dict[str, Entity]) -> dict[str, str]:
    """The pronoun the DM's narration uses for each NPC: a vote from each sentence naming
    that one person alone (its words after the name, and the turn's next sentence if it
    names nobody); a clear majority of at least `_MIN_VOTES`."""
    votes: dict[str, Counter[str]] = defaultdict(Counter)
    for i, (s, mentions) in enumerate(zip(sentences, spans, strict=True)):
        if s.quoted or s.entry.speaker_role != "dm":
            continue
        people = {eid for _, _, eid in mentions if entities[eid].type in ("npc", "player")}
        if len(people) != 1:
            continue
        eid = next(iter(people))
        if entities[eid].type not in SPEAKER_TYPES:
            continue
        texts = [s.text[max(b for _, b, _ in mentions):]]
        nxt = sentences[i + 1] if i + 1 < len(sentences) else None
        if nxt is not None and nxt.entry is s.entry and not nxt.quoted and not spans[i + 1]:
            texts.append(nxt.text)
        for text in texts:
            if (p := _pronoun(text)) is not None:
                votes[eid][p] += 1
    out = {}
    for eid, v in votes.items():
        top, n = v.most_common(1)[0]
        if n >= _MIN_VOTES and n >= 0.75 * sum(v.values()):
            out[eid] = top
    return out


def _introduced(s: Sentence, mentions: Sequence[tuple[int, int, str]],
                entities: dict[str, Entity], scene: set[str],
                genders: dict[str, str]) -> str | None:
    """The speaker a narrated sentence introduces, or None (no cue, or not one NPC)."""
    if s.quoted or s.entry.speaker_role != "dm" or not _SPEECH_CUE.search(s.text):
        return None
    named = {eid for _, _, eid in mentions if entities[eid].type in SPEAKER_TYPES}
    people = {eid for _, _, eid in mentions if entities[eid].type in ("npc", "player")}
    if len(named) == 1 and len(people) <= 1:
        return next(iter(named))
    if not people and (m := _PRONOUN_SUBJECT.search(s.text)):
        fitting = [eid for eid in scene if genders.get(eid) == m.group(0).lower()]
        return fitting[0] if len(fitting) == 1 else None
    return None


def quote_speakers(
    sentences: Sequence[Sentence],
    spans: Sequence[Sequence[tuple[int, int, str]]],
    entities: dict[str, Entity],
) -> list[str | None]:
    """Per sentence (parallel to `sentences` and their mentions), the NPC speaking it when
    it is a DM's quote the narration introduces, else None."""
    genders = _genders(sentences, spans, entities)
    out: list[str | None] = []
    previous: Sentence | None = None
    introduced: str | None = None  # who the sentence just before introduced
    turn_of: dict[int, int] = {}
    last_named: dict[str, int] = {}  # NPC -> the last turn the DM's narration named it
    for s, mentions, named in zip(sentences, spans, self_named(sentences, spans, entities),
                                  strict=True):
        turn = turn_of.setdefault(id(s.entry), len(turn_of))
        if s.entry.speaker_role == "dm" and not s.quoted:
            for _, _, eid in mentions:
                if entities[eid].type in SPEAKER_TYPES:
                    last_named[eid] = turn
        who: str | None = None
        if s.quoted and s.entry.speaker_role == "dm":
            if named is not None:
                who = named  # "My name is Magrim.": the quote says whose it is
            elif introduced is not None:
                who = introduced
            elif previous is not None and previous.quoted and previous.entry is s.entry:
                who = out[-1]  # the same quote goes on
        out.append(who)
        scene = {eid for eid, t in last_named.items() if turn - t <= SCENE_TURNS}
        introduced = _introduced(s, mentions, entities, scene, genders)
        previous = s
    return out
