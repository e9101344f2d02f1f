"""Facts from the dependency parse: subject, verb, object between two known entities.

The surface patterns (`relations`) read facts only where the words between two names match
a pattern whole; the parse also reads "Tiberius swoops up and catches Vax", "K'varn rules
these caverns and the duergar serve him", or a passive "Grog was healed by Pike". A verb
becomes a relation only through the table below (a curated lemma -> relation type list): an
unknown verb is no fact, so precision stays where a DM would sign it.

Coreference is the table's own: a player's "I" is their character, the DM's "you" is the
character of the player the DM is answering (`characters`). Such facts carry less
confidence, so below the campaign's threshold they go to the DM's review queue.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from glyphoxa_pipelines.memory.models import Entity
from glyphoxa_pipelines.processing.extraction.name_spans import Sentence
from glyphoxa_pipelines.processing.extraction.relations import Fact, type_ok
from glyphoxa_pipelines.processing.extraction.vocabulary import words

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

# (lemma, preposition or "" for a direct object) -> (relation type, reversed)
VERB_RELATIONS: dict[tuple[str, str], tuple[str, bool]] = {
    **{(v, ""): ("killed", False) for v in words("kill slay murder assassinate execute")},
    **{(v, ""): ("leader_of", False) for v in words("rule govern lead command")},
    **{(v, ""): ("serves", False) for v in words("serve obey")},
    ("work", "for"): ("serves", False),
    **{(v, ""): ("worships", False) for v in words("worship")},
    ("pray", "to"): ("worships", False),
    **{(v, ""): ("rescued", False) for v in words("rescue save free release")},
    **{(v, ""): ("healed", False) for v in words("heal cure restore revive resurrect")},
    ("betray", ""): ("betrayed", False),
    **{(v, ""): ("captured", False) for v in words("capture imprison kidnap abduct")},
    **{(v, ""): ("attacked", False) for v in words("attack shoot stab slash strike ambush")},
    ("fight", ""): ("fought", False),
    ("fight", "with"): ("fought", False),
    ("fight", "against"): ("fought", False),
    **{(v, ""): ("met", False) for v in words("meet find encounter")},
    **{(v, ""): ("helped", False) for v in words("help aid assist")},
    ("ally", "with"): ("allied_with", False),
    **{(v, ""): ("sent", False) for v in words("send hire summon")},
    **{(v, ""): ("protects", False) for v in words("guard protect defend")},
    **{(v, ""): ("seeking", False) for v in words("seek hunt")},
    ("search", "for"): ("seeking", False),
    ("look", "for"): ("seeking", False),
    **{(v, ""): ("fears", False) for v in words("fear")},
    ("marry", ""): ("spouse_of", False),
    **{(v, ""): ("owns", False) for v in words("own wield possess")},
    **{(v, p): ("lives_in", False) for v in words("live reside dwell") for p in ("in", "at")},
    **{(v, "from"): ("comes_from", False) for v in words("come hail")},
    **{(v, p): ("travelled_to", False) for v in words("go travel head journey return")
       for p in ("to", "into")},
    ("enter", ""): ("travelled_to", False),
    ("reach", ""): ("travelled_to", False),
    ("arrive", "in"): ("travelled_to", False),
    ("arrive", "at"): ("travelled_to", False),
    **{(v, p): ("spoke_with", False) for v in words("speak talk") for p in ("to", "with")},
    ("greet", ""): ("spoke_with", False),
    ("thank", ""): ("spoke_with", False),
    ("carry", ""): ("carried", False),
    ("catch", ""): ("rescued", False),
    ("give", "to"): ("gave_to", False),
    # read on the players' recorded introductions (C1E006) and checked on C1E005's
    ("devote", "to"): ("worships", False),
    **{("grow", p): ("grew_up_in", False) for p in ("in", "near")},
    **{("bear", p): ("comes_from", False) for p in ("in", "into")},  # "was born in X"
    ("join", ""): ("member_of", False),
    ("leave", ""): ("left", False),
    **{(v, ""): ("banished", False) for v in words("banish exile")},
    ("warn", ""): ("warned", False),  # not "ask" / "tell": "I ask Grog over to pull" is a plan
    **{(v, ""): ("threatened", False) for v in words("threaten")},
    **{(v, ""): ("distrusts", False) for v in words("distrust")},
    ("visit", ""): ("travelled_to", False),
    ("accompany", ""): ("travelled_with", False),
}
SVO_TYPES: dict[str, tuple[set[str], set[str]]] = {  # relation -> (source types, target types)
    "travelled_to": ({"npc", "player", "creature", "faction"}, {"location"}),
    "lives_in": ({"npc", "player", "creature", "faction"}, {"location"}),
    "comes_from": ({"npc", "player", "creature", "item"}, {"location", "faction"}),
    "worships": ({"npc", "player", "faction"}, {"concept", "npc", "creature"}),
    "owns": ({"npc", "player", "faction"}, {"item", "creature", "location"}),
    "carried": ({"npc", "player", "creature"}, {"npc", "player", "creature", "item"}),
    "spoke_with": ({"npc", "player"}, {"npc", "player"}),
    "met": ({"npc", "player", "faction"}, {"npc", "player", "creature", "faction"}),
    "grew_up_in": ({"npc", "player"}, {"location"}),
    "left": ({"npc", "player", "creature", "faction"}, {"location"}),
    "member_of": ({"npc", "player", "creature"}, {"faction"}),
    "banished": ({"npc", "player", "faction"}, {"npc", "player", "creature"}),
    "threatened": ({"npc", "player", "creature"}, {"npc", "player", "creature"}),
    "warned": ({"npc", "player"}, {"npc", "player", "faction"}),
    "distrusts": ({"npc", "player", "creature"}, {"npc", "player", "creature"}),
    "travelled_with": ({"npc", "player", "creature"}, {"npc", "player", "creature"}),
}
PERSON_PRONOUNS = frozenset(words("i you"))
THIRD_PERSON = frozenset(words("he him she her"))
# a guess costs confidence: the table's roles ("I", the DM's "you") are a good one; the last
# person named is a weaker one, always below the default review threshold (0.7)
COREFERENCE_PENALTY = {"speaker": 0.15, "narration": 0.25}


@dataclass(frozen=True, slots=True)
class Speakers:
    """Who "I" and "you" are in one sentence (entity ids), from the table's roles."""

    me: str | None = None
    you: str | None = None
    third: str | None = None  # "he" / "she": the one person the narration is following

    def count(self) -> int:
        """How many referents the pronouns add to the sentence's named mentions."""
        return (self.me is not None) + (self.you is not None) + (self.third is not None)


