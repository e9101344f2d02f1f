"""What one person is to another, said with a noun: "her father, Kohren", "Pike's
great-great-grandfather, Wilhand", "my bear Trinket", "I have a bear named Trinket", "Bahamut
is her deity", "Lady Kima was, specifically, a paladin of Bahamut"; and whose a named thing is:
"Percy's Bad News", "the Bad News, your crazy gun".

Real play seldom says "X is the father of Y" with the two names side by side, so the surface
patterns (`relations`) miss most kinship. The parse shows it as a noun of kin or of standing
with a possessor ("her", "Pike's") and the name it stands for (an apposition, "named X", or
the noun's own name span, "uncle Kevdak"); or as a copula whose subject is one name and whose
noun names the other ("Kima was a paladin of Bahamut", "Kohren is Keyleth's father"); or as
the object of "have", whose subject is the one the kin is to ("I have a bear named Trinket").

A pronoun possessor ("her father") is resolved as the verbs' pronouns are (`svo.Speakers`:
a player's "my" is their character, the DM's "your" the addressee, "his"/"her" the one person
the narration follows); "our" and "their" name a group and read nothing. Facts read through
a pronoun pay the same coreference penalty as the verbs' do, so they go to review.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from glyphoxa_pipelines.memory.models import Entity
from glyphoxa_pipelines.processing.extraction.implied_subject import implied_subjects
from glyphoxa_pipelines.processing.extraction.name_spans import Sentence
from glyphoxa_pipelines.processing.extraction.relations import ROLE_TYPES, Fact
from glyphoxa_pipelines.processing.extraction.svo import (
    COREFERENCE_PENALTY,
    Speakers,
    hypothetical,
    mention_at,
    referent,
    stand_in,
)
from glyphoxa_pipelines.processing.extraction.vocabulary import words

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

# "P's NOUN X" -> (relation, X is the source): "her father, Kohren" is Kohren parent_of her
KIN: dict[str, tuple[str, bool]] = {
    **{w: ("parent_of", True) for w in words("father mother dad mom mum parent")},
    **{w: ("parent_of", False) for w in words("son daughter child")},
    **{w: ("sibling_of", True) for w in words("brother sister sibling twin")},
    **{w: ("spouse_of", True) for w in words("wife husband spouse")},
    # the kind of kin is in the attributes ("uncle"); the graph keeps one relation for all
    **{w: ("relative_of", True) for w in words(
        "uncle aunt grandfather grandmother grandparent ancestor nephew niece cousin "
        "grandson granddaughter")},
    **{w: ("friend_of", True) for w in words("friend companion")},
    **{w: ("enemy_of", True) for w in words("enemy nemesis rival")},
    **{w: ("mentor_of", True) for w in words("mentor teacher")},
    **{w: ("mentor_of", False) for w in words("apprentice student pupil")},
    # an animal or mount that is someone's: "my bear Trinket", "your hawk"
    **{w: ("owns", False) for w in words("pet bear wolf hawk horse mount familiar")},
    # the god one serves: "Bahamut is her deity", "his goddess, Sarenrae"
    **{w: ("worships", False) for w in words("deity god goddess")},
}
_PERSONS = frozenset({"npc", "player"})
# an animal companion is often typed as an NPC by name alone ("Trinket")
_OWNED = frozenset({"creature", "npc", "item"})
# a follower of a god: "a paladin of Bahamut", "the priestess of Sarenrae"
_DEVOTEES = frozenset(words("paladin cleric priest priestess follower disciple champion chosen"))
_NO_READING = frozenset(words("our their its"))
# "your" read as the last speaker or the table: a guess that another person named in the
# same sentence contradicts
_WEAK_YOU = frozenset({"reply", "party"})


def _third_possessor(pronoun: Token, spans: list[tuple[int, int, str]],
                     entities: dict[str, Entity], speakers: Speakers) -> str | None:
    """Whose "his" / "her" is: the one person the sentence names before it ("Vex'ahlia and
    her twin brother"), else the person the narration follows; two named before: nobody."""
    before = {eid for a, _, eid in spans if a < pronoun.idx and entities[eid].type in _PERSONS}
    if len(before) > 1:
        return None
    return next(iter(before)) if before else speakers.third


def _possessor(token: Token, spans: list[tuple[int, int, str]], entities: dict[str, Entity],
               speakers: Speakers) -> tuple[str | None, str | None]:
    """(entity, coreference reading) of a noun's possessor: a name ("Pike's") or a pronoun."""
    for child in token.children:
        if child.dep_ != "poss":
            continue
        if (eid := mention_at(child, spans)) is not None:
            return eid, None
        low = child.lower_
        if low == "my" and speakers.me:
            return speakers.me, speakers.me_reading
        if low == "your" and speakers.you:
            if speakers.you_reading in _WEAK_YOU and any(
                    eid != speakers.you and entities[eid].type in _PERSONS for _, _, eid in spans):
                return None, None  # "Goblin side for Percy, ... your gun" after Grog spoke
            return speakers.you, speakers.you_reading
        if low in ("his", "her"):
            return _third_possessor(child, spans, entities, speakers), "narration"
        if low in _NO_READING:
            return None, None
    return None, None


def _haver(noun: Token, spans: list[tuple[int, int, str]],
           speakers: Speakers) -> tuple[str | None, str | None]:
    """(entity, coreference reading) of the one who has a kin noun: "I have an amazing
    companion bear named Trinket", "Vex has a twin brother, Vax'ildan". Only "have" said as a
    deed of the present or past: not "I'd have a bear", "do you have a sister?", nor
    "I don't have a brother named Vax"."""
    verb = noun.head
    if noun.dep_ != "dobj" or verb.lemma_.lower() != "have" or hypothetical(verb) or any(
            c.dep_ == "neg" for c in verb.children):
        return None, None
    own = [c for c in verb.children if c.dep_ == "nsubj"]
    subjects = [x for t in own for x in (t, *t.conjuncts)] or [
        t for t, passive in implied_subjects(verb) if not passive]
    if len(subjects) != 1:
        return None, None
    return referent(subjects[0], spans, speakers)


def _named(token: Token, spans: list[tuple[int, int, str]]) -> str | None:
    """The entity a kin noun stands for: "her father, Kohren", "a bear named Trinket", the
    name span the noun opens ("his uncle Kevdak", found as one name), or the name the noun
    is set beside ("Allura, Kima's friend": an apposition to the name)."""
    return mention_at(token, spans) or stand_in(token, spans) or (
        mention_at(token.head, spans) if token.dep_ == "appos" else None)


def _kin_fact(
    relation: tuple[str, bool], named: str, owner: str,
    entities: dict[str, Entity],
) -> tuple[str, str, str] | None:
    """(source, relation, target) of "OWNER's ROLE NAMED", or None when the kinds do not fit."""
    rel_type, named_is_source = relation
    src, dst = (named, owner) if named_is_source else (owner, named)
    if named == owner:
        return None
    if rel_type == "owns":
        ok = entities[src].type in _PERSONS and entities[dst].type in _OWNED
    elif rel_type == "worships":
        ok = entities[src].type in _PERSONS and entities[dst].type == "concept"
    else:
        ok = entities[src].type in _PERSONS and entities[dst].type in _PERSONS
    return (src, rel_type, dst) if ok else None


def _copula_subject(noun: Token, spans: list[tuple[int, int, str]]) -> str | None:
    """The name a copula's noun describes: "Kohren is Keyleth's father" -> Kohren."""
    verb = noun.head
    if noun.dep_ != "attr" or verb.lemma_.lower() != "be":
        return None
    for child in verb.children:
        if child.dep_ == "nsubj" and (eid := mention_at(child, spans)) is not None:
            return eid
    return None


def _role_of(noun: Token, spans: list[tuple[int, int, str]],
             entities: dict[str, Entity]) -> tuple[str, str] | None:
    """(relation, target) of "a ROLE of Y": a devotee of a god worships it; a standing from
    the relations' role table ("the ruler of Y", "a member of Y") is that relation."""
    role = noun.lemma_.lower()
    for prep in noun.children:
        if prep.dep_ != "prep" or prep.lower_ != "of":
            continue
        for pobj in prep.children:
            target = mention_at(pobj, spans) if pobj.dep_ == "pobj" else None
            if target is None:
                continue
            if role in _DEVOTEES and entities[target].type == "concept":
                return "worships", target
            if role in ROLE_TYPES and not ROLE_TYPES[role][1]:
                return ROLE_TYPES[role][0], target
    return None


_ROLE_TARGETS = {"worships": {"concept"}, "leader_of": {"location", "faction", "npc"},
                 "member_of": {"faction"}}


def _owned_item(token: Token, spans: list[tuple[int, int, str]], entities: dict[str, Entity],
                speakers: Speakers) -> tuple[str, str, str | None] | None:
    """(owner, item, coreference) of a named thing said to be someone's: "Percy's Bad News",
    "the Bad News, your crazy gun"."""
    item = mention_at(token, spans)
    if item is None or entities[item].type != "item" or token.dep_ == "compound":
        return None
    for noun in [token, *(c for c in token.children if c.dep_ == "appos")]:
        owner, coref = _possessor(noun, spans, entities, speakers)
        if owner is not None and owner != item and entities[owner].type in _OWNERS:
            return owner, item, coref
    return None


_OWNERS = frozenset({"npc", "player", "faction"})


def role_facts(
    s: Sentence,
    doc: Doc,
    spans: list[tuple[int, int, str]],
    entities: dict[str, Entity],
    speakers: Speakers,
    base_confidence: Callable[[Sentence], float],
) -> list[Fact]:
    """Kinship, companions and standing one parsed sentence states with a noun."""
    out: list[Fact] = []
    base = base_confidence(s)
    for noun in doc:
        if noun.pos_ not in ("NOUN", "PROPN"):
            continue
        if (owned := _owned_item(noun, spans, entities, speakers)) is not None:
            owner, item, coref = owned
            cost = COREFERENCE_PENALTY.get(coref or "", 0.0)
            out.append(Fact(owner, item, "owns", round(base - 0.03 - cost, 3), "stated",
                            s.text, s.entry, {"method": "dependency", "pattern": "X's thing"}
                            | ({"coreference": coref} if coref else {})))
            continue
        lemma = noun.lemma_.lower()
        if lemma in KIN:
            owner, coref = _possessor(noun, spans, entities, speakers)
            if owner is None:
                owner, coref = _haver(noun, spans, speakers)
            named = _named(noun, spans) or _copula_subject(noun, spans)
            if owner is not None and named is not None and (
                    found := _kin_fact(KIN[lemma], named, owner, entities)):
                src, rel_type, dst = found
                cost = COREFERENCE_PENALTY.get(coref or "", 0.0)
                out.append(Fact(src, dst, rel_type, round(base - 0.03 - cost, 3), "stated",
                                s.text, s.entry, {"role": lemma, "method": "dependency"}
                                | ({"coreference": coref} if coref else {})))
                continue
        subject = _copula_subject(noun, spans)
        if subject is None or entities[subject].type not in _PERSONS:
            continue
        if (found_role := _role_of(noun, spans, entities)) is not None:
            rel_type, target = found_role
            if target != subject and entities[target].type in _ROLE_TARGETS.get(
                    rel_type, {entities[target].type}):
                out.append(Fact(subject, target, rel_type, base, "stated", s.text, s.entry,
                                {"role": lemma, "method": "dependency"}))
    return out
