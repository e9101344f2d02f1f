"""What one session's extraction produced, and the extractor versions rows are stamped with."""

from __future__ import annotations

from dataclasses import dataclass, field

from glyphoxa_pipelines.memory.models import Entity, Relationship
from glyphoxa_pipelines.processing.extraction.resolution import Resolution

EXTRACTOR_VERSION = "spacy-v12"  # v12: a relative pronoun subject is its noun ("X, who
# rules Y", "X is the one that rules Y"), "disappear / sneak / charge into X" is travel, a
# DM quote naming its speaker ("My name is X") is X's and X spoke with the one answered, a
# kin noun set beside a name ("Allura, Kima's friend") is that name's kin, a capitalised
# epithet in apposition ("Bahamut, the Platinum Dragon") is the name's alias;
# v11: "the Underdark" (only ever with "the") is a place,
# "the Mithril mines" is named with its head noun, "a -- bear named X" across a join, one
# mention is enough for a person introduced by kin or standing ("his uncle Kevdak"), "X
# becomes a bear" (said outright, not asked) types X;
# v10: a sentence broken off with a dash and picked up by
# its speaker after a cut-in is one sentence, "I have a bear named Trinket" is kin;
# v9: a player's in-character "we" is the party, a plan's
# second verb is a plan too, "the castle" the turn described, "took control of X", "me leaving
# X" (a gerund's subject), "sent on a mission by X", an idiom in the passive,
# "we were charged to find X" (a purpose clause of a passive control verb: seeking only);
# v8: a recap line of any length, "the party managed",
# "her deity" is worship, "hired to find X" is seeking, "PLACE, where X is held" (held_in),
# a reaction between two DM turns to the party leaves "you" the party;
# v7: a name given to "this" is a thing, a "she" skips a
# "father", "you" after several players is the party, a head taken off, a long turn after a
# declared deed; v6: a second verb in its own voice, "born to" a people,
# names the story cues past the tagger's date label, the recap's "they" over its whole turn,
# "find one's way to X", a place through a plural place noun ("the dungeons of X"), stage
# directions ("(soft chuckle)") blanked for the parser, "the Air Tribe of the Ashari" (a branch),
# "was sent to X" (went there)
# v5: kin and standing said with a noun (`roles`), borrowed
# subjects (`implied_subject`), an NPC's "I" in a quote (`quote_speaker`), prepositional idioms
# v4: the party's deeds: "make your way to X", a named thing
# handed to "you" is owned, "X joins you all" is an ally
# v3: the DM's "you" (addressee), custom verbs, the party's characters by their company
# v2: narration pronouns, the story cast, gods by their form
# v1: spaCy parse, in-game sentences only, the table's characters
LLM_EXTRACTOR_VERSION = "llm-v2"  # v2: structured outputs (JSON schema), in-game text only


@dataclass(frozen=True, slots=True)
class ExtractionResult:
    """What one session contributed to the graph; relationships reference entity ids."""

    entities: list[Entity]  # new entities only
    relationships: list[Relationship]
    resolutions: list[Resolution]
    mention_counts: dict[str, int] = field(default_factory=dict)  # entity id -> mentions
    new_aliases: dict[str, list[str]] = field(default_factory=dict)  # existing id -> aliases
    extractor_version: str = EXTRACTOR_VERSION
    method: str = "patterns"

    def entity_ids(self) -> set[str]:
        return {e.id for e in self.entities}
