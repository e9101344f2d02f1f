"""Who stays where, said with a relative "where": "Emberhold, ... where Lady Kima has been held".

The DM often names the place first and puts the person in a "where" clause after it, instead
of "Kima is held in Emberhold". The small parser hangs such a clause on whatever verb is near
(in CRD3's C1E006 @278 on "looking", not on "Emberhold"), so the place is read from the words:
the last place named before "where" in the same sentence, with "where" right after a comma,
an adverb or a noun ("Emberhold itself, ..., supposedly where", "the fortress where"), never
after a verb ("nobody knows where Kima is held" says no place).

Only verbs that say someone stays somewhere count, each with its relation: held / kept /
imprisoned (passive) is `held_in`; live / reside / dwell / stay is `lives_in`. "Where we left
off" and "where you stepped" name no one there; a hedge ("where they believe Kima was") has
none of these verbs. A question, or a verb with a negation or a modal, reads nothing. A hedge
on the verb ("supposedly where Kima has been held": what captives said) sends the fact to the
DM's review.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from glyphoxa_pipelines.memory.models import Entity
from glyphoxa_pipelines.processing.extraction.name_spans import Sentence
from glyphoxa_pipelines.processing.extraction.relations import Fact
from glyphoxa_pipelines.processing.extraction.svo import mention_at
from glyphoxa_pipelines.processing.extraction.vocabulary import words

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

_HELD = frozenset(words("hold keep imprison jail cage chain"))
_LIVING = frozenset(words("live reside dwell stay"))
_WHO = frozenset({"npc", "player", "creature"})
_MODALS = frozenset(words("can could would should might may must will shall"))
_HEDGES = frozenset(words("supposedly apparently reportedly allegedly perhaps maybe probably"))
HEDGE_PENALTY = 0.2  # below the default review threshold (0.7) from the DM's 0.88
# what may stand between the place and "where": "Emberhold itself, the fortress, supposedly
# where"; a verb there ("knows where") makes "where" a question's word, not the place's
_BEFORE_WHERE = frozenset({"PUNCT", "ADV", "NOUN", "PROPN", "PRON"})


def _relation(verb: Token) -> str | None:
    lemma = verb.lemma_.lower()
    passive = any(c.dep_ == "auxpass" for c in verb.children)
    if passive and lemma in _HELD:
        return "held_in"
    if not passive and lemma in _LIVING:
        return "lives_in"
    return None


def _place_before(where: Token, spans: list[tuple[int, int, str]],
                  entities: dict[str, Entity]) -> str | None:
    """The last place named before "where", when "where" follows a comma, adverb or noun."""
    before = where.nbor(-1) if where.i > 0 else None
    if before is None or before.pos_ not in _BEFORE_WHERE:
        return None
    places = [(b, eid) for _, b, eid in spans
              if b <= where.idx and entities[eid].type == "location"]
    return max(places)[1] if places else None


def where_facts(
    s: Sentence,
    doc: Doc,
    spans: list[tuple[int, int, str]],
    entities: dict[str, Entity],
    base_confidence: Callable[[Sentence], float],
) -> list[Fact]:
    """Facts of one parsed sentence's "PLACE ..., where PERSON is held / lives"."""
    if s.text.rstrip().endswith("?"):
        return []
    out: list[Fact] = []
    for verb in doc:
        where = next((c for c in verb.children
                      if c.dep_ == "advmod" and c.lower_ == "where"), None)
        if where is None or (rel_type := _relation(verb)) is None:
            continue
        if any(c.dep_ == "neg" or (c.dep_ == "aux" and c.lower_ in _MODALS)
               for c in verb.children):
            continue
        place = _place_before(where, spans, entities)
        hedged = any(c.dep_ == "advmod" and c.lower_ in _HEDGES for c in verb.children)
        for subj in verb.children:
            if subj.dep_ not in ("nsubj", "nsubjpass"):
                continue
            who = mention_at(subj, spans)
            if who is None or place is None or entities[who].type not in _WHO:
                continue
            confidence = round(base_confidence(s) - (HEDGE_PENALTY if hedged else 0.0), 3)
            out.append(Fact(who, place, rel_type, confidence, "stated", s.text, s.entry,
                            {"verb": verb.text.lower(), "method": "dependency",
                             "pattern": "where"} | ({"hedged": True} if hedged else {})))
    return out
