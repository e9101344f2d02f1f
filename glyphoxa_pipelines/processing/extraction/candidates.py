"""Candidate names of a session and the evidence of what each one is.

Each name span votes for a type from its own words (a title, "X Tavern", "House X") and from
its context ("a gnome cleric named X", "the city of X", "X, the blacksmith", "X says"). Strong
cues (titles, head nouns, "named X") decide; weak context only breaks ties. Single words are
then folded into the one longer name they stand for ("Vax" -> "Vax'ildan", "Mara" -> "Mara
Vell"), unless they name an entity the graph already knows.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Set
from dataclasses import dataclass, field

from glyphoxa_pipelines.memory.models import Entry
from glyphoxa_pipelines.processing.extraction.name_spans import Sentence, Span
from glyphoxa_pipelines.processing.extraction.nlp import ParsedSentences, graph_type
from glyphoxa_pipelines.processing.extraction.resolution import (
    EntityResolver,
    name_key,
    split_descriptor,
)
from glyphoxa_pipelines.processing.extraction.vocabulary import (
    FACTION_NOUNS,
    FACTION_PREFIXES,
    ITEM_NOUNS,
    LOCATION_NOUNS,
    LOCATION_PREFIXES,
    MECHANICS,
    NOT_NAMES,
    NOUN_TYPES,
    TITLES,
    words,
)


@dataclass(slots=True)
class Candidate:
    """A name seen in the session, with counts of the cues around its mentions."""

    name: str  # core name, as most often written
    forms: Counter[str] = field(default_factory=Counter)  # surface forms incl. titles
    mentions: int = 0
    type_votes: Counter[str] = field(default_factory=Counter)
    descriptions: Counter[str] = field(default_factory=Counter)
    explicit: bool = False  # introduced by a naming pattern ("named X", "Lord X")
    locative: int = 0  # mentions after "in", "into", "near", ...
    mechanic: int = 0  # mentions after "cast", before "spell", ...: game rules, not the world
    by_dm: int = 0  # mentions in the DM's turns: in-world names are almost always voiced there
    speech: int = 0  # mentions followed by "says", "nods", ...
    parsed: int = 0  # mentions the English parser saw
    nominal: int = 0  # ... of which it read as nouns (not "Oof", "Blazing": a cry, a verb)
    ner: Counter[str] = field(default_factory=Counter)  # its entity labels of the mentions
    introduced: int = 0  # mentions after a person's kin or standing: "his uncle X"
    definite: int = 0  # mentions after "the": "the Underdark", "the Greyspines"
    headed: Counter[str] = field(default_factory=Counter)  # "the Mithril mines": head nouns

    def absorb(self, other: Candidate) -> None:
        """Take over the mentions and cues of a shorter form of this name."""
        self.forms.update(other.forms)
        self.mentions += other.mentions
        self.type_votes.update(other.type_votes)
        self.locative += other.locative
        self.mechanic += other.mechanic
        self.by_dm += other.by_dm
        self.speech += other.speech
        self.parsed += other.parsed
        self.nominal += other.nominal
        self.ner.update(other.ner)
        self.introduced += other.introduced
        self.definite += other.definite
        self.headed.update(other.headed)
        self.descriptions.update(other.descriptions)
        self.explicit = self.explicit or other.explicit


_HYPHEN_WORD = re.compile(r"[\w'’]-[a-z]")


def _span_type(tokens: list[str]) -> str | None:
    """Type from the span's own words: a title, a head noun ("X Tavern") or a prefix."""
    lows = [t.lower().rstrip(".") for t in tokens]
    if lows[0] in TITLES and len(lows) > 1:
        return "npc"
    if lows[0] in FACTION_PREFIXES and len(lows) > 1:
        return "faction"
    if lows[0] in LOCATION_PREFIXES and len(lows) > 1:
        return "location"
    if len(lows) > 1:
        for nouns, kind in NOUN_TYPES:
            if lows[-1] in nouns and kind != "npc":
                return kind
    return None


def _noun_type(phrase: str) -> str | None:
    """Type from a descriptor phrase's head noun: "gnome cleric" -> npc, "bear" -> creature."""
    words = [w.lower() for w in re.findall(r"[A-Za-z'\-]+", phrase)]
    for word in reversed(words):
        for nouns, kind in NOUN_TYPES:
            if word in nouns or word.rstrip("s") in nouns:
                return kind
    return None


