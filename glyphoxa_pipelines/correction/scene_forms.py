"""The scene's names ready for the context stage's look-ups (`context.py`).

Why a module: the live scene changes with every new name said, so a new scene is met on most
turns that name someone, and its forms must be cheap to lay out and cheap to look up by a
window's Double Metaphone code. The context stage accepts a scene name whose code agrees with
the window's up to the consonant pairs Whisper trades (`confusions.fold`) or one edit apart,
found through shared variants (`confusions.code_variants`: the folded code and, from four
letters on, its one-letter deletions). The index keeps every name by every variant
(`NameIndex.by_code_variant`); a scene only filters those look-ups by its own names, so
laying a new scene out costs a pass over its names, not over their variants: each entity's
share (its forms' facts, its members as one integer of bits) is worked out once per process
and a scene merges its entities' shares. What a window's code shares in the index is kept per
index, across scenes (`SceneVariants.known`, with those forms' bits): the scene is new on
most turns, and the same words' codes come back on every one.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Protocol

from glyphoxa_pipelines.correction.confusions import fold
from glyphoxa_pipelines.correction.name_index import NameForm, NameIndex

KNOWN_KEPT = 65_536  # per index: window codes with the index's forms sharing a variant


@lru_cache(maxsize=8)
def _entities(index: NameIndex) -> tuple[dict[str, tuple[str, ...]], dict[str, list[NameForm]]]:
    """Every name of the index (canonical or alias) → the canonical names of the entities it
    names, and every canonical name → its entity's forms in index order; built once per index
    (indexes are immutable): a scene is resolved by look-ups, not a pass over all names."""
    by_canonical: dict[str, list[NameForm]] = {}
    for form in index.forms:
        by_canonical.setdefault(form.canonical, []).append(form)
    out: dict[str, dict[str, None]] = {}  # a name two entities share names both
    for form in index.forms:
        for name in (form.surface, form.canonical):
            out.setdefault(name, {})[form.canonical] = None
    return {name: tuple(entities) for name, entities in out.items()}, by_canonical


class VariantLookup(Protocol):
    """Forms by a variant of their codes (`SceneVariants`, or a plain dict in tests)."""

    def get(self, variant: str, default: tuple[NameForm, ...] = (), /) -> tuple[NameForm, ...]:
        """The forms with `variant` among their code variants, `default` when none has it."""
        ...


class SceneVariants:
    """The scene's forms by every variant of their codes: the index's look-up
    (`NameIndex.by_code_variant`) kept to the scene's forms, in the scene's order."""

    __slots__ = ("_index", "_parts", "_laid", "_mask", "known")

    def __init__(self, index: NameIndex | None, parts: tuple[_Part, ...], mask: int) -> None:
        self._index = index
        self._parts = parts  # the scene's entities' shares (`_Part`), in scene order
        self._laid: dict[int, NameForm] | None = None  # `_members`, when first read
        # the members' bits (`_form_bits`): a code's forms in the index are the scene's
        # when its own bits (`Shared`) meet these
        self._mask = mask
        # a window code → the index's forms sharing a variant with it (`_sharing`), kept per
        # index across scenes: the live scene changes on most turns that name someone, so a
        # per-scene memo of codes starts empty on most turns, while the same words' codes
        # come back turn after turn
        self.known: dict[str, Shared] = _known_codes(index) if index else {}

    @property
    def _members(self) -> dict[int, NameForm]:
        """The scene's forms with variants, by id, in scene order: laid out when `get` is
        first asked (a word pair across a comma), which few lines do; `sharing` reads bits."""
        members = self._laid
        if members is None:
            members = self._laid = {key: f for part in self._parts for key, f in part[6]}
        return members

    def get(self, variant: str, default: tuple[NameForm, ...] = (), /) -> tuple[NameForm, ...]:
        if self._index is None:
            return default
        members = self._members
        found = [f for f in self._index.by_code_variant.get(variant, ()) if id(f) in members]
        if not found:
            return default
        if len(found) > 1:  # the index's order is not the scene's: few names share a variant
            rank = {key: k for k, key in enumerate(members)}
            found.sort(key=lambda form: rank[id(form)])
        return tuple(found)

    def sharing(self, code: str) -> tuple[NameForm, ...]:
        """The scene's forms that share a variant with `code`, each once: the index's (kept
        in `known`) that are the scene's. Most codes are shared by no name at all."""
        if self._index is None:
            return ()
        known = self.known
        entry = known.get(code)
        if entry is None:
            entry = _sharing(self._index, code)
            if len(known) >= KNOWN_KEPT:
                known.clear()
            known[code] = entry
        shared, bits, each = entry
        # most codes share no name of the scene: one AND of two integers says so, a few
        # words of memory each, where a set test touched every id of the index's names
        # sharing the code (dozens for a short code), each an object of its own
        mask = self._mask
        if not bits & mask:
            return ()
        return tuple([f for f, bit in zip(shared, each, strict=True) if bit & mask])

    def __bool__(self) -> bool:
        return self._mask != 0  # each member has a bit


