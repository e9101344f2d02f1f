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
from glyphoxa_pipelines.processing.extraction.implied_subject import (
    OBJECT_CONTROL,
    implied_subjects,
    purpose_of_task,
)
from glyphoxa_pipelines.processing.extraction.name_spans import Sentence
from glyphoxa_pipelines.processing.extraction.relations import Fact, type_ok
from glyphoxa_pipelines.processing.extraction.relative_clauses import relative_antecedent
from glyphoxa_pipelines.processing.extraction.vocabulary import ITEM_NOUNS, LOCATION_NOUNS, words

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

_SEIZING = frozenset(words("take seize gain wrest"))
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
    # "the Briarwoods took control of the castle": seized, whatever the verb of taking
    **{(v, "control of"): ("captured", False) for v in _SEIZING},
    **{(v, ""): ("attacked", False) for v in words("attack shoot stab slash strike ambush")},
    ("fight", ""): ("fought", False),
    ("fight", "with"): ("fought", False),
    ("fight", "against"): ("fought", False),
    **{(v, ""): ("met", False) for v in words("meet find encounter")},
    **{(v, ""): ("helped", False) for v in words("help aid assist")},
    ("ally", "with"): ("allied_with", False),
    **{(v, ""): ("sent", False) for v in words("send hire summon")},
    # "the party has been sent to Kraghammer": the one sent went there (`_SENT_TO`: passive
    # only; in "Allura sent Grog to X" Allura stayed)
    **{("send", p): ("travelled_to", False) for p in ("to", "into")},
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
    ("raise", "in"): ("grew_up_in", False),
    # "was born in X", "born to the Air Tribe" (a people; "born to a noble family" names none)
    **{("bear", p): ("comes_from", False) for p in ("in", "into", "to")},
    ("join", ""): ("member_of", False),
    ("leave", ""): ("left", False),
    **{(v, ""): ("banished", False) for v in words("banish exile")},
    ("warn", ""): ("warned", False),  # not "ask" / "tell": "I ask Grog over to pull" is a plan
    **{(v, ""): ("threatened", False) for v in words("threaten")},
    **{(v, ""): ("distrusts", False) for v in words("distrust")},
    ("visit", ""): ("travelled_to", False),
    ("accompany", ""): ("travelled_with", False),
    # the DM's second person moves the party: "you make your way to X", "you all make it into
    # X" (`_motion`), "you descend into X", "you head towards X"
    **{(v, p): ("travelled_to", False) for v in words("travel head descend climb")
       for p in ("toward", "towards", "into", "to")},
    # on foot, by sea or air, in flight: "she hiked down the mountain towards Stillben";
    # not "run into" (a chance meeting)
    **{(v, p): ("travelled_to", False)
       for v in words("hike walk march sail fly ride wander venture flee escape")
       for p in ("toward", "towards", "into", "to")},
    **{("run", p): ("travelled_to", False) for p in ("toward", "towards", "to")},
    # out of sight or in a rush: "she disappeared into the mines"; not "rush to help"
    **{(v, p): ("travelled_to", False)
       for v in words("disappear vanish sneak stealth slip creep crawl charge rush dash dive "
                      "plunge delve spearhead")
       for p in ("into", "toward", "towards")},
}
# a prepositional idiom says the relation whatever the verb: "travelling into Kraghammer at the
# behest of Allura in search of Kima" -> (relation, the idiom's object is the source)
PREP_IDIOMS: dict[str, tuple[str, bool]] = {
    "in search of": ("seeking", False),
    **{f"at {w} of": ("sent", True) for w in words("behest request bidding command order")},
    "in service of": ("serves", False),
}
_PATHS = frozenset(words("way road path trail mountain hill stairs stairway steps tunnel river "
                        "street bridge corridor hallway passage"))
