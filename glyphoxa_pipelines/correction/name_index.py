"""The prepared index of known names (canonical names and aliases of a campaign's entities).

Why an index: phonetic codes, normalized forms and English-frequency facts of every name are
computed once when the entity list changes, so matching an utterance is dictionary look-ups plus a
few Jaro-Winkler comparisons. Double Metaphone comes from the `doublemetaphone` package (a C++
implementation) whose codes are not truncated to 4 characters, so long fantasy names that share
a beginning do not collide.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from wordfreq import get_frequency_dict, zipf_frequency

from glyphoxa_pipelines.correction.confusions import code_variants
from glyphoxa_pipelines.correction.dict_memo import dict_memo

try:
    from doublemetaphone import doublemetaphone
except ImportError:  # pragma: no cover - the package is a declared dependency
    import logging

    import jellyfish

    logging.getLogger(__name__).warning(
        "doublemetaphone is not installed: falling back to single Metaphone (jellyfish)"
    )

    def doublemetaphone(text: str) -> tuple[str, str]:
        code = jellyfish.metaphone(text)
        return code, code


# Characters dropped when comparing spellings: STT loses apostrophes, hyphens and spacing.
_STRIP_CHARS = re.compile(r"[\s'’ʼ‘`´\-‐‑‒–—_.]+")
_APOSTROPHES = str.maketrans({"’": "'", "ʼ": "'", "‘": "'", "`": "'", "´": "'"})
_CACHE_LIMIT = 200_000


def unify_apostrophes(text: str) -> str:
    """Typographic apostrophes as ASCII ones: "Vax’ildan" is spelled like "Vax'ildan"."""
    return text.translate(_APOSTROPHES)


@lru_cache(maxsize=_CACHE_LIMIT)
def normalize(text: str) -> str:
    """Casefolded, accent-free, without spaces, apostrophes, hyphens and dots."""
    if text.isascii():
        if text.isalpha():  # most words: nothing to strip (a word's first sight is timed)
            return text.lower()
        return _STRIP_CHARS.sub("", text.lower())
    folded = unicodedata.normalize("NFKD", text.casefold())
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    return _STRIP_CHARS.sub("", folded)


# `phonetic_codes`' results by string, in a plain dict (`dict_memo`): both stages' walks ask
# for many thousand windows' codes; the context stage's reads it directly
CODES: dict[str, tuple[str, ...]] = {}


@dict_memo(_CACHE_LIMIT, CODES)
def phonetic_codes(normalized: str) -> tuple[str, ...]:
    """Distinct non-empty Double Metaphone codes of an already normalized string.

    Non-ASCII letters (Cyrillic, CJK, ...) have no meaningful English code: none is returned, so
    such names match only by spelling.
    """
    if not normalized or not normalized.isascii():
        return ()
    primary, secondary = doublemetaphone(normalized)
    if not primary:
        return ()
    if secondary and secondary != primary:
        return (primary, secondary)
    return (primary,)


_FREQUENCIES: dict[str, float] | None = None


def _frequencies() -> dict[str, float]:
    """wordfreq's English frequency list as one dict, loaded once: a dict look-up per new
    word instead of wordfreq's tokenizer on the live path."""
    global _FREQUENCIES
    if _FREQUENCIES is None:
        _FREQUENCIES = get_frequency_dict("en", wordlist="best")
    return _FREQUENCIES


@lru_cache(maxsize=_CACHE_LIMIT)
def word_zipf(word: str) -> float:
    """wordfreq Zipf frequency of an English word (0 for unknown words), case-insensitive."""
    if word.isascii() and word.isalpha():  # most words: no apostrophe to unify, letters only
        word = word.lower()
    else:
        word = word.translate(_APOSTROPHES).lower()
        if not word or not any(ch.isalpha() for ch in word):
            return 0.0
    freq = _frequencies().get(word)
    if freq is not None:
        return round(math.log10(freq) + 9, 2)
    if word.isalpha():
        return 0.0
    try:  # hyphenated and other multi-part words: wordfreq combines the parts
        return zipf_frequency(word, "en")
    except (ValueError, LookupError):  # pragma: no cover - wordfreq data problems
        return 0.0


_SUFFIXES = (
    ("ies", "y"),
    ("es", ""),
    ("s", ""),
    ("ed", ""),
    ("ed", "e"),
    ("ing", ""),
    ("ing", "e"),
)


@lru_cache(maxsize=_CACHE_LIMIT)
def english_stems(word: str) -> tuple[tuple[str, float], ...]:
    """(form, Zipf) of a word and of its plausible stems ("minecarts" → "minecart")."""
    stems = [(word, word_zipf(word))]
    for suffix, repl in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            stem = word[: -len(suffix)] + repl
            stems.append((stem, word_zipf(stem)))
    return tuple(stems)


def english_zipf(word: str) -> float:
    """How much of an English word `word` is, whatever the inflection (max Zipf of its stems)."""
    return max(z for _, z in english_stems(word))