def _mention_at(token: Token, spans: list[tuple[int, int, str]]) -> str | None:
    start = token.idx
    for a, b, eid in spans:
        if a <= start < b:
            return eid
    return None


def _with_conjuncts(token: Token) -> list[Token]:
    return [token, *[t for t in token.conjuncts if t.dep_ == "conj"]]


def _referent(
    token: Token, spans: list[tuple[int, int, str]], speakers: Speakers
) -> tuple[str | None, str | None]:
    """(entity id, how a pronoun was resolved: "speaker" / "narration", None for a name)
    of a subject or object token."""
    if (eid := _mention_at(token, spans)) is not None:
        return eid, None
    low = token.lower_
    if low in ("i", "me") and speakers.me:
        return speakers.me, "speaker"
    if low == "you" and speakers.you:
        return speakers.you, "speaker"
    if low in THIRD_PERSON and speakers.third:
        return speakers.third, "narration"
    return None, None


def _svo_ok(rel_type: str, source: Entity, target: Entity) -> bool:
    if rel_type in SVO_TYPES:
        sources, targets = SVO_TYPES[rel_type]
        return source.type in sources and target.type in targets and source.id != target.id
    return type_ok(rel_type, source, target)


def svo_facts(
    s: Sentence,
    doc: Doc,
    spans: list[tuple[int, int, str]],
    entities: dict[str, Entity],
    speakers: Speakers,
    base_confidence: Callable[[Sentence], float],
) -> list[Fact]:
    """Subject-verb-object facts of one parsed sentence between entities (or I / you)."""
    out: list[Fact] = []
    for verb in doc:
        if verb.pos_ not in ("VERB", "AUX") or any(c.dep_ == "neg" for c in verb.children):
            continue
        lemma = verb.lemma_.lower()
        subjects: list[tuple[Token, bool]] = []  # (token, passive)
        objects: list[tuple[Token, str]] = []  # (token, preposition)
        for child in verb.children:
            if child.dep_ == "nsubj":
                subjects += [(t, False) for t in _with_conjuncts(child)]
            elif child.dep_ == "nsubjpass":
                subjects += [(t, True) for t in _with_conjuncts(child)]
            elif child.dep_ in ("dobj", "dative"):
                objects += [(t, "") for t in _with_conjuncts(child)]
            elif child.dep_ == "prep":
                for pobj in child.children:
                    if pobj.dep_ == "pobj":
                        objects += [(t, child.lower_) for t in _with_conjuncts(pobj)]
            elif child.dep_ == "agent":
                for pobj in child.children:
                    if pobj.dep_ == "pobj":
                        objects += [(t, "by") for t in _with_conjuncts(pobj)]
        if not subjects and verb.dep_ == "conj" and verb.head.pos_ in ("VERB", "AUX"):
            subjects = [  # "Tiberius swoops up and catches Vax": the first verb's subject
                (t, False) for c in verb.head.children if c.dep_ == "nsubj"
                for t in _with_conjuncts(c)
            ]
        for subj, passive in subjects:
            if _referent(subj, spans, speakers)[0] is None:
                continue
            for obj, prep in objects:
                if passive and prep == "by":
                    key, (a_tok, b_tok) = (lemma, ""), (obj, subj)
                else:
                    key, (a_tok, b_tok) = (lemma, prep), (subj, obj)
                if key not in VERB_RELATIONS:
                    continue
                a, a_coref = _referent(a_tok, spans, speakers)
                b, b_coref = _referent(b_tok, spans, speakers)
                if a is None or b is None or a == b:
                    continue
                rel_type, reverse = VERB_RELATIONS[key]
                if reverse:
                    a, b = b, a
                if not _svo_ok(rel_type, entities[a], entities[b]):
                    continue
                coref = a_coref or b_coref
                confidence = base_confidence(s) - COREFERENCE_PENALTY.get(coref or "", 0.0)
                out.append(
                    Fact(a, b, rel_type, round(confidence, 3), "stated", s.text, s.entry,
                         {"verb": verb.text.lower(), "method": "dependency"}
                         | ({"coreference": coref} if coref else {}))
                )
    return out