# "lead" and "command" with a destination guide someone somewhere ("Tiberius leads you to
# the vault"): no rule over them
_GUIDING_PREPS = frozenset(words("to into toward towards through across down up out onto"))
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
    "quest_giver": ({"npc", "faction"}, {"npc", "player", "faction"}),
    "allied_with": ({"npc", "player", "creature", "faction"}, {"faction"}),
}
# a verb outside the table is still a fact a DM reads ("Trinket nuzzles Grog", "Scanlan
# sings for Clarota"), but what it means is the verb's own: it goes to review
CUSTOM_PENALTY = 0.2
_CUSTOM_SOURCES = frozenset({"npc", "player", "creature", "faction"})
_CUSTOM_TARGETS = frozenset({"npc", "player", "creature", "faction", "item", "location"})
_NOT_FACTS = frozenset(words(
    "be have do get make see look watch hear listen notice know think believe feel seem "
    "appear want need like love hate say tell ask speak talk call name mean guess wonder "
    "remember recall forget realize understand let try go come take put turn keep give "
    "show use begin start continue stop become remain stay sit stand wait roll cast hold"
))
# passives that tell the subject's own story, not a deed done to it by someone unnamed: "was
# born in Whitestone", "was raised in Syngorn"
_SENT_TO = frozenset({("send", "to"), ("send", "into")})
_PASSIVE_STATES = frozenset({("bear", "in"), ("bear", "into"), ("bear", "to"), ("raise", "in")}
                            | _SENT_TO)
_MODALS = frozenset(words("can could would should might may must will 'll wo shall ca"))
PERSON_PRONOUNS = frozenset(words("i you"))
THIRD_PERSON = frozenset(words("he him she her"))
# a guess costs confidence: a player's "I" and a character the DM calls by name ("Grog, you
# ...", `addressee`) are good ones; the last person named, the last player to speak and the
# party are weaker, always below the default review threshold (0.7)
COREFERENCE_PENALTY = {
    "speaker": 0.15, "quote": 0.15, "vocative": 0.05, "narration": 0.25, "reply": 0.25,
    "party": 0.25, "party_they": 0.25, "party_we": 0.25, "description": 0.25,
    "the_party": 0.1,  # the DM says "the party": the referent is named, only the word's sense
}


@dataclass(frozen=True, slots=True)
class Speakers:
    """Who "I" and "you" are in one sentence (entity ids), from the table's roles."""

    me: str | None = None
    you: str | None = None
    third: str | None = None  # "he" / "she": the one person the narration is following
    you_reading: str = "speaker"  # how `you` was read (`addressee`: vocative, party, reply)
    party: str | None = None  # the DM's "the party" in narration: the entity marked `party`
    me_reading: str = "speaker"  # a player's own "I", or an NPC's in a DM quote (`quote`)
    they: str | None = None  # the DM's "they" right after "the party" (`coreference`)
    we: str | None = None  # a player's in-character "we" / "us": the party (`coreference`)
    # "the castle" after "the castle of Whitestone" in the same turn (`descriptions`)
    described: tuple[tuple[str, str], ...] = ()

    def count(self) -> int:
        """How many referents the pronouns add to the sentence's named mentions."""
        return ((self.me is not None) + (self.you is not None) + (self.third is not None)
                + (self.party is not None) + (self.they is not None) + (self.we is not None)
                + bool(self.described))


def mention_at(token: Token, spans: list[tuple[int, int, str]]) -> str | None:
    start = token.idx
    for a, b, eid in spans:
        if a <= start < b:
            return eid
    return None


# "the physical form of Grog" is Grog, "the ancient castle of Whitestone" is Whitestone; not
# "the leader of X" or "the back of X" (a role, a part: another thing than X)
_STANDS_FOR_OF = LOCATION_NOUNS | frozenset(words("form body figure person self"))
_NAMING_VERBS = frozenset(words("call name know title dub"))
_OBJECT_CONTROL = OBJECT_CONTROL


def stand_in(token: Token, spans: list[tuple[int, int, str]], depth: int = 2) -> str | None:
    """The entity a common noun stands for when the sentence names it right there: "a town
    called Ty'rex", "his uncle, Kevdak", "the castle of Whitestone", and through a second
    description ("a halfling paladin, a revered folk hero named Lady Kima")."""
    if token.pos_ not in ("NOUN", "PROPN"):
        return None
    for child in token.children:
        if child.dep_ == "appos" and (eid := mention_at(child, spans)):
            return eid
        if child.dep_ == "appos" and depth > 1 and (eid := stand_in(child, spans, depth - 1)):
            return eid
        if child.dep_ == "acl" and child.lemma_.lower() in _NAMING_VERBS:
            for named in child.children:
                if named.dep_ in ("oprd", "dobj", "attr") and (eid := mention_at(named, spans)):
                    return eid
        if (child.dep_ == "prep" and child.lower_ == "of"
                and token.lemma_.lower() in _STANDS_FOR_OF):
            for pobj in child.children:
                if pobj.dep_ == "pobj" and (eid := mention_at(pobj, spans)):
                    return eid
    return None


