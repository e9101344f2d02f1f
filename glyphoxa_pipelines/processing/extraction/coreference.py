"""Who "he" and "she" are in narration: the one person the story is following.

Real play names two entities in one sentence rarely (16 of 2,654 in-game sentences of CRD3's
C1E003); the rest of a fact is carried by pronouns: "Pike grew up near the Bramblewood. ...
She prayed and healed this barbarian." A full coreference model is more than the offline
extractor may load, so the rule is the narrow one a reader uses first: inside one narrated
turn (the DM's, or a player's recorded monologue), a third-person pronoun stands for the
person last named alone. A sentence naming two or more people makes "he" ambiguous, and the
antecedent is dropped until one person is named alone again; a new turn starts with none.
A "she" does not go to a person the words call "father" or "Lord" (`_kin_genders`): it goes
back to the last one named alone whose gender does not clash. Quoted speech is skipped (an
NPC's "he" is the speaker's world, not the narration's). Facts
read through it carry the coreference penalty, so at the default threshold they are queued
for the DM's review.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from glyphoxa_pipelines.memory.models import Entity
from glyphoxa_pipelines.processing.extraction.candidates import narrated
from glyphoxa_pipelines.processing.extraction.name_spans import Sentence
from glyphoxa_pipelines.processing.extraction.story import recap_turn
from glyphoxa_pipelines.processing.extraction.vocabulary import words

PERSON_TYPES = frozenset({"npc", "player"})


_MALE = frozenset(words("father dad uncle brother son king lord sir husband grandfather nephew "
                        "prince duke baron"))
_FEMALE = frozenset(words("mother mom aunt sister daughter queen lady dame wife grandmother niece "
                          "princess duchess baroness"))
# "her father, Kohren", "his uncle Kevdak", "Lady Kima": the word just before a name
_WORD_BEFORE = re.compile(r"([A-Za-z]+)\s*,?\s*$")
_HE = re.compile(r"\b(?:he|him|his|himself)\b", re.I)
_SHE = re.compile(r"\b(?:she|her|hers|herself)\b", re.I)


def _sentence_pronoun(text: str) -> str | None:
    """"he" or "she" when the sentence uses one and not the other."""
    he, she = bool(_HE.search(text)), bool(_SHE.search(text))
    return "he" if he and not she else "she" if she and not he else None


def _kin_genders(
    sentences: Sequence[Sentence],
    spans: Sequence[Sequence[tuple[int, int, str]]],
    entities: dict[str, Entity],
) -> dict[str, str]:
    """The gender the session's words give a person: a kin noun or title right before the
    name ("her father, Kohren"), or one in the name itself ("Lady Kima"). Only these cues:
    the pronouns around a name are what is being resolved, so they cannot vote."""
    votes: dict[str, set[str]] = {}
    for eid, e in entities.items():
        first = e.name.split()[0].lower()
        if e.type in PERSON_TYPES and (first in _MALE or first in _FEMALE):
            votes.setdefault(eid, set()).add("he" if first in _MALE else "she")
    for s, mentions in zip(sentences, spans, strict=True):
        for a, _, eid in mentions:
            if entities[eid].type not in PERSON_TYPES:
                continue
            if m := _WORD_BEFORE.search(s.text[:a]):
                word = m.group(1).lower()
                if word in _MALE or word in _FEMALE:
                    votes.setdefault(eid, set()).add("he" if word in _MALE else "she")
    return {eid: next(iter(v)) for eid, v in votes.items() if len(v) == 1}


def third_person_antecedents(
    sentences: Sequence[Sentence],
    spans: Sequence[Sequence[tuple[int, int, str]]],
    entities: dict[str, Entity],
) -> list[str | None]:
    """Per sentence, the entity id "he" / "she" / "him" / "her" stand for, or None.

    `spans` parallel `sentences`: each sentence's (start, end, entity id) mentions. The
    antecedent of a sentence comes from the sentences before it in the same turn, so a
    sentence's own names never resolve its own pronouns ("Grog hit him" is not Grog).
    A sentence that says only "she" skips a person the session calls "father" or "Lord"
    and takes the last one named alone before it whose gender does not clash ("her father,
    Kohren, realized ... As she hiked towards Stillben": Keyleth, not Kohren)."""
    genders = _kin_genders(sentences, spans, entities)
    out: list[str | None] = []
    alone: list[str] = []  # people named alone in this turn, most recent last
    entry = None
    for s, mentions in zip(sentences, spans, strict=True):
        if s.entry is not entry:
            entry, alone = s.entry, []
        if s.quoted or not narrated(s.entry):
            out.append(None)
            continue
        pronoun = _sentence_pronoun(s.text)
        fitting = [eid for eid in alone if genders.get(eid, pronoun) == pronoun]
        out.append((fitting[-1] if fitting else None) if pronoun else
                   (alone[-1] if alone else None))
        people = {eid for _, _, eid in mentions if entities[eid].type in PERSON_TYPES}
        if len(people) == 1:
            eid = next(iter(people))
            alone = [*(a for a in alone if a != eid), eid]
        elif people:
            alone = []
    return out


THEY_SENTENCES = 3  # sentences after "the party" its "they" may reach
# the company, not "the party's wagon" nor "the party members" (some of them, another "they")
THE_PARTY = re.compile(r"\bthe\s+party\b(?!['’]s)(?!\s+members?\b)", re.I)
_THEY = re.compile(r"\b(?:they|them)\b", re.I)
_THEY_SUBJECT = re.compile(r"\bthey\b", re.I)


def party_they(
    sentences: Sequence[Sentence],
    spans: Sequence[Sequence[tuple[int, int, str]]],
    entities: dict[str, Entity],
    party: str | None,
) -> list[str | None]:
    """Per sentence, the party when its "they" / "them" follows the DM's "the party" in the
    same narrated turn ("So the party was hired ... They charged into the mines"), else None.

    The DM's recap at a session's start tells the party's story this way. The reach is short
    (`THEY_SENTENCES`) and ends at a sentence naming two people, where "they" may be those
    two; a turn starts with none. In a recap turn (`story.recap_turn`) the whole turn is the
    party's story, before its "the party" too ("So they went seeking her ... The party then
    had to make a heated escape"): there "they" (not "them", which is more often the last
    people carried or fought) is the party wherever neither its sentence nor the one before
    names two people. Facts read through it pay the party's penalty (review)."""
    out: list[str | None] = []
    entry = None
    left = 0  # sentences "they" may still reach
    recap = False
    crowded = False  # the sentence before named two people or more
    for s, mentions in zip(sentences, spans, strict=True):
        if s.entry is not entry:
            entry, left, crowded = s.entry, 0, False
            recap = recap_turn(s.entry)
        if s.quoted or s.entry.speaker_role != "dm" or party is None:
            out.append(None)
            continue
        people = {eid for _, _, eid in mentions if entities[eid].type in PERSON_TYPES}
        if len(people) > 1:
            left = 0
        whole_turn = recap and not crowded and len(people) <= 1 and _THEY_SUBJECT.search(s.text)
        out.append(party if (left > 0 and _THEY.search(s.text)) or whole_turn else None)
        left = THEY_SENTENCES if THE_PARTY.search(s.text) else max(0, left - 1)
        crowded = len(people) > 1
    return out


_WE = re.compile(r"\b(?:we|us)\b", re.I)


def party_we(sentence: Sentence, character: str | None, party: str | None) -> str | None:
    """The party, when a player speaking as their character says "we" or "us" ("Lord
    Greyspine himself sent us", "we've been charged to find Lady Kima"), else None.

    In character, a player's "we" is the company the character travels with: what the
    players tell an NPC about their errand is the party's. Only a speaker whose character is
    known (`character`), outside quotes, and only in a sentence that says "we" / "us" (the
    others are not parsed for it). A question or a plan ("we should find Nostoc") is not a
    deed; the parse's own checks (`svo.hypothetical`) leave those out. Facts read through it
    pay the party's penalty (review)."""
    if (party is None or character is None or sentence.quoted
            or sentence.entry.speaker_role != "player"):
        return None
    return party if _WE.search(sentence.text) else None