# a code's index-wide answer (`_sharing`), its forms' bits (`_form_bits`) or'd, and each's
Shared = tuple[tuple[NameForm, ...], int, tuple[int, ...]]


_SHARED_BY_NONE: Shared = ((), 0, ())


@lru_cache(maxsize=8)
def _form_bits(index: NameIndex) -> dict[int, int]:
    """A form of the index (by id) → a bit of its own, by its place in the index: a set of
    the index's forms is then one integer, and two such sets meet when their AND is not 0."""
    return {id(form): 1 << k for k, form in enumerate(index.forms)}


@lru_cache(maxsize=8)
def _known_codes(index: NameIndex) -> dict[str, Shared]:
    """The per-index memo of `SceneVariants.known`, emptied when it holds `KNOWN_KEPT`."""
    return {}


def _sharing(index: NameIndex, code: str) -> Shared:
    """The index's forms that share a variant with a window's `code`, each once, and their
    bits (`_form_bits`) or'd into one integer and one by one. Kept per index, not per scene
    (`SceneVariants.known`): the same words' codes come turn after turn while the scene
    changes, so a new scene reads them back and only keeps its own names. The variants are
    looked up as they are made, not built into a set first: most codes are seen once."""
    by_variant = index.by_code_variant
    folded = fold(code)
    found = {id(f): f for f in by_variant.get(folded, ())}
    if len(folded) >= 4:
        for k in range(len(folded)):
            for form in by_variant.get(folded[:k] + folded[k + 1 :], ()):
                found[id(form)] = form
    if not found:
        return _SHARED_BY_NONE
    each = tuple(map(_form_bits(index).__getitem__, found))
    return tuple(found.values()), sum(each), each


class SceneForms:
    """The forms of a scene's entities, laid out for the context stage's look-ups. Never
    changed once laid out. A layout holds as few objects of its own as it can: a new scene is
    laid out on most lines that name someone, and the one it evicts from `scene_forms`'
    cache is cold by then, each object it lets go of (and each it refers to) a cache miss."""

    __slots__ = (
        "canon", "by_variant", "by_size", "variant_lengths", "anchor_words", "forms_of_code",
        "_single", "_voiced", "_by_short",
    )

    def __init__(
        self,
        canon: frozenset[str],
        by_variant: SceneVariants,
        by_size: dict[int, tuple[NameForm, ...]],
        variant_lengths: frozenset[int],
        anchor_words: frozenset[str] = frozenset(),
    ) -> None:
        self.canon = canon  # canonical names of the scene's entities
        self.by_variant = by_variant  # their forms by every variant of their codes
        self.by_size = by_size  # their multi-word forms by number of words
        # the lengths of `by_variant`'s keys: a window's code whose variants have none of
        # them (most codes of several words, longer than any name's) skips their look-ups
        self.variant_lengths = variant_lengths
        # the words of their multi-word forms: only such a word heard exactly anchors one
        self.anchor_words = anchor_words
        # a window's code → the scene's forms sharing a variant with it, each once: the
        # index's answer (`SceneVariants.sharing`, kept per index) kept to the scene's names
        # by one AND. Not kept per scene: the scene is new on most lines, so such a memo
        # was mostly misses, and its keys were one more cold object to let go of each
        self.forms_of_code = by_variant.sharing
        # `single`, `voiced`, `by_short`: laid out from the entities' shares when first read
        self._single: tuple[NameForm, ...] | None = None
        self._voiced: tuple[NameForm, ...] | None = None
        self._by_short: dict[str, tuple[NameForm, ...]] | None = None

    @property
    def singles(self) -> Iterator[tuple[NameForm, _Facts]]:
        """Their one-word forms with what they bring (`_Facts`), in the scene's order."""
        return (one for part in self.by_variant._parts for one in part[5])

    @property
    def single(self) -> tuple[NameForm, ...]:
        """Their one-word forms: one may be heard as a name it begins with and a word ("Vex
        Alia")."""
        found = self._single
        if found is None:
            found = self._single = tuple([form for form, _ in self.singles])
        return found

    @property
    def voiced(self) -> tuple[NameForm, ...]:
        """Their one-word forms that begin with a V: Whisper may write that sound as "the"."""
        found = self._voiced
        if found is None:
            found = self._voiced = tuple([form for form, facts in self.singles if facts[2]])
        return found

    @property
    def by_short(self) -> dict[str, tuple[NameForm, ...]]:
        """Their one-word forms by their folded codes less the last sound ("Kila" for
        Keyleth)."""
        found = self._by_short
        if found is None:
            shorts: dict[str, list[NameForm]] = {}
            for form, facts in self.singles:
                for short in facts[3]:
                    shorts.setdefault(short, []).append(form)
            found = self._by_short = {k: tuple(v) for k, v in shorts.items()}
        return found