_SEVERING = frozenset(words("take cut lop chop slice hack"))


def _beheaded(verb: Token) -> Token | None:
    """The one whose head the verb takes off ("take Murghol's head off his shoulders", "lop
    off Kevdak's head"): killed, whatever the verb. Not "take Kevdak's hat off", nor "his
    head of hair"."""
    if verb.lemma_.lower() not in _SEVERING or not any(
            c.lower_ == "off" for c in verb.children):
        return None
    for c in verb.children:
        if c.dep_ == "dobj" and c.lemma_.lower() == "head" and not any(
                p.dep_ == "prep" for p in c.children):
            return next((p for p in c.children if p.dep_ == "poss"), None)
    return None


def _with_conjuncts(token: Token) -> list[Token]:
    return [token, *[t for t in token.conjuncts if t.dep_ == "conj"]]


def referent(
    token: Token, spans: list[tuple[int, int, str]], speakers: Speakers
) -> tuple[str | None, str | None]:
    """(entity id, how a pronoun was resolved: "speaker" / "narration", None for a name)
    of a subject or object token."""
    if (eid := mention_at(token, spans)) is not None:
        return eid, None
    if (eid := stand_in(token, spans)) is not None:
        return eid, None
    if (antecedent := relative_antecedent(token)) is not None:
        return referent(antecedent, spans, speakers)
    low = token.lower_
    if low in ("i", "me") and speakers.me:
        return speakers.me, speakers.me_reading
    if (low == "you" or token.left_edge.lower_ == "you") and speakers.you:  # "you guys"
        return speakers.you, speakers.you_reading
    if low in THIRD_PERSON and speakers.third:
        return speakers.third, "narration"
    if low in ("they", "them") and speakers.they:
        return speakers.they, "party_they"
    if low in ("we", "us") and speakers.we:
        return speakers.we, "party_we"
    if speakers.party and _the_party(token):
        return speakers.party, "the_party"
    if speakers.described and (eid := _described(token, speakers.described)):
        return eid, "description"
    return None, None


def _described(token: Token, described: tuple[tuple[str, str], ...]) -> str | None:
    """The entity "the castle" stands for when the turn described one so (`descriptions`):
    a common noun with "the" / "this" / "that", not "the castle of X" (another castle) nor
    "his castle" (someone's)."""
    if token.pos_ != "NOUN" or not any(
            c.dep_ == "det" and c.lower_ in ("the", "this", "that") for c in token.children):
        return None
    if any(c.dep_ in ("prep", "poss") and (c.dep_ == "poss" or c.lower_ == "of")
           for c in token.children):
        return None
    return dict(described).get(token.lower_)


def _the_party(token: Token) -> bool:
    """The DM's "the party" as a doer or object: the company, not "a party at the manor" (no
    definite article) nor "the party's wagon" (a possessive names another thing)."""
    if token.lemma_.lower() != "party" or token.pos_ != "NOUN":
        return False
    if any(c.dep_ == "case" for c in token.children):
        return False
    return any(c.dep_ == "det" and c.lower_ == "the" for c in token.children)


def svo_types_fit(rel_type: str, source: Entity, target: Entity) -> bool:
    if rel_type in SVO_TYPES:
        sources, targets = SVO_TYPES[rel_type]
        return source.type in sources and target.type in targets and source.id != target.id
    return type_ok(rel_type, source, target)


def hypothetical(verb: Token) -> bool:
    """An option, a plan or a question, not a deed: "you can carry her", "you have to talk to
    Adra", "I'm going to shoot", "do you attack Kima?"."""
    if any(c.dep_ == "aux" and c.lower_ in _MODALS for c in verb.children):
        return True
    head = verb.head
    if verb.dep_ == "xcomp" and head.lemma_.lower() in ("have", "go", "want", "try", "need"):
        return True
    # the plan a second verb belongs to: "we should try to go ... and find Nostoc"
    if verb.dep_ in ("conj", "xcomp") and head is not verb and head.pos_ in ("VERB", "AUX"):
        return hypothetical(head)
    return verb.sent.text.rstrip().endswith("?") or any(
        c.dep_ == "mark" and c.lower_ in ("if", "unless", "whether") for c in verb.children
    )


