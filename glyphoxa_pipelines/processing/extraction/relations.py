"""Facts between two mentions of one sentence: high-precision surface patterns.

"X is the leader of Y", "X killed Y", "X gave Y to Z", "X lives in Y", "X's brother Y": the
text between two consecutive mentions must match a pattern whole, so a relation is only read
where the sentence states it. A pattern that fits but links the wrong kinds of thing (a person
"located in" a person) is a misfire and dropped. Repeated statements of one fact raise its
confidence; facts below the campaign's review threshold go to the DM's review queue.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from glyphoxa_pipelines.memory.models import Entity, Entry, Relationship
from glyphoxa_pipelines.processing.extraction.name_spans import Sentence
from glyphoxa_pipelines.processing.extraction.results import EXTRACTOR_VERSION
from glyphoxa_pipelines.processing.extraction.vocabulary import words

_NEGATION = re.compile(r"\b(?:not|never|n't|no longer|didn't|doesn't|isn't|wasn't|won't)\b", re.I)

_ADV = r"(?:(?:also|still|once|now|recently|secretly|actually|apparently|currently|later)\s+)?"
_AUX = r"(?:(?:has|had|have)\s+(?:been\s+)?)?"
_DET = r"(?:(?:the|a|an|his|her|their|its)\s+)?"

# between-text patterns for "A <between> B" (full match of the text between two mentions)
_REL_PATTERNS: list[tuple[re.Pattern[str], str, bool]] = []  # (regex, rel_type, reversed)


def _rel(pattern: str, rel_type: str, reverse: bool = False) -> None:
    full = (
        r"^\s*(?:,?\s*(?:who|that|which)(?:\s+|(?=['’])))?(?:" + pattern + r")"
        r"(?:\s+(?:the|a|an|his|her|their|its|my|our))?\s*$"
    )  # "a cleric named Pike that healed Grog"
    _REL_PATTERNS.append((re.compile(full, re.I), rel_type, reverse))


_rel(_ADV + _AUX + r"(?:killed|slew|slain|murdered|assassinated|executed|destroyed)", "killed")
_rel(r"(?:was|were|has been|had been)\s+" + _ADV + r"(?:killed|slain|murdered|assassinated)\s+by",
     "killed", True)
_rel(_ADV + _AUX + r"betrayed", "betrayed")
_rel(r"(?:was|were)\s+betrayed\s+by", "betrayed", True)
_rel(r"(?:,\s*who\s+)?" + _ADV + r"(?:lives|lived|living|resides|resided|dwells|dwelt)\s+(?:in|at)"
     r"\s+" + _DET, "lives_in")
_rel(r"(?:,\s*who\s+)?(?:is|was|are|were|comes|came|hails|hailed|hail|come)\s+(?:originally\s+)?"
     r"from\s+" + _DET, "comes_from")
_rel(r",?\s*(?:(?:which|that)\s+)?(?:is|was|are|were|lies|sits|stands)?\s*(?:located|situated)?"
     r"\s*(?:in|within|inside)\s+(?:the\s+(?:heart|middle|center|centre|north|south|east|west|"
     r"edge|depths)\s+of\s+)?(?:the\s+)?", "located_in")
_rel(_ADV + r"(?:rules|ruled|governs|governed|leads|led|commands|commanded|runs|ran)\s+"
     r"(?:over\s+)?" + _DET, "leader_of")
_rel(r"(?:is|was|are|were)\s+(?:ruled|governed|led|commanded|run)\s+by", "leader_of", True)
_rel(_ADV + r"(?:owns|owned|possesses|possessed)\s+" + _DET, "owns")
_rel(r"(?:is|was|are|were)\s+owned\s+by", "owns", True)
_rel(r"(?:,\s*who\s+)?" + _ADV + r"(?:serves|served|works for|worked for|is working for|"
     r"was working for|is loyal to|was loyal to|swore fealty to)\s+" + _DET, "serves")
_rel(r"(?:is|was|are|were)\s+" + _ADV + r"(?:hunting|chasing|tracking|pursuing|after)\s+",
     "hunting")
_rel(_ADV + r"(?:hunts|hunted|pursues|pursued)\s+", "hunting")
_rel(r"(?:is|was|are|were)\s+" + _ADV + r"(?:allied with|an ally of|allies of|friends with|"
     r"in league with)\s+" + _DET, "allied_with")
_rel(r"(?:is|was|are|were)\s+" + _ADV + r"(?:an enemy of|enemies of|at war with|the enemy of|"
     r"the nemesis of|a rival of)\s+" + _DET, "enemy_of")
_rel(r"(?:is|was|are|were)\s+" + _ADV + r"(?:a member of|members of|part of|in)\s+"
     r"(?:the\s+)?(?=$)", "member_of")
_rel(r"(?:joined|serves in|served in)\s+" + _DET, "member_of")
_rel(r"(?:is|was)\s+(?:married to|the (?:wife|husband|spouse) of)", "spouse_of")
_rel(r"(?:married|wed)", "spouse_of")
_rel(r"(?:worships|worshipped|prays to|prayed to|is a (?:cleric|paladin|priest|priestess) of|"
     r"(?:,\s*)?(?:a|the)\s+(?:[a-z]+\s+){0,2}(?:cleric|paladin|priest|priestess|follower) of)",
     "worships")
_rel(r"(?:rescued|saved|freed)", "rescued")
_rel(_ADV + r"(?:healed|cured|revived|resurrected)", "healed")
_rel(r"(?:'s|’s|is|was)\s+(?:a|the)\s+(?:[a-z\-]+\s+){0,2}(?:cleric|paladin|priest|priestess|"
     r"follower|disciple|champion|chosen)\s+of", "worships")
_rel(r"(?:was|were)\s+(?:rescued|saved|freed)\s+by", "rescued", True)
_rel(r"(?:stole|took)\s+" + _DET + r"(?:\w+\s+){0,2}from", "stole_from")
_rel(r"(?:is|was|are|were)\s+" + _ADV + r"(?:searching for|looking for|seeking|trying to find)\s+",
     "seeking")
_rel(r"(?:seeks|sought)\s+", "seeking")
_rel(r"(?:is|was|are|were)\s+(?:guarding|protecting)\s+" + _DET, "protects")
_rel(r"(?:guards|protects|guarded|protected)\s+" + _DET, "protects")
_rel(r"(?:fears|feared|is afraid of|was afraid of)\s+", "fears")

# "A is the ROLE of B" / "A, the ROLE of B" / "A, ROLE of B" — the role word picks the type
_ROLE_OF = re.compile(
    r"^\s*(?:,\s*(?:who\s+is\s+|who\s+was\s+)?|\s+(?:is|was|'s|’s|are|were)\s+|\s+)"
    r"(?:also\s+|now\s+|currently\s+)?(?:(?:the|a|an|one of the)\s+)?"
    r"(?P<role>(?:[a-z][\w'\-]*\s+){0,2}?[a-z][\w'\-]*)\s+(?:of|for|to|at)\s+(?:the\s+)?$",
    re.I,
)
_POSSESSIVE_ROLE = re.compile(
    r"^['’]s?\s+(?:(?:twin|younger|older|elder|little|big|half|step|dear|old)\s+)?"
    r"(?P<role>[a-z][\w\-]*)\s*,?\s*$",
    re.I,
)
_AND_POSSESSIVE_ROLE = re.compile(
    r"^\s*(?:and|,)\s+(?:his|her|their)\s+(?:(?:twin|younger|older|elder|little|big|half)\s+)?"
    r"(?P<role>[a-z][\w\-]*)\s*,?\s*$",
    re.I,
)
_GAVE = re.compile(r"^\s*" + _ADV + r"(?:gave|gives|handed|hands|sold|sells|offered|offers)\s+"
                   + _DET + r"$", re.I)
_GAVE_TO = re.compile(r"^\s+to\s+$", re.I)

ROLE_TYPES: dict[str, tuple[str, bool]] = {  # role word -> (rel_type, reversed)
    **{w: ("leader_of", False) for w in words(
        "leader head ruler king queen lord lady chief chieftain captain commander general master "
        "mistress mayor governor emperor empress prince princess duke duchess baron baroness "
        "regent headmaster guildmaster boss overlord owner proprietor keeper ironkeeper founder "
        "high priest priestess archmage steward warden sheriff"
    )},
    **{w: ("member_of", False) for w in words(
        "member members agent agents soldier soldiers knight knights guard guards servant spy "
        "envoy emissary ambassador arcanist councilman councilwoman councillor representative "
        "champion paladin cleric"
    )},
    **{w: ("parent_of", True) for w in words("son daughter child heir")},
    **{w: ("parent_of", False) for w in words("father mother parent")},
    **{w: ("sibling_of", False) for w in words("brother sister sibling twin")},
    **{w: ("spouse_of", False) for w in words("wife husband spouse consort")},
    **{w: ("friend_of", False) for w in words("friend ally companion")},
    **{w: ("enemy_of", False) for w in words("enemy nemesis rival foe")},
    **{w: ("mentor_of", False) for w in words("mentor teacher")},
    **{w: ("mentor_of", True) for w in words("apprentice student pupil")},
    **{w: ("located_in", False) for w in words("capital")},
}
POSSESSIVE_ROLES: dict[str, tuple[str, bool]] = {  # "A's ROLE B": B is A's ROLE
    **{w: ("parent_of", False) for w in words("son daughter child")},
    **{w: ("parent_of", True) for w in words("father mother dad mom")},
    **{w: ("sibling_of", False) for w in words("brother sister sibling twin")},
    **{w: ("spouse_of", False) for w in words("wife husband")},
    **{w: ("friend_of", False) for w in words("friend companion ally")},
    **{w: ("serves", True) for w in words("servant bodyguard guard apprentice")},
    **{w: ("enemy_of", False) for w in words("enemy nemesis rival")},
    **{w: ("owns", False) for w in words("pet companion mount familiar")},
}
SYMMETRIC = frozenset({"sibling_of", "spouse_of", "friend_of", "allied_with", "enemy_of",
                       "associated_with"})
# target kinds a relation may point at; a mismatch means the pattern misfired
TARGET_TYPES: dict[str, set[str]] = {
    "lives_in": {"location"},
    "located_in": {"location"},
    "comes_from": {"location", "faction"},
    "leader_of": {"location", "faction", "npc"},
    "member_of": {"faction"},
    "parent_of": {"npc", "player"},
    "sibling_of": {"npc", "player"},
    "spouse_of": {"npc", "player"},
}
SOURCE_TYPES: dict[str, set[str]] = {
    "lives_in": {"npc", "player", "creature", "faction"},
    "located_in": {"location", "item", "faction"},
    "comes_from": {"npc", "player", "creature", "item"},
    "parent_of": {"npc", "player"},
    "sibling_of": {"npc", "player"},
    "spouse_of": {"npc", "player"},
    "member_of": {"npc", "player", "creature"},
    "leader_of": {"npc", "player", "creature"},
    "killed": {"npc", "player", "creature", "faction"},
    "serves": {"npc", "player", "creature"},
    "worships": {"npc", "player", "faction"},
    "healed": {"npc", "player", "creature"},
}


def type_ok(rel_type: str, source: Entity, target: Entity) -> bool:
    if source.id == target.id:
        return False
    src_ok = rel_type not in SOURCE_TYPES or source.type in SOURCE_TYPES[rel_type]
    tgt_ok = rel_type not in TARGET_TYPES or target.type in TARGET_TYPES[rel_type]
    return src_ok and tgt_ok


@dataclass(slots=True)
class Fact:
    """One statement of a relation, before statements of the same fact are merged."""

    source: str
    target: str
    rel_type: str
    confidence: float
    assertion: Literal["stated", "inferred"]
    evidence: str
    entry: Entry
    attributes: dict[str, Any] = field(default_factory=dict)


def base_confidence(sentence: Sentence) -> float:
    """Narration by the DM is the most reliable; quoted NPC speech and table talk less so."""
    if sentence.entry.speaker_role == "dm":
        return 0.78 if sentence.quoted else 0.88
    return 0.74


_OF_LINK = re.compile(r"\s+of\s+(?:the\s+)?")


def pattern_facts(
    s: Sentence, spans: list[tuple[int, int, str]], entities: dict[str, Entity]
) -> list[Fact]:
    """Facts stated between consecutive mentions of one sentence."""
    out: list[Fact] = []
    text = s.text
    base = base_confidence(s)
    for i in range(len(spans) - 1):
        a_start, a_end, a = spans[i]
        b_start, b_end, b = spans[i + 1]
        between = text[a_end:b_start]
        if i > 0 and _OF_LINK.fullmatch(text[spans[i - 1][1] : a_start]):
            head = spans[i - 1][2]  # "Lady Kima of Vord, who's the paladin of Bahamut": Kima
            if entities[head].type in ("npc", "player") and not between.startswith(" of"):
                a = head
        if len(between) > 80 or _NEGATION.search(between) or a == b:
            continue
        ea, eb = entities[a], entities[b]
        # "A gave B to C"
        if i + 2 < len(spans) and _GAVE.match(between):
            c_start, _, c = spans[i + 2]
            if _GAVE_TO.match(text[b_end:c_start]):
                out.append(Fact(a, c, "gave_to", base, "stated", text, s.entry,
                                 {"item": eb.name, "item_id": b}))
                out.append(Fact(c, b, "owns", base - 0.08, "inferred", text, s.entry))
                continue
        if m := _POSSESSIVE_ROLE.match(between) or _AND_POSSESSIVE_ROLE.match(between):
            role = m.group("role").lower()
            if role in POSSESSIVE_ROLES:
                rel_type, reverse = POSSESSIVE_ROLES[role]
                src, dst = (b, a) if not reverse else (a, b)
                if rel_type in ("parent_of",) and not reverse:
                    src, dst = a, b  # "A's son B": A parent_of B
                if rel_type == "owns":
                    src, dst = a, b
                if type_ok(rel_type, entities[src], entities[dst]):
                    out.append(Fact(src, dst, rel_type, base - 0.03, "stated", text, s.entry,
                                     {"role": role}))
                continue
        if m := _ROLE_OF.match(between):
            role_words = m.group("role").lower().split()
            role = role_words[-1]
            if role in ROLE_TYPES and not _NEGATION.search(between):
                rel_type, reverse = ROLE_TYPES[role]
                src, dst = (b, a) if reverse else (a, b)
                appositive = between.lstrip().startswith(",")
                if type_ok(rel_type, entities[src], entities[dst]):
                    out.append(Fact(src, dst, rel_type, base - (0.05 if appositive else 0),
                                     "stated", text, s.entry, {"role": " ".join(role_words)}))
                continue
        # "Kima of Vord" inside one span was split by the finder into two mentions: the text
        # states the link (stated); which link it is, origin or membership, is our reading,
        # hence the confidence below the review threshold
        # "the Air Tribe of the Ashari people": a people's branch is part of the people
        if _OF_LINK.fullmatch(between) and ea.type == "faction" and eb.type == "faction":
            out.append(Fact(a, b, "member_of", base - 0.2, "stated", text, s.entry,
                            {"pattern": "X of Y"}))
            continue
        if _OF_LINK.fullmatch(between) and ea.type in ("npc", "player"):
            rel_type = "member_of" if eb.type == "faction" else "comes_from"
            if type_ok(rel_type, ea, eb):
                out.append(Fact(a, b, rel_type, base - 0.2, "stated", text, s.entry,
                                {"pattern": "X of Y"}))
            continue
        for regex, rel_type, reverse in _REL_PATTERNS:
            if regex.match(between):
                src, dst = (b, a) if reverse else (a, b)
                if type_ok(rel_type, entities[src], entities[dst]):
                    out.append(Fact(src, dst, rel_type, base, "stated", text, s.entry))
                break
    return out


def merge_facts(
    facts: list[Fact], campaign_id: str, session_id: str, threshold: float
) -> list[Relationship]:
    """One relationship per (source, type, target); repeated statements raise confidence."""
    grouped: dict[tuple[str, str, str], list[Fact]] = defaultdict(list)
    for f in facts:
        src, dst = f.source, f.target
        if f.rel_type in SYMMETRIC and dst < src:
            src, dst = dst, src
        grouped[(src, f.rel_type, dst)].append(f)
    out = []
    for (src, rel_type, dst), group in grouped.items():
        best = max(group, key=lambda f: f.confidence)
        confidence = round(min(0.97, best.confidence + 0.04 * (len(group) - 1)), 3)
        attributes = dict(best.attributes)
        if len(group) > 1:
            attributes["statements"] = len(group)
        first = min(group, key=lambda f: f.entry.spoken_at)
        out.append(
            Relationship(
                campaign_id=campaign_id,
                source_id=src,
                target_id=dst,
                rel_type=rel_type,
                attributes=attributes,
                confidence=confidence,
                assertion="stated" if any(f.assertion == "stated" for f in group) else "inferred",
                provenance="extracted",
                status="canon" if confidence >= threshold else "pending",
                session_id=session_id,
                observed_at=first.entry.spoken_at,
                valid_from=first.entry.spoken_at,
                evidence=best.evidence[:500],
                extractor_version=EXTRACTOR_VERSION,
            )
        )
    out.sort(key=lambda r: (r.observed_at or datetime.min, r.source_id, r.rel_type, r.target_id))
    return out