# "a bear named X"; "an amazing -- companion bear named X": a sentence broken off and picked
# up after a cut-in is joined with a dash (`resumed.joined`), which does not end the phrase
_NAMED = re.compile(
    r"\b(?:a|an|the|one|some|his|her|their)\s+"
    r"(?P<desc>(?:[a-z][\w'\-]*\s+(?:--\s+)?){0,3}?[a-z][\w'\-]*)"
    r",?\s+(?:named|called|known as|by the name of)\s+$"
)
_JOIN_DASH = re.compile(r"\s+--\s+")
_DESCRIPTOR_BEFORE = re.compile(
    r"\b(?:the|a|an|old|young|our|your|his|her)\s+(?P<desc>(?:[a-z][\w'\-]*\s+){0,2}?"
    r"[a-z][\w'\-]*)\s+$"
)
# "her father, Korren": a person's kin or standing, then their name after a comma
_KIN_COMMA_BEFORE = re.compile(r"\b(?:his|her|their|my|your)\s+(?P<desc>[a-z][\w'\-]*),\s+$")
_OF_BEFORE = re.compile(
    r"\b(?P<noun>[a-z][\w'\-]*)\s+of\s+(?:the\s+)?$"
)  # "the city of X", "the house of X"
_INSIDE_OF = frozenset(words("heart middle center centre outskirts streets edge depths ruins"))
_TITLED_OF = re.compile(
    r"\b(?:" + "|".join(sorted(TITLES)) + r")\s+[A-Z][\w'’\-]*(?:\s+[A-Z][\w'’\-]*)?\s+of\s+$",
    re.I,
)  # "Lady Kima of X": X is a place
_APPOSITIVE_AFTER = re.compile(
    r"^\s*,\s+(?:the|a|an|your|his|her|their|my|our)\s+(?P<desc>(?:[\w'\-]+\s+){0,3}?[a-z][\w'\-]*)\b"
)
# "Trinket becomes a bear again", "Kraghammer is a dwarven city": what the name is, said
# outright; weak, as an apposition: it decides only a name with no stronger cue
_COPULA_AFTER = re.compile(
    r"^\s+(?:is|was|becomes|became)\s+(?:a|an)\s+(?P<desc>(?:[\w'\-]+\s+){0,2}?[a-z][\w'\-]*)"
    r"(?=\s*(?:[.,;!]|$|\s+(?:again|too|now|who|that|which|with)\b))"
)  # not a question: "What if K'varn is a dragon?" is a guess
# "paladin of Bahamut", "the light of Sarenrae", "your Sarenrae holy symbol": a deity
_DEITY_BEFORE = re.compile(
    r"\b(?:paladin|cleric|priest|priestess|follower|followers|worshipp?ers?|avatar|symbol|light|"
    r"name|faith|blessing|grace|altar|chosen|god|goddess)\s+of\s+(?:the\s+)?$",
    re.I,
)
_DEITY_AFTER = re.compile(
    r"^(?:['’]s)?\s+(?:holy\s+symbol|symbol|faith|followers?|worshipp?ers?)\b|"
    r"^\s*,\s+(?:the\s+)?(?:\w+\s+){0,2}(?:god|goddess|deity|dragon)\b",
    re.I,
)
_ITEM_AFTER = re.compile(
    r"^\s+(?:" + "|".join(sorted(ITEM_NOUNS)) + r")s?\b", re.I
)  # "the Bad News gun"
# "shot from the Bad News", "load it back into Bad News": what a weapon is handled as
_ITEM_BEFORE = re.compile(
    r"\b(?:fire[sd]?|firing|shot\s+from|shoot(?:s|ing)?\s+(?:with|from)|"
    r"(?:re)?load(?:s|ed|ing)?\s+(?:it\s+|them\s+)?(?:back\s+)?into|wield(?:s|ed|ing)?|"
    r"brandish(?:es|ed|ing)?|unsheathe[sd]?|pull(?:s|ed)?\s+out)\s+"
    r"(?:the\s+|your\s+|his\s+|her\s+|my\s+)?$",
    re.I,
)
_PEOPLE_AFTER = re.compile(
    r"^\s+(?:people|peoples|family|clan|tribe|tribes|folk|kin|army|order|guild)\b", re.I
)  # "the Ashari people", "the Trickfoot family"
_LOCATIVE_BEFORE = re.compile(
    r"\b(?:in|into|inside|within|near|towards?|through|across|outside|reach(?:ed)?|entered|"
    r"arrive[sd]? (?:at|in)|travel(?:led|ed)? to|welcome to|city of|town of)\s+(?:the\s+)?$",
    re.I,
)
_MECHANIC_BEFORE = re.compile(
    r"\b(?:cast|casts|casting|use|uses|using|learn|learned|prepare|prepared)\s+"
    r"(?:(?:a|an|my|the|his|her|your)\s+)?$",
    re.I,
)
_MECHANIC_AFTER = re.compile(
    r"^(?:['’]s)?\s+(?:spell|cantrip|ability|feat|check|save|saving|throw|attack|damage|"
    r"slot|roll|bonus|modifier|action)s?\b",
    re.I,
)
# "They call this the Aramente, or Noble Odyssey": a name given to "this" or "that" names a thing
# (a rite, a journey, a custom), never a person; both the name and its ", or" twin are cued
_THING_NAMED_BEFORE = re.compile(
    r"\b(?:call|calls|called)\s+(?:this|that|it)\s+(?:the\s+)?"
    r"(?:[A-Z][\w'’\-]*(?:\s+[A-Z][\w'’\-]*)*,?\s+or\s+(?:the\s+)?)?$"
)
THING_CUE = 2.0  # the concept votes of one "call this X" cue: a naming pattern, as "named X"
_DEFINITE_BEFORE = re.compile(r"\bthe\s+$", re.I)
# "the Mithril mines", "the Tal'Dorei council": a name whose place or body is said in lower case
_HEAD_NOUN_AFTER = re.compile(
    r"^\s+(" + "|".join(sorted(LOCATION_NOUNS | FACTION_NOUNS, key=len, reverse=True)) + r")\b"
)
_SPEECH_AFTER = re.compile(
    r"^\s+(?:says|said|goes|asks|asked|replies|replied|nods|smiles|looks|turns|tells|told|"
    r"shouts|whispers|grins|laughs|sighs|walks|stands|leans|points)\b"
)