def _idiom_objects(prep: str, pobj: Token, depth: int = 2) -> list[tuple[Token, str]]:
    """Objects of the prepositional idioms a verb's phrase opens, one chained to the next
    ("at the behest of Allura in search of Kima": Allura by one idiom, Kima by the other)."""
    idiom = f"{prep} {pobj.lemma_.lower()} of"
    if idiom not in PREP_IDIOMS or depth <= 0:
        return []
    out: list[tuple[Token, str]] = []
    for of in pobj.children:
        if of.dep_ == "prep" and of.lower_ == "of":
            out += [(t, idiom) for named in of.children if named.dep_ == "pobj"
                    for t in _with_conjuncts(named)]
    for chained in pobj.children:
        if chained.dep_ == "prep":
            out += [o for inner in chained.children if inner.dep_ == "pobj"
                    for o in _idiom_objects(chained.lower_, inner, depth - 1)]
    return out


_ERRANDS = frozenset(words("mission quest errand task assignment"))


def _errand_agents(verb: Token, pobj: Token) -> list[tuple[Token, str]]:
    """The agent of a passive said on its errand: "was sent down on a mission by the arcanist
    Allura" (the parse hangs "by" on "mission"). Only a passive verb: an active one has its
    doer already, and "fought on a quest by the river" is a place."""
    if pobj.lemma_.lower() not in _ERRANDS or not any(
            c.dep_ in ("auxpass", "nsubjpass") for c in verb.children):
        return []
    return [(t, "by") for by in pobj.children if by.dep_ == "prep" and by.lower_ == "by"
            for agent in by.children if agent.dep_ == "pobj" for t in _with_conjuncts(agent)]


def _arguments(verb: Token) -> tuple[list[tuple[Token, bool]], list[tuple[Token, str]]]:
    """The verb's subjects (token, passive) and objects (token, preposition; "" for a direct
    object, "by" for a passive's agent)."""
    subjects: list[tuple[Token, bool]] = []
    objects: list[tuple[Token, str]] = []
    for child in verb.children:
        if child.dep_ == "nsubj":
            subjects += [(t, False) for t in _with_conjuncts(child)]
        elif child.dep_ == "nsubjpass":
            subjects += [(t, True) for t in _with_conjuncts(child)]
        elif child.dep_ == "dobj" and child.lemma_.lower() == "control" and (
                verb.lemma_.lower() in _SEIZING):
            # "took control of the castle": what was taken is the control's object
            objects += [(pobj, "control of") for prep in child.children
                        if prep.dep_ == "prep" and prep.lower_ == "of"
                        for pobj in prep.children if pobj.dep_ == "pobj"]
        elif child.dep_ == "dobj" and child.lemma_.lower() in _PATHS:
            # "make your way to X", "hiked down the mountain towards X": where the path leads
            objects += [(pobj, prep.lower_) for prep in child.children if prep.dep_ == "prep"
                        for pobj in prep.children if pobj.dep_ == "pobj"]
        elif child.dep_ in ("dobj", "dative") and child.pos_ != "ADP":
            objects += [(t, "") for t in _with_conjuncts(child)]
        elif child.dep_ in ("prep", "dative", "agent"):
            prep = "by" if child.dep_ == "agent" else child.lower_
            for pobj in child.children:
                if pobj.dep_ != "pobj":
                    continue
                objects += _idiom_objects(prep, pobj) or [
                    (t, prep) for t in _with_conjuncts(pobj)]
                objects += _errand_agents(verb, pobj)
    if not subjects:  # "Tiberius swoops up and catches Vax", "Exiled by Kevdak, Grog ..."
        subjects = implied_subjects(verb)
    return subjects, objects


def _english_verb(lemma: str) -> bool:
    """A verb a reader knows ("nuzzle"), not a spoken form the lemmatizer guessed at
    ("scooche" from "scooching")."""
    from wordfreq import zipf_frequency

    return zipf_frequency(lemma, "en") >= 2.5


_THINGS = ITEM_NOUNS | frozenset(words("gold coin coins gem gems weapon armor armour potion item"))
_QUEST_VERBS = frozenset(words("ask task charge commission hire send beg implore request"))


def _task(verb: Token) -> bool:
    """The verb sets someone a task: "asks you to find the hammer"."""
    return any(c.dep_ in ("xcomp", "ccomp") and c.pos_ == "VERB" for c in verb.children)


def _set_as_task(verb: Token) -> bool:
    """The verb is the task another sets: "was hired to find Lady Kima" says the party went
    looking for her, not that they met her (that comes sessions later)."""
    return (verb.dep_ == "xcomp" and verb.head.lemma_.lower() in _QUEST_VERBS
            or purpose_of_task(verb))