NO_SCENE = SceneForms(frozenset(), SceneVariants(None, (), 0), {}, frozenset())


# What a form brings to a scene: the lengths of its code variants (None without codes), its
# word count when several, whether it begins with a V, its folded codes less the last sound,
# and its bit (`_form_bits`)
_Facts = tuple[frozenset[int] | None, int, bool, tuple[str, ...], int]


def _facts_of(form: NameForm, bit: int) -> _Facts:
    lengths: set[int] = set()  # of the variants: a code's own, one less from four letters on
    for code in form.codes:
        lengths.add(len(code))
        if len(code) >= 4:
            lengths.add(len(code) - 1)
    size = len(form.words)
    if size > 1:
        return (frozenset(lengths) if form.codes else None, size, False, (), bit)
    shorts = tuple({fold(code)[:-1] for code in form.codes if len(code) >= 3})
    starts_v = form.joined.startswith("v")
    return (frozenset(lengths) if form.codes else None, 0, starts_v, shorts, bit)


# An entity's share of a scene (`_part_of`): its canonical name, its members' bits or'd, the
# lengths of their code variants, its multi-word forms, their words, its one-word forms with
# their facts, and its members as (id, form): the forms with codes (ordinary-word names aside)
_Part = tuple[
    str,
    int,
    frozenset[int],
    tuple[NameForm, ...],
    frozenset[str],
    tuple[tuple[NameForm, _Facts], ...],
    tuple[tuple[int, NameForm], ...],
]


def _part_of(index: NameIndex, forms: list[NameForm]) -> _Part:
    """An entity's share of a scene, from its forms in index order."""
    bits = _form_bits(index)
    mask = 0
    lengths: set[int] = set()
    multi: list[NameForm] = []
    singles: list[tuple[NameForm, _Facts]] = []
    members: list[tuple[int, NameForm]] = []
    for form in forms:
        if form.common:
            continue
        key = id(form)
        facts = _facts_of(form, bits[key])
        code_lengths, size = facts[0], facts[1]
        if code_lengths is not None:
            members.append((key, form))
            lengths |= code_lengths
            mask |= facts[4]
        if size:
            multi.append(form)
        else:
            singles.append((form, facts))
    words = frozenset(w for form in multi for w in form.words)
    shares = (frozenset(lengths), tuple(multi), words, tuple(singles), tuple(members))
    return (forms[0].canonical, mask, *shares)


@lru_cache(maxsize=8)
def _name_parts(index: NameIndex) -> dict[str, tuple[_Part, ...]]:
    """A name of the index → the shares (`_part_of`) of the entities it names, filled as
    scenes name them: worked out once per process, not once per scene a name is in (a
    speaker's own names make most scenes new), and not for every name up front."""
    return {}


def _parts_named(index: NameIndex, name: str) -> tuple[_Part, ...]:
    """`_name_parts`' entry for `name`, worked out and kept when new; an entity two names
    name is worked out once. An unknown name has none and is not kept: scenes of a
    long-running service bring names the index never held, and the memo would only grow."""
    named, by_canonical = _entities(index)
    canonicals = named.get(name)
    if not canonicals:
        return ()
    by_entity = _entity_parts(index)
    parts = []
    for canonical in canonicals:
        part = by_entity.get(canonical)
        if part is None:
            part = by_entity[canonical] = _part_of(index, by_canonical[canonical])
        parts.append(part)
    found = _name_parts(index)[name] = tuple(parts)
    return found


@lru_cache(maxsize=8)
def _entity_parts(index: NameIndex) -> dict[str, _Part]:
    """A canonical name → its entity's share of a scene (`_part_of`), filled as named."""
    return {}


@lru_cache(maxsize=256)
def scene_forms(index: NameIndex, scene: tuple[str, ...]) -> SceneForms:
    """The scene's entities (given by canonical name or any alias) and their forms, ready for
    look-ups. The live scene changes with every new name said, so this must be cheap uncached
    too: each entity's share is worked out once (`_part_of`), a scene merges its entities'."""
    known = _name_parts(index)
    chosen: dict[str, _Part] = {}  # by canonical name: the first mention keeps its place
    for name in scene:
        parts = known.get(name)
        if parts is None:
            parts = _parts_named(index, name)
        for part in parts:
            chosen[part[0]] = part
    mask = 0
    lengths: set[int] = set()
    by_size: dict[int, list[NameForm]] = {}
    anchor_words: set[str] = set()
    for _, bits, code_lengths, multi, words, _, _ in chosen.values():
        mask |= bits
        lengths |= code_lengths
        if multi:
            for form in multi:
                by_size.setdefault(len(form.words), []).append(form)
            anchor_words |= words
    return SceneForms(
        frozenset(chosen),
        SceneVariants(index, tuple(chosen.values()), mask),
        {k: tuple(v) for k, v in by_size.items()},
        frozenset(lengths),
        frozenset(anchor_words),
    )