DEITY_CUE = 2.0  # the concept votes of one deity cue


def choose_type(c: Candidate) -> str | None:
    """Strong cues (titles, head nouns, "named X", the graph's own type) decide; then the
    weak evidence is summed: "in X" mentions for a place, "X says" for a person, and the
    parser's entity labels (it knows English names, not the campaign's, so they only tip
    the balance).

    A name that is merely often preceded by "in"/"into" becomes a place only when that is
    what most of its mentions look like.
    """
    score: Counter[str] = Counter()
    score.update(c.type_votes)
    if score["concept"] >= DEITY_CUE and score["creature"] > score["concept"]:
        # a god is often named by its form ("the Platinum Dragon"): the head noun votes for a
        # creature on every mention, a deity cue ("the symbol of X") only where one is said
        return "concept"
    if score and score.most_common(1)[0][1] >= 3:
        return score.most_common(1)[0][0]
    if c.locative >= 2 and c.locative >= 0.4 * c.mentions:
        score["location"] += 1.0 + 0.5 * c.locative
    if c.speech >= 1:
        score["npc"] += 1.0 + 0.5 * c.speech
    for label, n in c.ner.items():
        kind = NER_TYPES.get(label)
        # the small model calls many fantasy names a place: a label counts only when it is
        # what most mentions got, and a place only when the text also puts it somewhere
        if kind and 2 * n >= c.parsed and (kind != "location" or c.locative):
            score[kind] += min(NER_CAP, NER_VOTE * n)
    if not score:
        return _definite_type(c)
    kind, votes = score.most_common(1)[0]
    return kind if votes >= 1.5 else None


def _definite_type(c: Candidate) -> str | None:
    """A one-word name with no other cue that the story only ever says as "the X" is a
    place ("the Underdark") or, said in the plural, a family or people ("the Greyspines"):
    people and gods are named bare ("Kima", "Bahamut")."""
    if " " in c.name or c.mentions < 2 or c.definite < c.mentions:
        return None
    plural = c.name.endswith("s") and not c.name.endswith("ss")
    return "faction" if plural else "location"


