"""Knowledge extraction: entities and facts (L3) from a session's corrected transcript.

Offline default: a gazetteer of the campaign's known entities plus recurring proper-name spans
found in the transcript, typed by cue words ("the dwarven city of X", "a gnome cleric named X",
"Lord X", "X Tavern"), and relationships from high-precision surface patterns between two
mentions ("X is the leader of Y", "X killed Y", "X gave Y to Z", "X lives in Y"), with weaker
co-occurrence links as inferred `associated_with` facts below the review threshold. Precision
matters more than volume: a wrong canon fact in an NPC's memory is worse than a missing one.

Every surface form is resolved against the existing graph first (exact name/alias, stripped of
titles and descriptors, unique first/last name, phonetic similarity, optionally embedding
similarity), so "the old wizard Eldrinax" is the Eldrinax the DM already created.

With an LLM configured, `extract_knowledge_llm` asks for the same structure as JSON and runs
the answer through the same resolver and bookkeeping.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from glyphoxa_pipelines.memory.models import ENTITY_TYPES, Entity, Entry, Relationship
from glyphoxa_pipelines.processing.chunking import split_sentences
from glyphoxa_pipelines.processing.mentions import MentionFinder, name_tokens, normalize_name

if TYPE_CHECKING:
    from glyphoxa_pipelines.providers.embeddings import Embedder
    from glyphoxa_pipelines.providers.llm import ChatLLM

EXTRACTOR_VERSION = "patterns-v2"  # v2: NPC speakers are in-world
LLM_EXTRACTOR_VERSION = "llm-v1"

ResolutionMethod = Literal[
    "exact", "core", "name_part", "phonetic", "embedding", "session", "new"
]

# ------------------------------------------------------------------------------ vocabularies


def _words(text: str) -> list[str]:
    return text.split()


TITLES = frozenset(_words(
    "lord lady sir dame king queen prince princess duke duchess baron baroness count countess "
    "emperor empress captain commander general lieutenant sergeant arcanist archmage master "
    "mistress father mother brother sister elder chief chieftain high magister ironkeeper saint "
    "mister mr mrs ms miss dr doctor professor bishop cardinal priest priestess headmaster warden "
    "marshal sheriff mayor regent overlord"
))
NPC_NOUNS = frozenset(_words(
    "wizard mage sorcerer sorceress cleric paladin priest priestess king queen prince princess "
    "lord lady duke duchess baron knight captain guard guardsman merchant innkeeper bartender "
    "barkeep barmaid blacksmith smith man woman boy girl dwarf elf gnome halfling human orc half- "
    "elf half-orc dragonborn tiefling goliath warrior ranger rogue bard druid monk fighter "
    "barbarian warlock thief assassin soldier general noble nobleman noblewoman councilman "
    "councilwoman arcanist sage scholar hunter farmer child son daughter father mother brother "
    "sister uncle aunt cousin friend servant apprentice master leader chief chieftain elder witch "
    "necromancer gunslinger sorceror shopkeeper vendor trader alchemist healer scout spy "
    "mercenary captain's sailor pirate hermit oracle prophet seer herald steward butler maid "
    "emissary ambassador envoy advisor counselor guildmaster ironkeeper foreman miner worker "
    "dwarves elves gentleman lass lad fellow stranger traveler wanderer adventurer champion hero "
    "villain tyrant usurper regent mayor governor magistrate judge jailer warden"
))
CREATURE_NOUNS = frozenset(_words(
    "dragon bear wolf beast creature monster demon devil fiend horse cat dog hound spider troll "
    "ogre giant beholder owl hawk raven wyvern golem zombie skeleton vampire lich elemental worm "
    "serpent snake basilisk griffon hydra kraken boar panther tiger lion rat ooze umber hulk mind "
    "flayer ghoul ghost wraith specter spectre familiar pet mount steed"
))
LOCATION_NOUNS = frozenset(_words(
    "city town village hamlet kingdom empire realm land lands forest wood woods mountain "
    "mountains river lake sea ocean island isle keep castle fortress fort tower temple shrine "
    "cave caves cavern caverns mine mines tavern inn pub bar shop market district quarter road "
    "street gate gates bridge valley desert swamp marsh plains hills peak peaks citadel capital "
    "palace hall manor estate dungeon tomb crypt ruins camp port harbor harbour bay coast canyon "
    "pass quarry foundry forge square plaza library academy school prison jail arena pits pit "
    "sanctum chapel cathedral abbey monastery outpost garrison barracks stronghold spire vault "
    "grove glade highlands lowlands wastes plane continent country province region territory "
    "nation underdark depths tunnels well springs falls cliffs ridge"
))
FACTION_NOUNS = frozenset(_words(
    "council guild order clan house tribe church cult army legion brotherhood sisterhood company "
    "alliance court family circle syndicate crew gang band league conclave cabal coven consortium "
    "assembly senate watch guard guards knights rangers"
))
ITEM_NOUNS = frozenset(_words(
    "sword blade axe bow dagger staff wand ring amulet necklace cloak armor armour shield helm "
    "helmet crown orb tome book scroll gem key map potion hammer spear gun pistol rifle relic "
    "artifact earring earrings gauntlets gauntlet boots belt bracers circlet diadem chalice "
    "goblet lantern mirror idol statue talisman charm locket coin flute lute harp horn"
))
EVENT_NOUNS = frozenset(_words("battle war festival celebration siege ceremony massacre"))
LOCATION_PREFIXES = frozenset(_words("mount lake castle fort port isle river cape city"))
FACTION_PREFIXES = frozenset(_words("house clan order church cult tribe"))
NOUN_TYPES: list[tuple[frozenset[str], str]] = [
    (LOCATION_NOUNS, "location"),
    (FACTION_NOUNS, "faction"),
    (CREATURE_NOUNS, "creature"),
    (ITEM_NOUNS, "item"),
    (EVENT_NOUNS, "event"),
    (NPC_NOUNS, "npc"),
]

# Capitalized words that are not names (sentence furniture, table talk, game mechanics).
NOT_NAMES = frozenset(_words(
    "i i'm i'll i've i'd ok okay oh ah uh um hey yes yeah no nope yep so and but or if then the a "
    "an this that these those it it's he she they we you my your his her our their what who why "
    "where when how which well now right sure alright all any some monday tuesday wednesday "
    "thursday friday saturday sunday january february march april may june july august september "
    "october november december god gods dm gm npc npcs pc pcs d&d dungeons dragons dungeon nat "
    "natural ac hp dc xp str dex con int wis cha strength dexterity constitution intelligence "
    "wisdom charisma perception stealth insight investigation persuasion deception intimidation "
    "athletics acrobatics arcana history religion sleight survival medicine performance "
    "initiative advantage disadvantage edition pathfinder twitch youtube discord thanks thank "
    "please sorry hello hi bye goodbye mr mrs ms dr st mister sir lady lord ma'am madam miss guys "
    "everyone everybody english common dwarvish elvish draconic infernal celestial sylvan "
    "undercommon orcish gnomish abyssal primordial jesus christ geez gosh damn hell patreon "
    "geek sundry youtube twitter reddit twitch chatroom"
))
# Spells, class features and table jargon: capitalized at the table, never in-world entities.
MECHANICS = frozenset(
    " ".join(name_tokens(phrase))
    for phrase in re.split(
        ";",
        "hunter's mark;scorching ray;entangle;prestidigitation;magic missile;cure wounds;"
        "healing word;fireball;eldritch blast;sneak attack;thunderwave;shield;mage hand;"
        "minor illusion;vicious mockery;bless;sacred flame;guidance;thaumaturgy;lightning bolt;"
        "fog cloud;sleep;charm person;dispel magic;counterspell;misty step;hex;hold person;"
        "detect magic;identify;feather fall;bardic inspiration;rage;reckless attack;"
        "action surge;second wind;divine smite;lay on hands;wild shape;cunning action;"
        "uncanny dodge;speak with animals;polymorph;haste;invisibility;darkvision;"
        "spiritual weapon;guiding bolt;inflict wounds;shatter;web;moonbeam;faerie fire;"
        "thorn whip;produce flame;shillelagh;druidcraft;fire bolt;ray of frost;shocking grasp;"
        "burning hands;chromatic orb;witch bolt;dissonant whispers;tasha's hideous laughter;"
        "heroism;sanctuary;command;spare the dying;light;mending;message;true strike;"
        "booming blade;green-flame blade;hail of thorns;ensnaring strike;cordon of arrows;"
        "colossus slayer;favored enemy;natural explorer;primeval awareness;channel divinity;"
        "turn undead;critical role;geek and sundry;dungeons and dragons;dungeon master;"
        "game master;new york;los angeles;player's handbook;monster manual;"
        "dungeon master's guide;stoneskin;blur;daylight;dominate person;dominate monster;"
        "dominate;featherfall;firebolt;grasping vine;telekinesis;evasion;sharpshooter;"
        "great weapon master;anti-life shell;mirror image;spider climb;pass without trace;"
        "find familiar;mage armor;magic weapon;blink;fly;gaseous form;greater invisibility;"
        "dimension door;banishment;wall of stone;wall of fire;cone of cold;hunter's marked;"
        "sneak;mockery;silence;darkness;levitate;enlarge;reduce;knock;augury;aid;"
        "lesser restoration;greater restoration;revivify;raise dead;resurrection;sending;"
        "scrying;teleport;wish;cloudkill;conjure animals;call lightning;thunderous smite"
    )
)
_STOP_CONNECT = frozenset({"of", "the", "de", "von", "van", "du", "da", "la", "le"})
_DETERMINERS = frozenset({"the", "a", "an", "this", "that", "our", "your", "his", "her", "their"})

_TOKEN = re.compile(r"[A-Za-z0-9À-ÿ]+(?:['’\-][A-Za-z0-9À-ÿ]+)*|[^\sA-Za-z0-9À-ÿ]")
_CAP = re.compile(r"^[A-ZÀ-Ý][\w'’\-]*$")
_CAMEL = re.compile(r"[a-z][A-Z]")
_CAMEL_PREFIX = re.compile(r"^(?:Mc|Mac|De|Di|Du|La|Le|Van|Von)(?=[A-Z])")
_NEGATION = re.compile(r"\b(?:not|never|n't|no longer|didn't|doesn't|isn't|wasn't|won't)\b", re.I)


# ------------------------------------------------------------------------------ result types


@dataclass(frozen=True, slots=True)
class Resolution:
    """How one surface form was mapped to an entity (or created one)."""

    surface: str
    entity_id: str
    method: ResolutionMethod
    score: float
    existing: bool


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


@dataclass(frozen=True, slots=True)
class Contradiction:
    """`new` invalidates `old` (a functional relation changed, or an ally became an enemy)."""

    old: Relationship
    new: Relationship
    reason: str
    protected: bool  # old is DM-made or DM-confirmed: flag for review, never auto-invalidate


# ------------------------------------------------------------------------------ resolution


def slugify(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", normalize_name(name)).strip("-")
    return slug or "entity"


def split_descriptor(surface: str) -> tuple[str, str, str]:
    """("the old wizard Eldrinax") -> (descriptor "old wizard", title "", core "Eldrinax").

    Leading determiners and lower-case descriptor words are dropped, then honorific titles;
    what is left (capitalized words, possibly joined by "of") is the core name.
    """
    words = surface.strip().split()
    while words and words[0].lower() in _DETERMINERS:
        words = words[1:]
    descriptor: list[str] = []
    while words and not _CAP.match(words[0]) and len(words) > 1:
        descriptor.append(words.pop(0))
    title: list[str] = []
    while len(words) > 1 and words[0].lower().rstrip(".") in TITLES:
        title.append(words.pop(0))
    core = " ".join(words).strip(" ,.;:!?\"'")
    core = re.sub(r"['’]s$", "", core)
    return " ".join(descriptor), " ".join(title), core


def _key(text: str) -> str:
    return " ".join(name_tokens(text))


def _drop_apostrophes(text: str) -> str:
    return text.replace("'", "").replace("’", "")


def _metaphone(text: str) -> str:
    import jellyfish

    return jellyfish.metaphone(text.replace("'", "").replace("’", ""))


class EntityResolver:
    """Maps surface forms to known entities; knows new ones as soon as they are added."""

    def __init__(
        self,
        entities: Iterable[Entity] = (),
        *,
        embedder: Embedder | None = None,
        phonetic_threshold: float = 0.9,
        embedding_threshold: float = 0.88,
    ) -> None:
        self.entities: dict[str, Entity] = {}
        self._by_key: dict[str, set[str]] = defaultdict(set)
        self._by_part: dict[str, set[str]] = defaultdict(set)
        self._by_surname: dict[str, set[str]] = defaultdict(set)
        self._keys: list[str] = []
        self._key_ids: list[str] = []
        self.embedder = embedder
        self.phonetic_threshold = phonetic_threshold
        self.embedding_threshold = embedding_threshold
        self._emb_cache: tuple[int, np.ndarray] | None = None
        self._query_vecs: dict[str, np.ndarray] = {}
        for entity in entities:
            self.add(entity)
        # embedding similarity compares against the graph the resolver was built with: one
        # batch per session; duplicates within a session are caught by the cheaper checks
        self._embedded_keys = len(self._keys)

    def add(self, entity: Entity) -> None:
        self.entities[entity.id] = entity
        for name in [entity.name, *entity.aliases]:
            for form in {name, split_descriptor(name)[2]}:
                key = _key(form)
                if not key:
                    continue
                if entity.id not in self._by_key[key]:
                    self._by_key[key].add(entity.id)
                    self._keys.append(key)
                    self._key_ids.append(entity.id)
        if entity.type in ("npc", "player", "creature"):
            parts = [p for p in name_tokens(split_descriptor(entity.name)[2]) if len(p) >= 3]
            if len(parts) > 1:
                self._by_part[parts[0]].add(entity.id)  # "Nostoc" for Nostoc Greyspine
                self._by_surname[parts[-1]].add(entity.id)  # "Lord Greyspine" only

    def add_alias(self, entity_id: str, alias: str) -> None:
        key = _key(alias)
        if key and entity_id not in self._by_key[key]:
            self._by_key[key].add(entity_id)
            self._keys.append(key)
            self._key_ids.append(entity_id)

    def _unique(self, ids: set[str] | None, type_hint: str | None) -> str | None:
        if not ids:
            return None
        if len(ids) > 1 and type_hint:
            typed = {i for i in ids if self.entities[i].type == type_hint}
            ids = typed or ids
        return next(iter(ids)) if len(ids) == 1 else None

    def prime(self, names: Iterable[str]) -> None:
        """Embed many query names in one batch ahead of `resolve` (embedding step only)."""
        if self.embedder is None:
            return
        todo = list(dict.fromkeys(
            core.lower() for n in names if (core := split_descriptor(n)[2] or n.strip())
        ))
        todo = [t for t in todo if t not in self._query_vecs]
        if todo:
            self._query_vecs.update(zip(todo, self.embedder.embed(todo), strict=True))

    def resolve(
        self, surface: str, type_hint: str | None = None, *, use_embedding: bool = True
    ) -> Resolution | None:
        """The entity `surface` names, or None when nothing matches confidently.

        Cheap matches first (exact, stripped core, name part, phonetic); embedding similarity
        only when `use_embedding` and an embedder is set.
        """
        full = _key(surface)
        if not full:
            return None
        if found := self._unique(self._by_key.get(full), type_hint):
            return Resolution(surface, found, "exact", 1.0, True)
        _, _, core = split_descriptor(surface)
        core_key = _key(core)
        if core_key and core_key != full and (
            found := self._unique(self._by_key.get(core_key), type_hint)
        ):
            return Resolution(surface, found, "core", 0.97, True)
        parts = core_key.split()
        if len(parts) == 1 and len(parts[0]) >= 3:
            # a given name alone, or a surname with a title ("Lord Greyspine"); a bare surname
            # is too often a family, a house or a place ("Keyleth Kraghammer" vs Kraghammer)
            titled = bool(split_descriptor(surface)[1])
            found = self._unique(self._by_part.get(parts[0]), type_hint)
            if found is None and titled:
                found = self._unique(self._by_surname.get(parts[0]), type_hint)
            if found:
                return Resolution(surface, found, "name_part", 0.9, True)
        if core_key and len(core_key) >= 4 and (hit := self._phonetic(core_key, type_hint)):
            return Resolution(surface, hit[0], "phonetic", hit[1], True)
        if (
            use_embedding
            and self.embedder is not None
            and core
            and (hit := self._embedding(core, type_hint))
        ):
            return Resolution(surface, hit[0], "embedding", hit[1], True)
        return None

    def _phonetic(self, key: str, type_hint: str | None) -> tuple[str, float] | None:
        """Jaro-Winkler over all known keys (rapidfuzz, C speed) gated by equal metaphone."""
        if not self._keys:
            return None
        from rapidfuzz import process
        from rapidfuzz.distance import JaroWinkler

        hits = process.extract(
            key,
            self._keys,
            scorer=JaroWinkler.normalized_similarity,
            processor=_drop_apostrophes,
            score_cutoff=self.phonetic_threshold - 0.05,
            limit=5,
        )
        words = key.split()
        best: tuple[str, float] | None = None
        for candidate, score, idx in hits:
            entity_id = self._key_ids[idx]
            cand_words = candidate.split()
            if len(cand_words) != len(words):
                continue  # "Gradim Greyspine" is not "Nostoc Greyspine" with a typo
            pairs = [
                (a.replace("'", ""), b.replace("'", ""))
                for a, b in zip(words, cand_words, strict=True)
            ]  # "Tirex" vs "Ty'rex": apostrophes are spelling, not sound
            pair_scores = [JaroWinkler.normalized_similarity(a, b) for a, b in pairs]
            same_sound = all(_metaphone(a)[:4] == _metaphone(b)[:4] for a, b in pairs)
            worst = min(pair_scores)
            short = len(key) <= 5
            ok = (same_sound and worst >= self.phonetic_threshold - 0.05) or (
                not short and worst >= max(self.phonetic_threshold + 0.04, 0.94)
            )
            if ok and (best is None or score > best[1]):
                if type_hint and self.entities[entity_id].type not in (type_hint, "npc", "player"):
                    continue
                best = (entity_id, round(float(score), 3))
        return best

    def _embedding(self, core: str, type_hint: str | None) -> tuple[str, float] | None:
        """Cosine similarity of name embeddings, the last resort ("Pig Pits"/"the Pig Pits").

        The graph's keys are embedded once, in one batch, on first use.
        """
        assert self.embedder is not None
        if not self._embedded_keys:
            return None
        if self._emb_cache is None:
            keys = list(self._keys[: self._embedded_keys])
            self._emb_cache = (len(keys), self.embedder.embed(keys))
        matrix = self._emb_cache[1]
        query = core.lower()
        if query not in self._query_vecs:
            self._query_vecs[query] = self.embedder.embed([query])[0]
        vec = self._query_vecs[query]
        sims = matrix @ vec
        for idx in np.argsort(-sims)[:5]:
            if float(sims[idx]) < self.embedding_threshold:
                break
            entity_id = self._key_ids[int(idx)]
            if type_hint and self.entities[entity_id].type != type_hint:
                continue  # similar words, different kinds of thing
            return entity_id, round(float(sims[idx]), 3)
        return None


# ------------------------------------------------------------------------------ sentences


@dataclass(frozen=True, slots=True)
class _Sentence:
    entry: Entry
    text: str
    quoted: bool  # inside an NPC's quoted speech in a DM turn (may be a lie or a rumour)


_QUOTE_SPLIT = re.compile(r"(\"[^\"]*\"|“[^”]*”)")


def _sentences(entries: Sequence[Entry]) -> list[_Sentence]:
    out = []
    for entry in entries:
        for piece in _QUOTE_SPLIT.split(entry.text):
            if not piece.strip():
                continue
            quoted = piece[:1] in "\"“"
            body = piece.strip("\"“” ")
            for sentence in split_sentences(body):
                out.append(_Sentence(entry, sentence, quoted))
    return out


# ------------------------------------------------------------------------------ name spans


@dataclass(slots=True)
class _Candidate:
    name: str  # core name, as most often written
    forms: Counter[str] = field(default_factory=Counter)  # surface forms incl. titles
    mentions: int = 0
    type_votes: Counter[str] = field(default_factory=Counter)
    descriptions: Counter[str] = field(default_factory=Counter)
    first: Entry | None = None
    explicit: bool = False  # introduced by a naming pattern ("named X", "Lord X")
    locative: int = 0  # mentions after "in", "into", "near", ...
    mechanic: int = 0  # mentions after "cast", before "spell", ...: game rules, not the world
    by_dm: int = 0  # mentions in the DM's turns: in-world names are almost always voiced there
    speech: int = 0  # mentions followed by "says", "nods", ...


class _WordStats:
    """Per-session capitalization statistics: is "Pike" a name here or a word?"""

    def __init__(self, sentences: list[_Sentence]) -> None:
        self.cap_mid: Counter[str] = Counter()
        self.cap_start: Counter[str] = Counter()
        self.lower: Counter[str] = Counter()
        self.upper: Counter[str] = Counter()
        for s in sentences:
            tokens = [t for t in _TOKEN.findall(s.text) if t[0].isalnum()]
            for i, tok in enumerate(tokens):
                low = normalize_name(tok)
                if tok.isupper() and len(tok) > 1:
                    self.upper[low] += 1
                if tok[0].isupper():
                    (self.cap_start if i == 0 else self.cap_mid)[low] += 1
                else:
                    self.lower[low] += 1

    def is_name_word(self, token: str, sentence_start: bool) -> bool:
        from wordfreq import zipf_frequency

        low = normalize_name(token)
        if low in NOT_NAMES or not token[0].isupper() or low.isdigit() or len(low) < 2:
            return False
        mixed = self.cap_mid[low] + self.cap_start[low] - self.upper[low]
        if token.isupper() and mixed <= 0:
            return False  # only ever shouted or an acronym: TPK, RPG, SFX
        if _CAMEL.search(_CAMEL_PREFIX.sub("", token)):
            return False  # chat handles and brands: CheeseBug, AllWorkNoPlay
        base = re.sub(r"['’]s$", "", low)
        if token.isupper() and len(token) > 1 and base in {"matt", "dm"}:
            return False
        mid, lower = self.cap_mid[low], self.lower[low]
        if lower > 0.25 * (mid + self.cap_start[low]):
            return False  # mostly written in lower case: an ordinary word
        zipf = zipf_frequency(base, "en")
        if sentence_start and mid == 0:
            return zipf < 2.5
        return zipf < 5.0 or mid >= 3


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


_NAMED = re.compile(
    r"\b(?:a|an|the|one|some|his|her|their)\s+(?P<desc>(?:[a-z][\w'\-]*\s+){0,3}?[a-z][\w'\-]*)"
    r",?\s+(?:named|called|known as|by the name of)\s+$"
)
_DESCRIPTOR_BEFORE = re.compile(
    r"\b(?:the|a|an|old|young|our|your|his|her)\s+(?P<desc>(?:[a-z][\w'\-]*\s+){0,2}?"
    r"[a-z][\w'\-]*)\s+$"
)
_OF_BEFORE = re.compile(
    r"\b(?P<noun>[a-z][\w'\-]*)\s+of\s+(?:the\s+)?$"
)  # "the city of X", "the house of X"
_INSIDE_OF = frozenset(_words("heart middle center centre outskirts streets edge depths ruins"))
_TITLED_OF = re.compile(
    r"\b(?:" + "|".join(sorted(TITLES)) + r")\s+[A-Z][\w'’\-]*(?:\s+[A-Z][\w'’\-]*)?\s+of\s+$",
    re.I,
)  # "Lady Kima of X": X is a place  # "the city of X", "the house of X"
_APPOSITIVE_AFTER = re.compile(
    r"^\s*,\s+(?:the|a|an)\s+(?P<desc>(?:[\w'\-]+\s+){0,3}?[a-z][\w'\-]*)\b"
)
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
_SPEECH_AFTER = re.compile(
    r"^\s+(?:says|said|goes|asks|asked|replies|replied|nods|smiles|looks|turns|tells|told|"
    r"shouts|whispers|grins|laughs|sighs|walks|stands|leans|points)\b"
)


_HEAD_NOUNS = LOCATION_NOUNS | FACTION_NOUNS | ITEM_NOUNS


def _head_noun_run_ends(tokens: list[tuple[str, int, int]], j: int) -> bool:
    """Whether tokens[j:] continue a run of capitalized words that ends in a head noun."""
    while j < len(tokens) and tokens[j][0][:1].isupper():
        if tokens[j][0].lower() in _HEAD_NOUNS and (
            j + 1 >= len(tokens) or not tokens[j + 1][0][:1].isupper()
        ):
            return True
        j += 1
    return False


def _scan_spans(sentences: list[_Sentence], stats: _WordStats) -> list[tuple[int, int, int, str]]:
    """(sentence index, start, end, surface) of proper-name spans in every sentence."""
    spans = []
    for si, s in enumerate(sentences):
        text = s.text
        tokens = [(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(text)]
        i = 0
        word_index = 0
        while i < len(tokens):
            tok, start, _ = tokens[i]
            if not tok[0].isalnum():
                i += 1
                continue
            sentence_start = word_index == 0
            word_index += 1
            is_title = tok[0].isupper() and (
                tok.lower().rstrip(".") in TITLES
                or (
                    tok.lower() in FACTION_PREFIXES | LOCATION_PREFIXES
                    and i + 1 < len(tokens)
                    and stats.is_name_word(tokens[i + 1][0], False)
                )
            )
            head_run = (
                not sentence_start
                and tok[0].isupper()
                and normalize_name(tok) not in NOT_NAMES
                and _head_noun_run_ends(tokens, i + 1)
            )
            if not (is_title or head_run or stats.is_name_word(tok, sentence_start)):
                i += 1
                continue
            j = i + 1
            end = tokens[i][2]
            last_good = i
            while j < len(tokens):
                t = tokens[j][0]
                if t[0].isupper() and (stats.is_name_word(t, False) or t.lower() in TITLES):
                    last_good, end = j, tokens[j][2]
                    j += 1
                elif t[0].isupper() and _head_noun_run_ends(tokens, j):
                    last_good, end = j, tokens[j][2]  # "Iron Hearth Tavern": common words
                    j += 1
                else:
                    break  # never across "of": "Kima of Vord" is Kima, then Vord
            first = tokens[i][0]
            span_tokens = [tokens[k][0] for k in range(i, last_good + 1)]
            if len(span_tokens) == 1 and is_title and not stats.is_name_word(first, sentence_start):
                i = last_good + 1
                continue
            spans.append((si, start, end, text[start:end]))
            word_index += last_good - i
            i = last_good + 1
    return spans


def _of_parts(surface: str) -> tuple[str, str] | None:
    """("Kima of Vord") -> ("Kima", "Vord") when the span is "A of (the) B"."""
    m = re.match(r"^(?P<a>.+?)\s+of\s+(?:the\s+)?(?P<b>[A-ZÀ-Ý].*)$", surface)
    return (m.group("a"), m.group("b")) if m else None


# ------------------------------------------------------------------------------ relations

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
    **{w: ("leader_of", False) for w in _words(
        "leader head ruler king queen lord lady chief chieftain captain commander general master "
        "mistress mayor governor emperor empress prince princess duke duchess baron baroness "
        "regent headmaster guildmaster boss overlord owner proprietor keeper ironkeeper founder "
        "high priest priestess archmage steward warden sheriff"
    )},
    **{w: ("member_of", False) for w in _words(
        "member members agent agents soldier soldiers knight knights guard guards servant spy "
        "envoy emissary ambassador arcanist councilman councilwoman councillor representative "
        "champion paladin cleric"
    )},
    **{w: ("parent_of", True) for w in _words("son daughter child heir")},
    **{w: ("parent_of", False) for w in _words("father mother parent")},
    **{w: ("sibling_of", False) for w in _words("brother sister sibling twin")},
    **{w: ("spouse_of", False) for w in _words("wife husband spouse consort")},
    **{w: ("friend_of", False) for w in _words("friend ally companion")},
    **{w: ("enemy_of", False) for w in _words("enemy nemesis rival foe")},
    **{w: ("mentor_of", False) for w in _words("mentor teacher")},
    **{w: ("mentor_of", True) for w in _words("apprentice student pupil")},
    **{w: ("located_in", False) for w in _words("capital")},
}
POSSESSIVE_ROLES: dict[str, tuple[str, bool]] = {  # "A's ROLE B": B is A's ROLE
    **{w: ("parent_of", False) for w in _words("son daughter child")},
    **{w: ("parent_of", True) for w in _words("father mother dad mom")},
    **{w: ("sibling_of", False) for w in _words("brother sister sibling twin")},
    **{w: ("spouse_of", False) for w in _words("wife husband")},
    **{w: ("friend_of", False) for w in _words("friend companion ally")},
    **{w: ("serves", True) for w in _words("servant bodyguard guard apprentice")},
    **{w: ("enemy_of", False) for w in _words("enemy nemesis rival")},
    **{w: ("owns", False) for w in _words("pet companion mount familiar")},
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


def _type_ok(rel_type: str, source: Entity, target: Entity) -> bool:
    if source.id == target.id:
        return False
    src_ok = rel_type not in SOURCE_TYPES or source.type in SOURCE_TYPES[rel_type]
    tgt_ok = rel_type not in TARGET_TYPES or target.type in TARGET_TYPES[rel_type]
    return src_ok and tgt_ok


@dataclass(slots=True)
class _Fact:
    source: str
    target: str
    rel_type: str
    confidence: float
    assertion: Literal["stated", "inferred"]
    evidence: str
    entry: Entry
    attributes: dict[str, Any] = field(default_factory=dict)


def _base_confidence(sentence: _Sentence) -> float:
    """Narration by the DM is the most reliable; quoted NPC speech and table talk less so."""
    if sentence.entry.speaker_role == "dm":
        return 0.78 if sentence.quoted else 0.88
    return 0.74


# ------------------------------------------------------------------------------ extraction


def _common_word(key: str) -> bool:
    from wordfreq import zipf_frequency

    return " " not in key and zipf_frequency(key, "en") >= 4.0


def _choose_type(c: _Candidate) -> str | None:
    """Strong cues (titles, head nouns, "named X") decide; weak context only as a tie-break.

    A name that is merely often preceded by "in"/"into" becomes a place only when that is
    what most of its mentions look like.
    """
    if c.type_votes:
        kind, votes = c.type_votes.most_common(1)[0]
        if votes >= 1.5:
            return kind
    if c.locative >= 2 and c.locative >= 0.4 * c.mentions:
        return "location"
    if c.speech >= 1:
        return "npc"
    return None


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
    are. Add more out-of-world names through `exclude_names`. Facts get status `canon` at or above
    `review_threshold`, `pending` (DM review) below it.
    """
    entries = list(entries)
    existing = list(existing)
    if not entries:
        return ExtractionResult([], [], [])
    campaign_id = campaign_id or entries[0].campaign_id
    session_id = session_id or entries[0].session_id
    resolver = EntityResolver(existing, embedder=embedder)
    excluded = {_key(n) for n in exclude_names}
    for e in entries:
        if e.speaker_role == "npc":  # an NPC's voice line: the speaker is in the world
            continue
        for part in re.split(r"\s*(?:,|&|\band\b)\s*", e.speaker_name):
            if part.strip():
                excluded.add(_key(part))

    sentences = _sentences(entries)
    stats = _WordStats(sentences)
    has_dm = any(e.speaker_role == "dm" for e in entries)
    spans = _scan_spans(sentences, stats)

    # 1. gather candidate names with type evidence from their contexts
    candidates: dict[str, _Candidate] = {}
    span_keys: list[tuple[int, int, int, str, str]] = []  # si, start, end, surface, cand key

    def candidate(core: str) -> _Candidate:
        k = _key(core)
        if core.isupper():  # "THUNDERBRAND" shouted: keep the written form seen elsewhere
            core = core.title()
        if k not in candidates:
            candidates[k] = _Candidate(name=core)
        return candidates[k]

    for si, start, end, surface in spans:
        s = sentences[si]
        descriptor, title, core = split_descriptor(surface)
        core_key = _key(core)
        if not core or core_key in excluded or core_key in NOT_NAMES or core_key in MECHANICS:
            continue
        if core_key in TITLES:
            continue
        if title and len(core.split()) == 1 and _key(core) in TITLES:
            continue
        of = _of_parts(core)
        c = candidate(core)
        c.forms[surface] += 1
        c.mentions += 1
        c.first = c.first or s.entry
        toks = surface.split()
        if kind := _span_type(toks):
            c.type_votes[kind] += 3
            if title:
                c.explicit = True
        if of and _key(split_descriptor(of[0])[2]) != _key(core):
            pass
        before, after = s.text[:start], s.text[end:]
        if m := _NAMED.search(before):
            c.explicit = True
            c.descriptions[m.group("desc")] += 1
            if kind := _noun_type(m.group("desc")):
                c.type_votes[kind] += 2
        elif _TITLED_OF.search(before):
            c.type_votes["location"] += 1.5
        elif m := _OF_BEFORE.search(before):
            noun = m.group("noun").lower()
            if noun in LOCATION_NOUNS or noun in _INSIDE_OF:
                c.type_votes["location"] += 2
                if noun in LOCATION_NOUNS:  # "the city of X"; not "the heart of X"
                    c.descriptions[noun] += 1
            elif noun in FACTION_NOUNS:
                c.type_votes["faction"] += 2
        elif m := _DESCRIPTOR_BEFORE.search(before):
            desc = m.group("desc")
            if kind := _noun_type(desc.split()[-1]):
                c.type_votes[kind] += 2
                c.descriptions[desc] += 1
        if m := _APPOSITIVE_AFTER.match(after):
            desc = m.group("desc")
            if kind := _noun_type(desc.split()[0] if " of " in desc else desc):
                c.type_votes[kind] += 1.5
                c.descriptions[desc] += 1
        if _LOCATIVE_BEFORE.search(before):
            c.locative += 1
        if _MECHANIC_BEFORE.search(before) or _MECHANIC_AFTER.match(after):
            c.mechanic += 1
        if s.entry.speaker_role == "dm":
            c.by_dm += 1
        if _SPEECH_AFTER.match(after):
            c.speech += 1
        span_keys.append((si, start, end, surface, _key(core)))

    # 2. merge single-word candidates into the one multi-word name they are part of
    parts_index: dict[str, set[str]] = defaultdict(set)
    for k in candidates:
        words = k.split()
        if len(words) > 1 and " of " not in f" {k} ":
            for w in words:
                parts_index[w].add(k)
    merged_into: dict[str, str] = {}
    for k, c in candidates.items():
        words = k.split()
        if len(words) == 1 and len(k) >= 3 and "'" not in k:
            # "Vax" is short for "Vax'ildan"
            longer = [o for o in candidates if " " not in o and o.startswith(k + "'")]
            if len(longer) == 1 and resolver.resolve(c.name) is None:
                merged_into[k] = longer[0]
                continue
        parents = sorted(parts_index.get(k, ()), key=lambda o: -candidates[o].mentions)
        if len(words) == 1 and parents:
            target = parents[0]
            rest = sum(candidates[o].mentions for o in parents[1:])
            lead = candidates[target].mentions
            if len(parents) > 1 and (lead < 2 or lead <= 2 * rest):
                continue  # ambiguous: "Greyspine" of Nostoc or of Gradim?
            own, theirs = _choose_type(c), _choose_type(candidates[target])
            if own and own != "npc" and theirs != own:
                continue  # "Kraghammer" the city is not part of the joke "Tiberius Kraghammer"
            titled = any(split_descriptor(f)[1] for f in candidates[target].forms)
            if target.split()[0] != k and not titled:
                continue  # a given name stands for the person; a surname only if titled
            if resolver.resolve(c.name) is None:  # a known entity keeps its own identity
                merged_into[k] = target
    for k, target in merged_into.items():
        src, dst = candidates[k], candidates[target]
        dst.forms.update(src.forms)
        dst.mentions += src.mentions
        dst.type_votes.update(src.type_votes)
        dst.locative += src.locative
        dst.mechanic += src.mechanic
        dst.by_dm += src.by_dm
        dst.speech += src.speech
        dst.descriptions.update(src.descriptions)
        dst.explicit = dst.explicit or src.explicit

    # 3. resolve against the graph or create entities
    new_entities: dict[str, Entity] = {}
    resolutions: list[Resolution] = []
    key_to_id: dict[str, str] = {}
    new_aliases: dict[str, list[str]] = defaultdict(list)
    taken_ids = {e.id for e in existing}
    def keep(k: str, c: _Candidate, kind: str | None) -> str | None:
        """The type a candidate not in the graph is created with, or None to drop it."""
        if c.mentions < min_mentions and not c.explicit:
            return None
        if c.mechanic and c.mechanic >= 0.3 * c.mentions:
            return None  # "I cast Stoneskin", "my Sneak Attack damage"
        if len(k.split()) == 1 and any(k in nouns for nouns, _ in NOUN_TYPES):
            return None  # "Council", "Brotherhood": a capitalized common noun, not a name
        strong = bool(c.type_votes) and c.type_votes.most_common(1)[0][1] >= 1.5
        if has_dm and not c.by_dm and not c.explicit and not strong:
            return None  # never voiced by the DM, no cue: table talk (films, streamers, jokes)
        if kind is None:
            if c.mentions < max(3, min_mentions) or _common_word(k):
                return None  # "Role", "News": capitalized words with no sign of being names
            kind = "npc"
        return kind if len(k) >= 3 else None

    ordered = [
        (k, c, _choose_type(c))
        for k, c in sorted(candidates.items(), key=lambda kv: -kv[1].mentions)
        if k not in merged_into
    ]
    if embedder is not None:  # one batch for every name that may need the embedding check
        resolver.prime([c.name for k, c, kind in ordered if keep(k, c, kind)])
    for k, c, kind in ordered:
        surface_forms = [f for f, _ in c.forms.most_common()]
        hit = resolver.resolve(c.name, kind, use_embedding=False)
        if hit is None:
            for form in surface_forms:
                if hit := resolver.resolve(form, kind, use_embedding=False):
                    break
        kept = keep(k, c, kind) if hit is None else kind
        if hit is None and kept is not None and embedder is not None:
            hit = resolver.resolve(c.name, kept)
        if hit is not None:
            key_to_id[k] = hit.entity_id
            resolutions.append(hit)
            entity = resolver.entities[hit.entity_id]
            known = {_key(n) for n in [entity.name, *entity.aliases]}
            for form in surface_forms:
                _, _, core = split_descriptor(form)
                for alias in (form, core):
                    if _key(alias) not in known and alias[:1].isupper():
                        known.add(_key(alias))
                        if hit.entity_id in new_entities:
                            ent = new_entities[hit.entity_id]
                            new_entities[hit.entity_id] = replace(
                                ent, aliases=[*ent.aliases, alias]
                            )
                        else:
                            new_aliases[hit.entity_id].append(alias)
                        resolver.add_alias(hit.entity_id, alias)
            continue
        if kept is None:
            continue
        kind = kept
        base = slugify(c.name)
        entity_id, n = base, 2
        while entity_id in taken_ids:
            entity_id, n = f"{base}-{n}", n + 1
        taken_ids.add(entity_id)
        aliases = []
        for form in surface_forms:
            if _key(form) != k and form not in aliases:
                aliases.append(form)
        attributes: dict[str, Any] = {"mentions": c.mentions}
        if c.descriptions:
            attributes["description"] = c.descriptions.most_common(1)[0][0]
        titles = {split_descriptor(f)[1] for f in surface_forms} - {""}
        if titles:
            attributes["title"] = sorted(titles)[0]
        entity = Entity(
            campaign_id=campaign_id,
            id=entity_id,
            type=kind if kind in ENTITY_TYPES else "concept",
            name=c.name,
            aliases=aliases,
            attributes=attributes,
            provenance="extracted",
            session_id=session_id,
            extractor_version=EXTRACTOR_VERSION,
        )
        new_entities[entity_id] = entity
        resolver.add(entity)
        key_to_id[k] = entity_id
        resolutions.append(Resolution(c.name, entity_id, "new", 1.0, False))
    for k, target in merged_into.items():
        if target in key_to_id:
            key_to_id[k] = key_to_id[target]

    # 4. facts: patterns between consecutive mentions, then co-occurrence
    all_entities = {**{e.id: e for e in existing}, **new_entities}
    finder = MentionFinder()
    for entity in all_entities.values():
        for name in [entity.name, *entity.aliases, *new_aliases.get(entity.id, [])]:
            if _key(name) not in excluded and len(name) >= 3:
                finder.add(name, [entity.id])
    facts: list[_Fact] = []
    mention_counts: Counter[str] = Counter()
    pair_counts: Counter[tuple[str, str]] = Counter()
    pair_evidence: dict[tuple[str, str], _Sentence] = {}
    for s in sentences:
        mentions = [m for m in finder.find(s.text)]
        if not mentions:
            continue
        # one id per span (an ambiguous alias mentions nobody for fact purposes)
        by_span: dict[tuple[int, int], list[str]] = defaultdict(list)
        for m in mentions:
            by_span[(m.start, m.end)].append(m.entity_id)
        spans_here = [(a, b, ids[0]) for (a, b), ids in sorted(by_span.items()) if len(ids) == 1]
        for _, _, eid in spans_here:
            mention_counts[eid] += 1
        facts += _pattern_facts(s, spans_here, all_entities)
        ids_here = sorted({eid for _, _, eid in spans_here})
        for i, a in enumerate(ids_here):
            for b in ids_here[i + 1 :]:
                pair_counts[(a, b)] += 1
                pair_evidence.setdefault((a, b), s)

    relationships = _merge_facts(facts, campaign_id, session_id, review_threshold)
    related = {(r.source_id, r.target_id) for r in relationships}
    related |= {(b, a) for a, b in related}
    co = [(p, n) for p, n in pair_counts.items() if n >= min_cooccurrence and p not in related]
    co.sort(key=lambda pn: (-pn[1], pn[0]))
    for (a, b), n in co[:max_cooccurrence_facts]:
        s = pair_evidence[(a, b)]
        confidence = round(min(0.6, 0.3 + 0.04 * n), 3)
        relationships.append(
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
    return ExtractionResult(
        entities=list(new_entities.values()),
        relationships=relationships,
        resolutions=resolutions,
        mention_counts=dict(mention_counts),
        new_aliases={k: v for k, v in new_aliases.items() if v},
    )


_OF_LINK = re.compile(r"\s+of\s+(?:the\s+)?")


def _pattern_facts(
    s: _Sentence, spans: list[tuple[int, int, str]], entities: dict[str, Entity]
) -> list[_Fact]:
    """Facts stated between consecutive mentions of one sentence."""
    out: list[_Fact] = []
    text = s.text
    base = _base_confidence(s)
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
                out.append(_Fact(a, c, "gave_to", base, "stated", text, s.entry,
                                 {"item": eb.name, "item_id": b}))
                out.append(_Fact(c, b, "owns", base - 0.08, "inferred", text, s.entry))
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
                if _type_ok(rel_type, entities[src], entities[dst]):
                    out.append(_Fact(src, dst, rel_type, base - 0.03, "stated", text, s.entry,
                                     {"role": role}))
                continue
        if m := _ROLE_OF.match(between):
            role_words = m.group("role").lower().split()
            role = role_words[-1]
            if role in ROLE_TYPES and not _NEGATION.search(between):
                rel_type, reverse = ROLE_TYPES[role]
                src, dst = (b, a) if reverse else (a, b)
                appositive = between.lstrip().startswith(",")
                if _type_ok(rel_type, entities[src], entities[dst]):
                    out.append(_Fact(src, dst, rel_type, base - (0.05 if appositive else 0),
                                     "stated", text, s.entry, {"role": " ".join(role_words)}))
                continue
        # "Kima of Vord" inside one span was split by the finder into two mentions
        if _OF_LINK.fullmatch(between) and ea.type in ("npc", "player"):
            rel_type = "member_of" if eb.type == "faction" else "comes_from"
            if _type_ok(rel_type, ea, eb):
                out.append(_Fact(a, b, rel_type, base - 0.2, "inferred", text, s.entry))
            continue
        for regex, rel_type, reverse in _REL_PATTERNS:
            if regex.match(between):
                src, dst = (b, a) if reverse else (a, b)
                if _type_ok(rel_type, entities[src], entities[dst]):
                    out.append(_Fact(src, dst, rel_type, base, "stated", text, s.entry))
                break
    return out


def _merge_facts(
    facts: list[_Fact], campaign_id: str, session_id: str, threshold: float
) -> list[Relationship]:
    """One relationship per (source, type, target); repeated statements raise confidence."""
    grouped: dict[tuple[str, str, str], list[_Fact]] = defaultdict(list)
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


# ------------------------------------------------------------------------------ contradictions

# functional relations: a source has one current target (lives_in, located_in, ...), or a
# target has one current source (leader_of: a city has one ruler; owns: an item one owner)
FUNCTIONAL_BY_SOURCE = frozenset({"lives_in", "located_in", "member_of_exclusive", "comes_from"})
FUNCTIONAL_BY_TARGET = frozenset({"leader_of", "owns"})
EXCLUSIVE_PAIRS = {("allied_with", "enemy_of"), ("friend_of", "enemy_of")}


def contradictions(
    existing: Iterable[Relationship], new: Iterable[Relationship]
) -> list[Contradiction]:
    """Which current `existing` facts a `new` fact invalidates.

    A newer fact wins (by `observed_at`, then `valid_from`); already-invalidated facts are
    ignored. DM-made or DM-confirmed facts are reported with `protected=True`: the caller must
    route those to review instead of invalidating them.
    """
    current = [r for r in existing if r.invalidated_at is None and r.status != "rejected"]
    by_source: dict[tuple[str, str], list[Relationship]] = defaultdict(list)
    by_target: dict[tuple[str, str], list[Relationship]] = defaultdict(list)
    by_pair: dict[frozenset[str], list[Relationship]] = defaultdict(list)
    for r in current:
        by_source[(r.source_id, r.rel_type)].append(r)
        by_target[(r.target_id, r.rel_type)].append(r)
        by_pair[frozenset((r.source_id, r.target_id))].append(r)

    def when(r: Relationship) -> datetime | None:
        return r.observed_at or r.valid_from

    def newer(n: Relationship, o: Relationship) -> bool:
        tn, to = when(n), when(o)
        return tn is None or to is None or tn >= to

    out: list[Contradiction] = []
    seen: set[tuple[int, int]] = set()

    def report(old: Relationship, n: Relationship, reason: str) -> None:
        key = (id(old), id(n))
        if key in seen or not newer(n, old):
            return
        seen.add(key)
        protected = old.dm_confirmed or old.provenance == "dm"
        out.append(Contradiction(old, n, reason, protected))

    for n in new:
        if n.rel_type in FUNCTIONAL_BY_SOURCE:
            for old in by_source[(n.source_id, n.rel_type)]:
                if old.target_id != n.target_id:
                    report(old, n, f"{n.source_id} {n.rel_type} has one value at a time")
        if n.rel_type in FUNCTIONAL_BY_TARGET:
            for old in by_target[(n.target_id, n.rel_type)]:
                if old.source_id != n.source_id:
                    report(old, n, f"{n.target_id} has one {n.rel_type.replace('_', ' ')} source")
        for a, b in EXCLUSIVE_PAIRS:
            if n.rel_type in (a, b):
                other = b if n.rel_type == a else a
                for old in by_pair[frozenset((n.source_id, n.target_id))]:
                    if old.rel_type == other:
                        report(old, n, f"{n.rel_type} replaces {other}")
    return out


# ------------------------------------------------------------------------------ LLM extractor

LLM_SYSTEM = (
    "You extract a knowledge graph from a tabletop role-playing game transcript. Only extract "
    "in-world facts (characters, places, factions, items, creatures, events, quests), never "
    "facts about the real people at the table or game mechanics. Answer with one JSON object: "
    '{"entities": [{"name": str, "type": one of ' + json.dumps(list(ENTITY_TYPES[:-1])) + ", "
    '"aliases": [str], "description": str}], "relationships": [{"source": entity name, '
    '"type": snake_case relation such as lives_in, located_in, leader_of, member_of, owns, '
    "serves, killed, betrayed, hunting, allied_with, enemy_of, parent_of, sibling_of, "
    'spouse_of, comes_from, seeking, "target": entity name, "evidence": the exact sentence, '
    '"confidence": 0..1, "assertion": "stated" or "inferred"}]}. Prefer precision: omit '
    "anything uncertain."
)


def _llm_windows(entries: Sequence[Entry], max_words: int) -> list[list[Entry]]:
    windows: list[list[Entry]] = []
    current: list[Entry] = []
    words = 0
    for e in entries:
        n = len(e.text.split())
        if current and words + n > max_words:
            windows.append(current)
            current, words = [], 0
        current.append(e)
        words += n
    if current:
        windows.append(current)
    return windows


def extract_knowledge_llm(
    entries: Sequence[Entry],
    existing: Iterable[Entity],
    llm: ChatLLM,
    *,
    campaign_id: str | None = None,
    session_id: str | None = None,
    review_threshold: float = 0.7,
    embedder: Embedder | None = None,
    window_words: int = 2500,
) -> ExtractionResult:
    """Structured-output extraction by an LLM, window by window, through the same resolver.

    A window whose answer is unparseable contributes nothing (logged in `attributes` of no
    fact); the offline extractor remains the fallback for the caller.
    """
    from concurrent.futures import ThreadPoolExecutor

    entries = list(entries)
    existing = list(existing)
    if not entries:
        return ExtractionResult([], [], [], extractor_version=LLM_EXTRACTOR_VERSION, method="llm")
    campaign_id = campaign_id or entries[0].campaign_id
    session_id = session_id or entries[0].session_id
    resolver = EntityResolver(existing, embedder=embedder)
    known = ", ".join(sorted(e.name for e in existing)[:300])
    windows = _llm_windows(entries, window_words)

    def ask(window: list[Entry]) -> tuple[list[Entry], dict[str, Any] | None]:
        transcript = "\n".join(f"{e.speaker_name} ({e.speaker_role}): {e.text}" for e in window)
        user = f"Known entities: {known or '(none)'}\n\nTranscript:\n{transcript}"
        return window, llm.complete_json(LLM_SYSTEM, user)

    with ThreadPoolExecutor(max_workers=max(1, llm.concurrency)) as pool:
        answers = list(pool.map(ask, windows))

    new_entities: dict[str, Entity] = {}
    resolutions: list[Resolution] = []
    taken = {e.id for e in existing}
    facts: list[_Fact] = []

    def entity_for(name: str, kind: str | None, window: list[Entry], desc: str = "") -> str | None:
        if not isinstance(name, str) or not name.strip():
            return None
        hit = resolver.resolve(name, kind)
        if hit:
            resolutions.append(hit)
            return hit.entity_id
        _, _, core = split_descriptor(name)
        core = core or name.strip()
        base = slugify(core)
        entity_id, n = base, 2
        while entity_id in taken:
            entity_id, n = f"{base}-{n}", n + 1
        taken.add(entity_id)
        entity = Entity(
            campaign_id=campaign_id,
            id=entity_id,
            type=kind if kind in ENTITY_TYPES else "concept",
            name=core,
            aliases=[name.strip()] if name.strip() != core else [],
            attributes={"description": desc} if desc else {},
            provenance="extracted",
            session_id=session_id,
            extractor_version=LLM_EXTRACTOR_VERSION,
        )
        new_entities[entity_id] = entity
        resolver.add(entity)
        resolutions.append(Resolution(name, entity_id, "new", 1.0, False))
        return entity_id

    for window, answer in answers:
        if not answer:
            continue
        types: dict[str, str] = {}
        for item in answer.get("entities") or []:
            if not isinstance(item, dict):
                continue
            kind = str(item.get("type") or "").lower() or None
            name = item.get("name")
            if isinstance(name, str) and kind:
                types[_key(name)] = kind
            eid = entity_for(name, kind, window, str(item.get("description") or ""))
            for alias in item.get("aliases") or []:
                if eid and isinstance(alias, str) and alias.strip():
                    resolver.add_alias(eid, alias)
        for item in answer.get("relationships") or []:
            if not isinstance(item, dict):
                continue
            src_name, dst_name = item.get("source"), item.get("target")
            rel_type = re.sub(r"[^a-z0-9_]+", "_", str(item.get("type") or "").lower()).strip("_")
            if not rel_type or not rel_type[0].isalpha():
                continue
            src = entity_for(src_name, types.get(_key(str(src_name))), window)
            dst = entity_for(dst_name, types.get(_key(str(dst_name))), window)
            if not src or not dst or src == dst:
                continue
            try:
                confidence = float(item.get("confidence", 0.75))
            except (TypeError, ValueError):
                confidence = 0.75
            evidence = str(item.get("evidence") or "")
            anchor = _evidence_entry(window, evidence)
            assertion = "inferred" if item.get("assertion") == "inferred" else "stated"
            facts.append(_Fact(src, dst, rel_type, max(0.0, min(1.0, confidence)), assertion,
                               evidence, anchor))
    relationships = _merge_facts(facts, campaign_id, session_id, review_threshold)
    relationships = [replace(r, extractor_version=LLM_EXTRACTOR_VERSION) for r in relationships]
    return ExtractionResult(
        entities=list(new_entities.values()),
        relationships=relationships,
        resolutions=resolutions,
        extractor_version=LLM_EXTRACTOR_VERSION,
        method="llm",
    )


def _evidence_entry(window: list[Entry], evidence: str) -> Entry:
    """The entry an LLM's evidence quote came from (for observed_at), else the window start."""
    probe = evidence.strip()[:60].lower()
    if probe:
        for e in window:
            if probe in e.text.lower():
                return e
    return window[0]
