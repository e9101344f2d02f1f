"""Entity resolution: which known entity a surface form names, before anything new is made.

Every surface form is resolved against the existing graph first (exact name/alias, stripped of
titles and descriptors, unique first/last name, phonetic similarity, optionally embedding
similarity), so "the old wizard Eldrinax" is the Eldrinax the DM already created. Cheap checks
run first; embeddings are the last resort and are batched.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from glyphoxa_pipelines.memory.models import Entity
from glyphoxa_pipelines.processing.extraction.vocabulary import TITLES
from glyphoxa_pipelines.processing.mentions import name_tokens

if TYPE_CHECKING:
    from glyphoxa_pipelines.providers.embeddings import Embedder

ResolutionMethod = Literal[
    "exact", "core", "name_part", "phonetic", "embedding", "session", "new"
]

_DETERMINERS = frozenset({"the", "a", "an", "this", "that", "our", "your", "his", "her", "their"})
_CAP = re.compile(r"^[A-ZÀ-Ý][\w'’\-]*$")


@dataclass(frozen=True, slots=True)
class Resolution:
    """How one surface form was mapped to an entity (or created one)."""

    surface: str
    entity_id: str
    method: ResolutionMethod
    score: float
    existing: bool


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


def name_key(text: str) -> str:
    """The comparison form of a name: its tokens, case- accent- and apostrophe-folded."""
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
                key = name_key(form)
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
        key = name_key(alias)
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
        full = name_key(surface)
        if not full:
            return None
        if found := self._unique(self._by_key.get(full), type_hint):
            return Resolution(surface, found, "exact", 1.0, True)
        _, _, core = split_descriptor(surface)
        core_key = name_key(core)
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