def name_by_head_noun(
    candidates: dict[str, Candidate], merged_into: dict[str, str], resolver: EntityResolver
) -> None:
    """A one-word name the story only ever says with the same lower-case head noun after it
    ("the Mithril mines", "the Tal'Dorei council") names the place or body with it: the
    place is "Mithril mines", not "Mithril". Not a name the graph knows on its own ("the
    Underdark caverns" are the Underdark)."""
    for k, c in candidates.items():
        if " " in k or k in merged_into or len(c.headed) != 1:
            continue
        noun, n = next(iter(c.headed.items()))
        if n < c.mentions or resolver.resolve(c.name) is not None:
            continue
        c.name = f"{c.name} {noun}"
        c.type_votes["location" if noun in LOCATION_NOUNS else "faction"] += 3


def gather_candidates(
    sentences: list[Sentence], spans: list[Span], excluded: Set[str]
) -> dict[str, Candidate]:
    """Candidates by name key, each with the type evidence of its mentions' contexts.

    Out-of-world names (`excluded`), words that are never names, bare titles and game
    mechanics are not candidates.
    """
    candidates: dict[str, Candidate] = {}
    for si, start, end, surface in spans:
        s = sentences[si]
        _, title, core = split_descriptor(surface)
        core_key = name_key(core)
        if not core or core_key in excluded or core_key in NOT_NAMES or core_key in MECHANICS:
            continue
        if core_key in TITLES or _HYPHEN_WORD.search(core):
            continue  # a bare title; "Scanlan-shaped" is a word made from a name
        if core.isupper():  # "THUNDERBRAND" shouted: keep the written form seen elsewhere
            core = core.title()
        c = candidates.setdefault(core_key, Candidate(name=core))
        c.forms[surface] += 1
        c.mentions += 1
        if kind := _span_type(surface.split()):
            c.type_votes[kind] += 3
            if title:
                c.explicit = True
        _count_context(c, s.text[:start], s.text[end:])
        if narrated(s.entry):
            c.by_dm += 1
    return candidates


MONOLOGUE_WORDS = 150


def narrated(entry: Entry) -> bool:
    """The DM's lines, and a player's long in-game monologue (a character's recorded
    introduction): the story told, not table chatter."""
    return entry.speaker_role == "dm" or len(entry.text.split()) >= MONOLOGUE_WORDS


def _count_context(c: Candidate, before: str, after: str) -> None:
    """Votes and counts from the text around one mention."""
    if _DEITY_BEFORE.search(before) or _DEITY_AFTER.match(after):
        c.type_votes["concept"] += DEITY_CUE
    elif _THING_NAMED_BEFORE.search(before):
        c.explicit = True
        c.type_votes["concept"] += THING_CUE
    elif m := _NAMED.search(before):
        c.explicit = True
        desc = _JOIN_DASH.sub(" ", m.group("desc"))
        c.descriptions[desc] += 1
        if kind := _noun_type(desc):
            c.type_votes[kind] += 2
    elif _TITLED_OF.search(before):
        c.type_votes["location"] += 1.5
    elif m := _OF_BEFORE.search(before):
        noun = m.group("noun").lower()
        if noun.endswith("s") and noun not in _INSIDE_OF and noun[:-1] in LOCATION_NOUNS:
            noun = noun[:-1]  # "the dungeons of Emberhold", "the streets of Emon": a place
        if noun in LOCATION_NOUNS or noun in _INSIDE_OF:
            c.type_votes["location"] += 2
            if noun in LOCATION_NOUNS:  # "the city of X"; not "the heart of X"
                c.descriptions[noun] += 1
        elif noun in FACTION_NOUNS:
            c.type_votes["faction"] += 2
    elif m := _DESCRIPTOR_BEFORE.search(before) or _KIN_COMMA_BEFORE.search(before):
        desc = m.group("desc")
        if kind := _noun_type(desc.split()[-1]):
            c.type_votes[kind] += 2
            c.descriptions[desc] += 1
            if kind == "npc":
                c.introduced += 1
    if m := _APPOSITIVE_AFTER.match(after) or _COPULA_AFTER.match(after):
        desc = m.group("desc")
        if kind := _noun_type(desc.split()[0] if " of " in desc else desc):
            c.type_votes[kind] += 1.5
            c.descriptions[desc] += 1
    if _ITEM_AFTER.match(after):
        c.type_votes["item"] += 2
    elif _ITEM_BEFORE.search(before):
        c.type_votes["item"] += 1.5
    elif _PEOPLE_AFTER.match(after):
        c.type_votes["faction"] += 2
    if _LOCATIVE_BEFORE.search(before):
        c.locative += 1
    if _DEFINITE_BEFORE.search(before):
        c.definite += 1
        if m := _HEAD_NOUN_AFTER.match(after):
            c.headed[m.group(1)] += 1
    if _MECHANIC_BEFORE.search(before) or _MECHANIC_AFTER.match(after):
        c.mechanic += 1
    if _SPEECH_AFTER.match(after):
        c.speech += 1