@lru_cache(maxsize=_CACHE_LIMIT)
def is_compound(word: str, common_zipf: float = 3.0) -> bool:
    """True for English compounds ("stonework", "thunderbeards"): two ordinary words glued."""
    for cut in range(3, len(word) - 2):
        if word_zipf(word[:cut]) >= common_zipf and english_zipf(word[cut:]) >= common_zipf:
            return True
    return False


# English spellings of the same sounds, folded to one: ASR respells names this way.
_SPELLING_RULES = tuple(
    (re.compile(pattern), repl)
    for pattern, repl in (
        (r"ph", "f"),
        (r"x", "ks"),
        (r"ck", "k"),
        (r"c(?=[eiy])", "s"),
        (r"c", "k"),
        (r"qu?", "kw"),
        (r"z", "s"),
        (r"(?<=.)y", "i"),
        (r"(?<=[aeiou])h(?![aeiou])", ""),
        (r"([^aeiou])\1+", r"\1"),
    )
)


@lru_cache(maxsize=_CACHE_LIMIT)
def spelling_key(normalized: str) -> str:
    """A normalized word with English spelling variants folded ("vacks", "vaks", "vax" all
    become "vaks"; "Kaileth" and "Kayleth" meet): compared besides the spelling itself."""
    for pattern, repl in _SPELLING_RULES:
        normalized = pattern.sub(repl, normalized)
    return normalized


@dataclass(frozen=True, slots=True)
class NameForm:
    """One spelling to write (a canonical name or an alias) with its precomputed keys."""

    surface: str
    canonical: str
    words: tuple[str, ...]  # normalized words
    joined: str  # normalized, space-free
    spaced: str  # normalized words joined by single spaces
    codes: tuple[str, ...]
    word_codes: tuple[tuple[str, ...], ...]
    common: bool  # every word is an ordinary English word ("Iron Hearth", "Pike")
    key: str  # spelling_key(joined)

    @property
    def n_words(self) -> int:
        return len(self.words)


EntitySpec = str | tuple[str, Iterable[str]] | Any


def _surface_words(surface: str) -> list[str]:
    return [w for w in (normalize(p) for p in surface.split()) if w]


def _entity_names(entity: EntitySpec) -> tuple[str, list[str]]:
    """(canonical, aliases) of a plain name, a (canonical, aliases) pair or an Entity-like."""
    if isinstance(entity, str):
        return entity, []
    if isinstance(entity, tuple | list) and entity and isinstance(entity[0], str):
        rest = list(entity[1:])
        if len(rest) == 1 and not isinstance(rest[0], str):
            rest = list(rest[0] or [])  # (canonical, [aliases])
        return entity[0], [a for a in rest if isinstance(a, str)]  # or (canonical, *aliases)
    name = getattr(entity, "name", None)
    if isinstance(name, str):
        return name, [a for a in (getattr(entity, "aliases", None) or []) if isinstance(a, str)]
    raise TypeError(f"not a name, (name, aliases) pair or entity: {entity!r}")