def _given(verb: Token, spans: list[tuple[int, int, str]]) -> bool:
    """A gift says what thing was given ("gives the gauntlet to Grog", "gives Bad News to
    Percy"); "give it to Keyleth" leaves the thing unnamed, and "give a nod / a little
    inspiration to Pike" is a gesture or a game rule, no thing at all."""
    return any(
        c.dep_ in ("dobj", "dative") and (
            c.lemma_.lower() in _THINGS or mention_at(c, spans) is not None)
        for c in verb.children
    )


_GIVING = frozenset(words("give hand"))
_PERSONS = frozenset({"npc", "player", "faction"})


def _motion(verb: Token) -> str:
    """The verb a sentence moves by: "you make your way to X", "you make it into X" and
    "they find their way to X" are travel; "make a deal with X" is not (its object is
    neither "way" nor "it"), and "find it in X" is a find."""
    lemma = verb.lemma_.lower()
    ways = {"make": ("way", "it"), "find": ("way",)}.get(lemma, ())
    if any(c.dep_ == "dobj" and c.lower_ in ways for c in verb.children):
        return "travel"
    return lemma


def _received(
    verb: Token, spans: list[tuple[int, int, str]], speakers: Speakers,
    entities: dict[str, Entity],
) -> list[tuple[str, str, str | None]]:
    """(receiver, named item, how "you" was read) of a handing over: "Kima gives you the
    Broken Howl", "hands Bad News to Percy". A gift names a thing (`_given`); its receiver
    owns it. "Gives you a nod" names none, "gives it to you" leaves it unnamed."""
    if verb.lemma_.lower() not in _GIVING:
        return []
    things = [eid for c in verb.children if c.dep_ == "dobj"
              for t in _with_conjuncts(c) if (eid := mention_at(t, spans))
              and entities[eid].type == "item"]
    receivers = [c for c in verb.children if c.dep_ == "dative" and c.pos_ != "ADP"]
    receivers += [p for c in verb.children if c.dep_ in ("dative", "prep")
                  and c.lower_ == "to" for p in c.children if p.dep_ == "pobj"]
    out = []
    for r in receivers:
        who, coref = referent(r, spans, speakers)
        if who is not None and entities[who].type in _PERSONS:
            out += [(who, thing, coref) for thing in things]
    return out


def _gift_facts(
    s: Sentence, verb: Token, gifts: list[tuple[str, str, str | None]],
    spans: list[tuple[int, int, str]], speakers: Speakers, entities: dict[str, Entity],
    base_confidence: Callable[[Sentence], float],
) -> list[Fact]:
    """A gift with its thing named, as the surface patterns read "A gave X to C": `gave_to`
    (stated, the thing in its attributes) from the giver the sentence names, and the
    receiver `owns` the thing (inferred: a gift may be lent or passed on)."""
    base = base_confidence(s)
    givers = [referent(t, spans, speakers) for c in verb.children if c.dep_ == "nsubj"
              for t in _with_conjuncts(c)]
    out = []
    for who, thing, coref in gifts:
        cost = COREFERENCE_PENALTY.get(coref or "", 0.0)
        attributes = {"verb": verb.text.lower(), "method": "dependency"} | (
            {"coreference": coref} if coref else {})
        out.append(Fact(who, thing, "owns", round(base - 0.08 - cost, 3), "inferred",
                        s.text, s.entry, dict(attributes)))
        for giver, giver_coref in givers:
            if giver is None or giver == who or (
                    coref and giver_coref and "vocative" not in (coref, giver_coref)):
                continue  # nobody named, or two guesses in one fact
            if entities[giver].type not in _PERSONS:
                continue
            cost_giver = COREFERENCE_PENALTY.get(giver_coref or "", 0.0)
            out.append(Fact(
                giver, who, "gave_to", round(base - max(cost, cost_giver), 3), "stated",
                s.text, s.entry, attributes | {"item": entities[thing].name, "item_id": thing}
                | ({"coreference": giver_coref or coref} if giver_coref or coref else {})))
    return out