def merge_name_parts(
    candidates: dict[str, Candidate], resolver: EntityResolver
) -> dict[str, str]:
    """Fold single-word candidates into the one longer name they are part of.

    Returns {merged key: key of the candidate it was folded into}; the longer candidates
    absorb the merged ones' mentions and cues. A word the graph already resolves keeps its
    own identity.
    """
    parts_index: dict[str, set[str]] = defaultdict(set)
    for k in candidates:
        parts = k.split()
        if len(parts) > 1 and " of " not in f" {k} ":
            for w in parts:
                parts_index[w].add(k)
    merged_into: dict[str, str] = {}
    for k, c in candidates.items():
        if " " in k:
            continue
        if len(k) >= 3 and "'" not in k:
            # "Vax" is short for "Vax'ildan"
            longer = [o for o in candidates if " " not in o and o.startswith(k + "'")]
            if len(longer) == 1 and resolver.resolve(c.name) is None:
                merged_into[k] = longer[0]
                continue
        parents = sorted(parts_index.get(k, ()), key=lambda o: -candidates[o].mentions)
        if (
            parents
            and _stands_for(k, c, parents, candidates)
            and resolver.resolve(c.name) is None  # a known entity keeps its own identity
        ):
            merged_into[k] = parents[0]
    for k, target in merged_into.items():
        candidates[target].absorb(candidates[k])
    return merged_into


def _stands_for(
    k: str, c: Candidate, parents: list[str], candidates: dict[str, Candidate]
) -> bool:
    """Whether the single word `k` is short for the most mentioned of its longer names."""
    target = parents[0]
    rest = sum(candidates[o].mentions for o in parents[1:])
    lead = candidates[target].mentions
    if len(parents) > 1 and (lead < 2 or lead <= 2 * rest):
        return False  # ambiguous: "Greyspine" of Nostoc or of Gradim?
    own, theirs = choose_type(c), choose_type(candidates[target])
    if own and own != "npc" and theirs != own:
        return False  # "Kraghammer" the city is not part of the joke "Tiberius Kraghammer"
    # a given name stands for the person; a surname only if the person is titled
    return target.split()[0] == k or any(split_descriptor(f)[1] for f in candidates[target].forms)


# the parser's entity labels as type votes: weak, since it knows English, not the campaign
NER_TYPES = {"PERSON": "npc", "GPE": "location", "LOC": "location", "FAC": "location"}
NER_VOTE = 0.75
NER_CAP = 2.0
# what a name is never read as: a cry ("Oof"), a describing word ("Blazing"), a verb
_WORDLIKE = frozenset({"INTJ", "ADJ", "ADV", "VERB", "AUX", "CCONJ", "SCONJ", "ADP"})
GRAPH_VOTE = 3.0


def add_parse_evidence(
    candidates: dict[str, Candidate], spans: list[Span], parsed: ParsedSentences
) -> None:
    """Per mention: whether the parser read it as a proper noun, and its entity label (the
    graph's, from the entity ruler, outweighs the model's). Only the sentences holding a
    candidate's mention are parsed."""
    found = [
        (si, start, end, c)
        for si, start, end, surface in spans
        if (c := candidates.get(name_key(split_descriptor(surface)[2]))) is not None
    ]
    indices = sorted({si for si, *_ in found})
    docs = dict(zip(indices, parsed.docs(indices), strict=True))
    for si, start, end, c in found:
        doc = docs[si]
        span = doc.char_span(start, end, alignment_mode="expand")
        if span is None:
            continue
        c.parsed += 1
        if span.root.pos_ not in _WORDLIKE:
            c.nominal += 1
        for ent in doc.ents:
            if ent.start_char < end and start < ent.end_char:
                c.ner[ent.label_] += 1
                if kind := graph_type(ent.label_):
                    c.type_votes[kind] += GRAPH_VOTE
                break