class NameIndex:
    """Known names prepared for matching. Build once per entity list; reuse for every utterance.

    Immutable after construction, so one index can be shared by threads and processes (it is
    picklable: it holds only dicts, tuples and strings).
    """

    def __init__(self, entities: Iterable[EntitySpec], *, common_zipf: float = 3.0) -> None:
        forms: list[NameForm] = []
        seen: set[tuple[str, str]] = set()
        keywords: list[str] = []
        for entity in entities:
            canonical, aliases = _entity_names(entity)
            for surface in [canonical, *aliases]:
                surface = " ".join(surface.split())
                words = tuple(_surface_words(surface))
                if not words:
                    continue
                if surface not in keywords:
                    keywords.append(surface)
                key = (surface, canonical.strip())
                if key in seen:
                    continue
                seen.add(key)
                joined = "".join(words)
                forms.append(
                    NameForm(
                        surface=surface,
                        canonical=" ".join(canonical.split()) or surface,
                        words=words,
                        joined=joined,
                        spaced=" ".join(words),
                        codes=phonetic_codes(joined),
                        word_codes=tuple(phonetic_codes(w) for w in words),
                        common=all(word_zipf(w) >= common_zipf for w in surface.split()),
                        key=spelling_key(joined),
                    )
                )
        self.forms: tuple[NameForm, ...] = tuple(forms)
        self.keywords: tuple[str, ...] = tuple(keywords)
        self.common_zipf = common_zipf
        self.by_joined: dict[str, list[NameForm]] = {}
        self.by_code: dict[str, list[NameForm]] = {}
        self.by_surface: dict[str, NameForm] = {}
        # spelling_key of single-word forms → forms: the same sounds spelled another way
        self.by_key: dict[str, list[NameForm]] = {}
        # (number of words, normalized word or code of first/last word) → multi-word forms
        self.by_edge: dict[tuple[int, str], list[NameForm]] = {}
        # first letter of the joined form → (joined strings, forms) for fuzzy search
        self.by_first: dict[str, tuple[list[str], list[NameForm]]] = {}
        for form in self.forms:
            self.by_joined.setdefault(form.joined, []).append(form)
            self.by_surface.setdefault(form.surface, form)
            for code in form.codes:
                self.by_code.setdefault(code, []).append(form)
            if form.n_words == 1:
                self.by_key.setdefault(form.key, []).append(form)
            if form.n_words > 1:
                n = form.n_words
                keys = {(n, "w:" + form.words[0]), (n, "w:" + form.words[-1])}
                keys.update((n, "c:" + c) for c in form.word_codes[0] + form.word_codes[-1])
                for key in keys:
                    self.by_edge.setdefault(key, []).append(form)
            strings, bucket = self.by_first.setdefault(form.joined[0], ([], []))
            strings.append(form.joined)
            bucket.append(form)
        # every beginning of a joined name: a window whose joined words are none can grow
        # into no name spelled out, so the window walk skips its spelling look-ups
        self.joined_prefixes = frozenset(
            f.joined[:k] for f in self.forms for k in range(1, len(f.joined) + 1)
        )
        # a normalized word → the sizes of the multi-word names it begins or ends
        edge_sizes: dict[str, set[int]] = {}
        for form in self.forms:
            if form.n_words > 1:
                for word in (form.words[0], form.words[-1]):
                    edge_sizes.setdefault(word, set()).add(form.n_words)
        self.edge_sizes: dict[str, frozenset[int]] = {
            word: frozenset(sizes) for word, sizes in edge_sizes.items()
        }
        # a Double Metaphone code → the sizes of the multi-word names whose first or last word
        # has it: by_edge's code keys as one set per code, for the walk's cheap pre-check
        code_sizes: dict[str, set[int]] = {}
        for form in self.forms:
            if form.n_words > 1:
                for code in form.word_codes[0] + form.word_codes[-1]:
                    code_sizes.setdefault(code, set()).add(form.n_words)
        self.edge_code_sizes: dict[str, frozenset[int]] = {
            code: frozenset(sizes) for code, sizes in code_sizes.items()
        }
        # first letter → lengths of the joined names starting with it (the spelling fallback
        # compares only names of about the window's length)
        lengths: dict[str, set[int]] = {}
        for form in self.forms:
            lengths.setdefault(form.joined[0], set()).add(len(form.joined))
        self.first_lengths: dict[str, frozenset[int]] = {
            first: frozenset(found) for first, found in lengths.items()
        }
        # first letter → (joined length, spelling-key length, words, common, joined) of its
        # names: what the spelling fallback's length and word-count gates read, so that its
        # search runs only over the names that could pass them
        shapes: dict[str, list[tuple[int, int, int, bool, str]]] = {}
        for form in self.forms:
            shapes.setdefault(form.joined[0], []).append(
                (len(form.joined), len(form.key), form.n_words, form.common, form.joined)
            )
        self.first_shapes: dict[str, tuple[tuple[int, int, int, bool, str], ...]] = {
            first: tuple(found) for first, found in shapes.items()
        }
        # every variant of a code (`code_variants`: the folded code and, from four letters on,
        # its one-letter deletions) → the names with it, ordinary-word names aside: the context
        # stage finds a scene's names sharing one with a window through this, so a new scene
        # (most turns that name someone) is not laid out variant by variant
        by_variant: dict[str, list[NameForm]] = {}
        for form in self.forms:
            if not form.common:
                for variant in {v for code in form.codes for v in code_variants(code)}:
                    by_variant.setdefault(variant, []).append(form)
        self.by_code_variant: dict[str, tuple[NameForm, ...]] = {
            variant: tuple(found) for variant, found in by_variant.items()
        }
        self.max_words = max((f.n_words for f in self.forms), default=0)
        self.multi_sizes = frozenset(f.n_words for f in self.forms if f.n_words > 1)
        self.max_joined = max((len(f.joined) for f in self.forms), default=0)
        self.min_joined = min((len(f.joined) for f in self.forms), default=0)

    def __len__(self) -> int:
        return len(self.forms)

    def __bool__(self) -> bool:
        return bool(self.forms)

    def __repr__(self) -> str:
        return f"NameIndex({len(self.forms)} forms)"


def build_index(
    entities: NameIndex | Iterable[EntitySpec], *, common_zipf: float = 3.0
) -> NameIndex:
    """`entities` as a NameIndex; an index passed in is returned as is (the fast path)."""
    if isinstance(entities, NameIndex):
        return entities
    return NameIndex(entities, common_zipf=common_zipf)


def keyword_list(entities: NameIndex | Iterable[EntitySpec]) -> list[str]:
    """Distinct names and aliases, canonical names first per entity: the STT keyword boost list."""
    return list(build_index(entities).keywords)


def parse_entity_lines(lines: Sequence[str] | Iterable[str]) -> list[tuple[str, list[str]]]:
    """Entities from lines `Canonical|alias|alias`; blank lines and `#` comments are skipped."""
    entities: list[tuple[str, list[str]]] = []
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split("|")]
        parts = [p for p in parts if p]
        if parts:
            entities.append((parts[0], parts[1:]))
    return entities
