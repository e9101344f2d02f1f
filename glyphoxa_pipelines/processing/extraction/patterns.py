"""The offline extractor: entities and facts one session states, with no model but the graph.

Steps, each in the module named for it: sentences and name spans (`name_spans`), candidate
names with type evidence (`candidates`), resolution against the graph or a new entity
(`resolution`, below), facts from patterns between consecutive mentions (`relations`), then
weaker co-occurrence links as inferred `associated_with` facts below the review threshold.
Precision matters more than volume: a wrong canon fact in an NPC's memory is worse than a
missing one.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence, Set
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from glyphoxa_pipelines.memory.ids import slugify
from glyphoxa_pipelines.memory.models import ENTITY_TYPES, Entity, Entry, Relationship
from glyphoxa_pipelines.processing.extraction.addressee import dm_addressees, party_entity
from glyphoxa_pipelines.processing.extraction.candidates import (
    Candidate,
    add_parse_evidence,
    choose_type,
    gather_candidates,
    merge_name_parts,
    name_by_head_noun,
)
from glyphoxa_pipelines.processing.extraction.characters import (
    Cast,
    player_entities,
    read_cast,
)
from glyphoxa_pipelines.processing.extraction.coreference import (
    THE_PARTY,
    party_they,
    party_we,
    third_person_antecedents,
)
from glyphoxa_pipelines.processing.extraction.descriptions import description_antecedents
from glyphoxa_pipelines.processing.extraction.epithets import fold_epithets
from glyphoxa_pipelines.processing.extraction.name_spans import (
    Sentence,
    WordStats,
    scan_spans,
)
from glyphoxa_pipelines.processing.extraction.nlp import ParsedSentences, known_names_ruler
from glyphoxa_pipelines.processing.extraction.quote_speaker import quote_speakers
from glyphoxa_pipelines.processing.extraction.relations import (
    Fact,
    base_confidence,
    merge_facts,
    pattern_facts,
)
from glyphoxa_pipelines.processing.extraction.resolution import (
    EntityResolver,
    Resolution,
    name_key,
    split_descriptor,
)
from glyphoxa_pipelines.processing.extraction.results import (
    EXTRACTOR_VERSION,
    ExtractionResult,
)
from glyphoxa_pipelines.processing.extraction.roles import role_facts
from glyphoxa_pipelines.processing.extraction.self_naming import introduction_facts
from glyphoxa_pipelines.processing.extraction.story import story_sentences
from glyphoxa_pipelines.processing.extraction.svo import Speakers, svo_facts
from glyphoxa_pipelines.processing.extraction.vocabulary import NOUN_TYPES
from glyphoxa_pipelines.processing.extraction.where_clause import where_facts
from glyphoxa_pipelines.processing.mentions import MentionFinder

if TYPE_CHECKING:
    from glyphoxa_pipelines.providers.embeddings import Embedder



def extract_knowledge(
    entries: Sequence[Entry],
    existing: Iterable[Entity] = (),
    *,
    campaign_id: str | None = None,
    session_id: str | None = None,
    review_threshold: float = 0.7,
    embedder: Embedder | None = None,
    min_mentions: int = 2,
    min_cooccurrence: int = 3,
    max_cooccurrence_facts: int = 40,
    exclude_names: Iterable[str] = (),
) -> ExtractionResult:
    """Entities and facts one session states, resolved against `existing` entities.

    Speaker names of the people at the table (players, DM) are never extracted as in-world
    entities; NPC speakers (role `npc`, voiced by Glyphoxa) are characters of the world and
    are. Add more out-of-world names through `exclude_names`. Facts get status `canon` at or
    above `review_threshold`, `pending` (DM review) below it.
    """
    entries = list(entries)
    existing = list(existing)
    if not entries:
        return ExtractionResult([], [], [])
    campaign_id = campaign_id or entries[0].campaign_id
    session_id = session_id or entries[0].session_id
    resolver = EntityResolver(existing, embedder=embedder)
    excluded = _out_of_world_names(entries, exclude_names)
    known = [(n, e.type) for e in existing for n in [e.name, *e.aliases]]

    sentences = story_sentences(entries, world_names=[n for n, _ in known])
    parsed = ParsedSentences([s.text for s in sentences], known_names_ruler(known))
    spans = scan_spans(sentences, WordStats(sentences))
    candidates = gather_candidates(sentences, spans, excluded)
    add_parse_evidence(candidates, spans, parsed)
    merged_into = merge_name_parts(candidates, resolver)
    name_by_head_noun(candidates, merged_into, resolver)
    fold_epithets(sentences, spans, candidates, merged_into, resolver)
    cast = read_cast(entries, excluded)

    rule = _KeepRule(min_mentions, excluded, cast)
    found = _SessionEntities(existing, campaign_id, session_id, resolver, cast)
    found.resolve_or_create(candidates, merged_into, rule)

    entities = found.all_entities()
    mentions = _SentenceMentions(sentences, entities, found.new_aliases, excluded)
    speakers = _speakers(entries, sentences, mentions.spans, cast, entities)
    mentions.read_facts(sentences, parsed, entities, speakers)
    mentions.facts += introduction_facts(entries, sentences, mentions.spans, cast, entities)
    relationships = merge_facts(mentions.facts, campaign_id, session_id, review_threshold)
    relationships += _cooccurrence_facts(
        mentions,
        relationships,
        campaign_id,
        session_id,
        review_threshold,
        min_cooccurrence=min_cooccurrence,
        limit=max_cooccurrence_facts,
    )
    return ExtractionResult(
        entities=list(found.new_entities.values()),
        relationships=relationships,
        resolutions=found.resolutions,
        mention_counts=dict(mentions.counts),
        new_aliases={k: v for k, v in found.new_aliases.items() if v},
    )


def _speakers(
    entries: list[Entry],
    sentences: list[Sentence],
    spans: list[list[tuple[int, int, str]]],
    cast: Cast,
    entities: dict[str, Entity],
) -> list[Speakers]:
    """Per sentence, the entities "I" (a player's own character, see `characters`) and the
    DM's "you" (`addressee`) stand for."""
    by_key = player_entities(entities)
    yous = dm_addressees(entries, sentences, spans, cast, entities)
    party = party_entity(entities)
    out = []
    for s, you in zip(sentences, yous, strict=True):
        entry = s.entry
        me = None
        if entry.speaker_role == "player" and not s.quoted:
            me = by_key.get(cast.character_of(entry.speaker_name) or "")
        # the DM's narration names the party ("the party was sent to ..."); only sentences
        # that say so are parsed for it
        told = (party if party and entry.speaker_role == "dm" and not s.quoted
                and THE_PARTY.search(s.text) else None)
        out.append(Speakers(me, you.entity, you_reading=you.reading or "speaker", party=told,
                            we=party_we(s, me, party)))
    return out


def _out_of_world_names(entries: list[Entry], exclude_names: Iterable[str]) -> set[str]:
    """Name keys of the people at the table: every speaker but an NPC's voice, plus extras."""
    excluded = {name_key(n) for n in exclude_names}
    for e in entries:
        if e.speaker_role == "npc":  # an NPC's voice line: the speaker is in the world
            continue
        for part in re.split(r"\s*(?:,|&|\band\b)\s*", e.speaker_name):
            if part.strip():
                excluded.add(name_key(part))
    return excluded


def _alias_form(form: str) -> bool:
    """A possessive ("Trinket's") is a way of writing a mention, not another name."""
    return not re.search(r"['’]s?$", form)


def _common_word(key: str) -> bool:
    from wordfreq import zipf_frequency  # loads its word lists: only when a name needs it

    return " " not in key and zipf_frequency(key, "en") >= 4.0


@dataclass(frozen=True, slots=True)
class _KeepRule:
    """Which candidates the graph does not know become new entities, and as what."""

    min_mentions: int
    excluded: Set[str]
    cast: Cast

    def kind(self, k: str, c: Candidate, kind: str | None) -> str | None:
        """The type a candidate not in the graph is created with, or None to drop it."""
        if any(part in self.excluded for part in k.split()):
            return None  # "Ashley Johnson", "Matthew Mercer": the cast by their full names
        if any(_player_of(self.cast, f) for f in [k, *c.forms]):
            return "player"  # answered to at the table by one player: their character
        if kind in (None, "npc") and k in self.cast.unplaced:
            return "player"  # said in one breath with the party's characters
        strong = bool(c.type_votes) and c.type_votes.most_common(1)[0][1] >= 1.5
        # once is enough for a place or people the DM names with a cue ("Kima of Vord"), and
        # for a person the story introduces by kin or standing ("his uncle Kevdak")
        once_ok = strong and c.by_dm and (
            kind in ("location", "faction") or (kind == "npc" and c.introduced > 0))
        if c.mentions < self.min_mentions and not c.explicit and not once_ok:
            return None
        if c.mechanic and c.mechanic >= 0.3 * c.mentions:
            return None  # "I cast Stoneskin", "my Sneak Attack damage"
        if len(k.split()) == 1 and any(k in nouns for nouns, _ in NOUN_TYPES):
            return None  # "Council", "Brotherhood": a capitalized common noun, not a name
        if not c.by_dm:
            return None  # never in the DM's story: table talk (films, streamers, jokes)
        if c.parsed and 2 * c.nominal < c.parsed and not c.explicit:
            return None  # "Oof", "Blazing": capitalized, but the parser reads a word
        if c.ner and set(c.ner) <= _NOT_NAME_LABELS and not _cued(c, kind):
            return None  # "Tuesday", "Three", "Persian": a date, a number, a nationality
        if kind is None:
            if c.mentions < max(3, self.min_mentions) or _common_word(k):
                return None  # "Role", "News": capitalized words with no sign of being names
            if c.ner and set(c.ner) <= _BRAND_LABELS:
                return None  # no cue, and the parser reads a brand or a title: "Cthulhu"
            kind = "npc"
        elif not strong and _common_word(k):
            return None
        return kind if len(k) >= 3 else None


_CUED = 3.0


def _cued(c: Candidate, kind: str | None) -> bool:
    """The story's own cues outweigh the tagger's label: "Sarenrae, the goddess of healing"
    and "the Air Tribe of the Ashari people", said more than once, are names although the
    small English model tags the unknown words as a date and a law."""
    return kind is not None and c.type_votes[kind] >= _CUED


def _player_of(cast: Cast, form: str) -> str | None:
    """The player of a character's name or of its full form: "Grog Strongjaw" and
    "Vax'ildan" when the table calls them "Grog" and "Vax"."""
    first = re.split(r"[\s'’]", form.strip(), maxsplit=1)[0]
    return cast.played_by.get(name_key(form)) or cast.played_by.get(name_key(first))


_BRAND_LABELS = frozenset("ORG PRODUCT WORK_OF_ART EVENT".split())
_NOT_NAME_LABELS = frozenset(
    "DATE TIME CARDINAL ORDINAL MONEY QUANTITY PERCENT NORP LANGUAGE LAW".split()
)


class _SessionEntities:
    """Candidates resolved to graph entities (their new spellings become aliases) or created."""

    def __init__(
        self,
        existing: list[Entity],
        campaign_id: str,
        session_id: str,
        resolver: EntityResolver,
        cast: Cast,
    ) -> None:
        self.existing = existing
        self.cast = cast
        self.campaign_id = campaign_id
        self.session_id = session_id
        self.resolver = resolver
        self.new_entities: dict[str, Entity] = {}
        self.resolutions: list[Resolution] = []
        self.new_aliases: dict[str, list[str]] = defaultdict(list)
        self.taken_ids = {e.id for e in existing}

    def all_entities(self) -> dict[str, Entity]:
        return {**{e.id: e for e in self.existing}, **self.new_entities}

    def resolve_or_create(
        self, candidates: dict[str, Candidate], merged_into: dict[str, str], rule: _KeepRule
    ) -> None:
        """Most mentioned first, so a frequent name claims its id before a rare look-alike."""
        resolver = self.resolver
        ordered = [
            (k, c, choose_type(c))
            for k, c in sorted(candidates.items(), key=lambda kv: -kv[1].mentions)
            if k not in merged_into
        ]
        if resolver.embedder is not None:  # one batch for every name that may need it
            resolver.prime([c.name for k, c, kind in ordered if rule.kind(k, c, kind)])
        for k, c, kind in ordered:
            surface_forms = [f for f, _ in c.forms.most_common()]
            hit = resolver.resolve(c.name, kind, use_embedding=False)
            if hit is None:
                for form in surface_forms:
                    if hit := resolver.resolve(form, kind, use_embedding=False):
                        break
            kept = rule.kind(k, c, kind) if hit is None else kind
            if hit is None and kept is not None and resolver.embedder is not None:
                hit = resolver.resolve(c.name, kept)
            if hit is not None:
                self._matched(hit, surface_forms)
            elif kept is not None:
                self._create(k, c, kept, surface_forms)

    def _matched(self, hit: Resolution, surface_forms: list[str]) -> None:
        """Record the match; spellings the entity does not have yet become its aliases."""
        self.resolutions.append(hit)
        entity = self.resolver.entities[hit.entity_id]
        known = {name_key(n) for n in [entity.name, *entity.aliases]}
        for form in surface_forms:
            _, title, core = split_descriptor(form)
            for alias in (core,) if title else (form, core):
                if name_key(alias) in known or not alias[:1].isupper() or not _alias_form(alias):
                    continue
                known.add(name_key(alias))
                if hit.entity_id in self.new_entities:
                    ent = self.new_entities[hit.entity_id]
                    self.new_entities[hit.entity_id] = replace(ent, aliases=[*ent.aliases, alias])
                else:
                    self.new_aliases[hit.entity_id].append(alias)
                self.resolver.add_alias(hit.entity_id, alias)

    def _create(self, k: str, c: Candidate, kind: str, surface_forms: list[str]) -> None:
        base = slugify(c.name)
        entity_id, n = base, 2
        while entity_id in self.taken_ids:
            entity_id, n = f"{base}-{n}", n + 1
        self.taken_ids.add(entity_id)
        aliases: list[str] = []
        for form in surface_forms:
            _, title, core = split_descriptor(form)
            form = core if title else form  # "King Murghol": the title goes to attributes
            if name_key(form) != k and form not in aliases and _alias_form(form):
                aliases.append(form)
        attributes: dict[str, Any] = {"mentions": c.mentions}
        if kind == "player":
            player = next(filter(None, (_player_of(self.cast, f) for f in [k, *c.forms])), None)
            if player:
                attributes["played_by"] = player
        if c.descriptions:
            attributes["description"] = c.descriptions.most_common(1)[0][0]
        titles = {split_descriptor(f)[1] for f in surface_forms} - {""}
        if titles:
            attributes["title"] = sorted(titles)[0]
        entity = Entity(
            campaign_id=self.campaign_id,
            id=entity_id,
            type=kind if kind in ENTITY_TYPES else "concept",
            name=c.name,
            aliases=aliases,
            attributes=attributes,
            provenance="extracted",
            session_id=self.session_id,
            extractor_version=EXTRACTOR_VERSION,
        )
        self.new_entities[entity_id] = entity
        self.resolver.add(entity)
        self.resolutions.append(Resolution(c.name, entity_id, "new", 1.0, False))


class _SentenceMentions:
    """Every sentence scanned for the entities it mentions: pattern facts, mention counts and
    which pairs of entities share sentences."""

    def __init__(
        self,
        sentences: list[Sentence],
        entities: dict[str, Entity],
        new_aliases: dict[str, list[str]],
        excluded: set[str],
    ) -> None:
        finder = MentionFinder()
        for entity in entities.values():
            for name in [entity.name, *entity.aliases, *new_aliases.get(entity.id, [])]:
                if name_key(name) not in excluded and len(name) >= 3:
                    finder.add(name, [entity.id])
        self.facts: list[Fact] = []
        self.counts: Counter[str] = Counter()
        self.pair_counts: Counter[tuple[str, str]] = Counter()
        self.pair_evidence: dict[tuple[str, str], Sentence] = {}
        self.spans: list[list[tuple[int, int, str]]] = []
        for s in sentences:
            # one id per span (an ambiguous alias mentions nobody for fact purposes)
            by_span: dict[tuple[int, int], list[str]] = defaultdict(list)
            for m in finder.find(s.text):
                by_span[(m.start, m.end)].append(m.entity_id)
            spans = [(a, b, ids[0]) for (a, b), ids in sorted(by_span.items()) if len(ids) == 1]
            self.spans.append(spans)
            for _, _, eid in spans:
                self.counts[eid] += 1
            self.facts += pattern_facts(s, spans, entities)
            ids_here = sorted({eid for _, _, eid in spans})
            for i, a in enumerate(ids_here):
                for b in ids_here[i + 1 :]:
                    self.pair_counts[(a, b)] += 1
                    self.pair_evidence.setdefault((a, b), s)


    def read_facts(
        self,
        sentences: list[Sentence],
        parsed: ParsedSentences,
        entities: dict[str, Entity],
        speakers: list[Speakers],
    ) -> None:
        """Add the dependency parse's subject-verb-object facts of the sentences that could
        hold one: two mentions, or one and a pronoun with a referent ("I", "you", "she";
        only these are parsed)."""
        thirds = third_person_antecedents(sentences, self.spans, entities)
        quoting = quote_speakers(sentences, self.spans, entities)
        theys = party_they(sentences, self.spans, entities, party_entity(entities))
        described = description_antecedents(sentences, self.spans, entities)
        speakers = [
            replace(who, third=t, they=they, described=d) if q is None
            else replace(who, third=t, they=they, described=d, me=q, me_reading="quote")
            for who, t, q, they, d in zip(speakers, thirds, quoting, theys, described,
                                          strict=True)
        ]
        rows = [
            i
            for i, (spans, who) in enumerate(zip(self.spans, speakers, strict=True))
            if len(spans) + who.count() >= 2
        ]
        for i, doc in zip(rows, parsed.docs(rows), strict=True):
            self.facts += svo_facts(
                sentences[i], doc, self.spans[i], entities, speakers[i], base_confidence
            )
            self.facts += role_facts(
                sentences[i], doc, self.spans[i], entities, speakers[i], base_confidence
            )
            self.facts += where_facts(sentences[i], doc, self.spans[i], entities, base_confidence)


def _cooccurrence_facts(
    mentions: _SentenceMentions,
    stated: list[Relationship],
    campaign_id: str,
    session_id: str,
    review_threshold: float,
    *,
    min_cooccurrence: int,
    limit: int,
) -> list[Relationship]:
    """Inferred `associated_with` links between entities that often share a sentence and
    have no stated fact between them; confidence stays below 0.6 (review, never canon at the
    default threshold)."""
    related = {(r.source_id, r.target_id) for r in stated}
    related |= {(b, a) for a, b in related}
    co = [
        (p, n)
        for p, n in mentions.pair_counts.items()
        if n >= min_cooccurrence and p not in related
    ]
    co.sort(key=lambda pn: (-pn[1], pn[0]))
    out = []
    for (a, b), n in co[:limit]:
        s = mentions.pair_evidence[(a, b)]
        confidence = round(min(0.6, 0.3 + 0.04 * n), 3)
        out.append(
            Relationship(
                campaign_id=campaign_id,
                source_id=a,
                target_id=b,
                rel_type="associated_with",
                attributes={"cooccurrences": n},
                confidence=confidence,
                assertion="inferred",
                provenance="extracted",
                status="canon" if confidence >= review_threshold else "pending",
                session_id=session_id,
                observed_at=s.entry.spoken_at,
                valid_from=s.entry.spoken_at,
                evidence=s.text[:500],
                extractor_version=EXTRACTOR_VERSION,
            )
        )
    return out