def verb_relation(lemma: str, prep: str, doer: str | None, source: Entity,
              target: Entity) -> tuple[str, str] | None:
    """(relation type, how it was read: "table" or "custom") of a verb between two entities,
    or None. A verb outside the table is a custom relation (its lemma, "nuzzle",
    "pledge_to") only between people, creatures and named things, said in narration of a
    deed whose doer is a name or a character called by name, never a verb of seeing,
    thinking or saying (`_NOT_FACTS`)."""
    if (lemma, prep) in VERB_RELATIONS:
        return VERB_RELATIONS[(lemma, prep)][0], "table"
    if lemma in _NOT_FACTS or doer not in (None, "vocative") or not _english_verb(lemma):
        return None
    if source.type not in _CUSTOM_SOURCES or target.type not in _CUSTOM_TARGETS:
        return None
    return (f"{lemma}_{prep}" if prep else lemma), "custom"


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
        if hypothetical(verb):
            continue
        lemma = _motion(verb)
        gifts = _received(verb, spans, speakers, entities)
        out += _gift_facts(s, verb, gifts, spans, speakers, entities, base_confidence)
        subjects, objects = _arguments(verb)
        if (victim := _beheaded(verb)) is not None:
            lemma, objects = "kill", [(victim, "")]
        for subj, passive in subjects:
            if referent(subj, spans, speakers)[0] is None:
                continue
            for obj, prep in objects:
                if passive and prep == "by":
                    (lemma_prep, (a_tok, b_tok)) = ("", (obj, subj))
                elif passive and (lemma, prep) not in _PASSIVE_STATES and (
                        prep not in PREP_IDIOMS):
                    # "Grog was taken to Kima": who did it is not said; an idiom says its
                    # relation in either voice ("was sent in search of Kima")
                    continue
                elif (lemma, prep) in _SENT_TO and not passive:
                    continue  # the sender did not go
                else:
                    (lemma_prep, (a_tok, b_tok)) = (prep, (subj, obj))
                a, a_coref = referent(a_tok, spans, speakers)
                b, b_coref = referent(b_tok, spans, speakers)
                if a is None or b is None or a == b:
                    continue
                coref = a_coref or b_coref
                if (prep == "" or passive and prep == "by") and lemma in _QUEST_VERBS and _task(
                        verb):  # "asks you to find X", "they were hired by Nostoc to go"
                    if s.quoted or s.entry.speaker_role != "dm":
                        continue  # a player's "I ask Grog to pull" is a plan at the table
                    found: tuple[str, str] | None = ("quest_giver", "quest")
                elif lemma_prep in PREP_IDIOMS:
                    found = (PREP_IDIOMS[lemma_prep][0], "idiom")
                    if PREP_IDIOMS[lemma_prep][1]:
                        a, b = b, a
                else:
                    found = verb_relation(lemma, lemma_prep, coref, entities[a], entities[b])
                if found is None:
                    continue
                rel_type, how = found
                if rel_type == "met" and _set_as_task(verb):
                    rel_type = "seeking"
                elif purpose_of_task(verb) and rel_type != "seeking":
                    continue  # "was sent to kill Kevdak": the errand, not yet the deed
                if rel_type == "leader_of" and lemma_prep == "" and any(
                        c.dep_ == "prep" and c.lower_ in _GUIDING_PREPS for c in verb.children):
                    continue  # "leads you to the vault": a guide, not a ruler
                if rel_type == "member_of" and entities[b].attributes.get("party") is True:
                    rel_type = "allied_with"  # "Clarota joins you (all)": at the party's side
                if how == "custom" and (s.quoted or s.entry.speaker_role != "dm"):
                    continue  # a verb outside the table is read only in the DM's narration
                if rel_type == "gave_to" and (gifts or not _given(verb, spans)):
                    continue  # a gift with its thing named is `_gift_facts`'s
                if a_coref and b_coref and "vocative" not in (a_coref, b_coref):
                    continue  # two guesses in one fact ("you managed to strike him")
                if how == "table" and lemma in _OBJECT_CONTROL and _task(verb):
                    continue  # "I command Trinket to move": an order, not who leads whom
                if how == "table" and VERB_RELATIONS[(lemma, lemma_prep)][1]:
                    a, b = b, a
                if how != "custom" and not svo_types_fit(rel_type, entities[a], entities[b]):
                    continue
                confidence = (base_confidence(s) - COREFERENCE_PENALTY.get(coref or "", 0.0)
                              - (CUSTOM_PENALTY if how == "custom" else 0.0))
                out.append(
                    Fact(a, b, rel_type, round(confidence, 3), "stated", s.text, s.entry,
                         {"verb": verb.text.lower(), "method": "dependency"}
                         | ({"coreference": coref} if coref else {})
                         | ({"custom": True} if how == "custom" else {}))
                )
    return out
