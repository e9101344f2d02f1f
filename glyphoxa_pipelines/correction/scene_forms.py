"""The scene's names ready for the context stage's look-ups (`context.py`).

Why a module: the live scene changes with every new name said, so a new scene is met on most
turns that name someone, and its forms must be cheap to lay out and cheap to look up by a
window's Double Metaphone code. The context stage accepts a scene name whose code agrees with
the window's up to the consonant pairs Whisper trades (`confusions.fold`) or one edit apart,
found through shared variants (`confusions.code_variants`: the folded code and, from four
letters on, its one-letter deletions).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from glyphoxa_pipelines.correction.confusions import code_variants, fold
from glyphoxa_pipelines.correction.name_index import NameForm, NameIndex

CODES_KEPT = 4096  # per scene: the codes of a session's words and short windows


@lru_cache(maxsize=8)
def _entity_forms(index: NameIndex) -> dict[str, tuple[NameForm, ...]]:
    """Every name of the index (canonical or alias) → the forms of its entity, built once per
    index (indexes are immutable): a scene is resolved by look-ups, not a pass over all names."""
    by_canonical: dict[str, list[NameForm]] = {}
    for form in index.forms:
        by_canonical.setdefault(form.canonical, []).append(form)
    out: dict[str, dict[str, None]] = {}  # a name two entities share names both
    for form in index.forms:
        for name in (form.surface, form.canonical):
            out.setdefault(name, {})[form.canonical] = None
    return {
        name: tuple(f for canonical in entities for f in by_canonical[canonical])
        for name, entities in out.items()
    }


@dataclass(frozen=True, slots=True)
class SceneForms:
    """The forms of a scene's entities, laid out for the context stage's look-ups."""

    canon: frozenset[str]  # canonical names of the scene's entities
    by_variant: dict[str, tuple[NameForm, ...]]  # their forms by every variant of their codes
    by_size: dict[int, tuple[NameForm, ...]]  # their multi-word forms by number of words
    # their one-word forms by their folded codes less the last sound ("Kila" for Keyleth)
    by_short: dict[str, tuple[NameForm, ...]]
    # the lengths of `by_variant`'s keys: a window's code whose variants have none of them
    # (most codes of several words, longer than any name's) skips their look-ups
    variant_lengths: frozenset[int]
    # their one-word forms that begin with a V: Whisper may write that sound as "the"
    voiced: tuple[NameForm, ...] = ()
    # their one-word forms: one may be heard as a name it begins with and a word ("Vex Alia")
    single: tuple[NameForm, ...] = ()
    # a window's code → `by_variant`'s forms of all its variants: filled as codes come (the
    # same words' codes come utterance after utterance), bounded
    by_code: dict[str, tuple[NameForm, ...]] = field(default_factory=dict)

    def forms_of_code(self, code: str) -> tuple[NameForm, ...]:
        """The scene's forms sharing a variant with a window's `code` (a form may repeat).

        A window's new code is met on most turns (new words, new windows), so its variants
        are looked up as they are made, not built into a set first: the folded code can only
        equal a key of its own length, and its deletions only keys one shorter, so each half
        is skipped when the scene has no key of that length."""
        found = self.by_code.get(code)
        if found is not None:
            return found
        folded = fold(code)
        size = len(folded)
        by_variant, lengths = self.by_variant, self.variant_lengths
        out: list[NameForm] = []
        if size in lengths:
            out.extend(by_variant.get(folded, ()))
        if size >= 4 and size - 1 in lengths:
            for k in range(size):
                hit = by_variant.get(folded[:k] + folded[k + 1 :])
                if hit is not None:
                    out.extend(hit)
        found = tuple(out)
        if len(self.by_code) >= CODES_KEPT:
            self.by_code.clear()
        self.by_code[code] = found
        return found


NO_SCENE = SceneForms(frozenset(), {}, {}, {}, frozenset())


@lru_cache(maxsize=8)
def _scene_keys(index: NameIndex) -> dict[int, tuple[tuple[str, ...], tuple[str, ...]]]:
    """A form of the index (by id: the index holds its forms) → its code variants and its
    folded codes less the last sound, filled as scenes name the forms."""
    return {}


@lru_cache(maxsize=256)
def scene_forms(index: NameIndex, scene: tuple[str, ...]) -> SceneForms:
    """The scene's entities (given by canonical name or any alias) and their forms, ready for
    look-ups. The live scene changes with every new name said, so this must be cheap uncached
    too."""
    entity_forms = _entity_forms(index)
    forms = {id(f): f for name in scene for f in entity_forms.get(name, ())}
    canon = frozenset(f.canonical for f in forms.values())
    out: dict[str, list[NameForm]] = {}
    by_size: dict[int, list[NameForm]] = {}
    by_short: dict[str, list[NameForm]] = {}
    voiced: list[NameForm] = []
    single: list[NameForm] = []
    # each name's keys are worked out once per process, not once per scene it is in: the
    # live scene changes with every new name said
    known = _scene_keys(index)
    for form in forms.values():
        if not form.common and form.n_words == 1 and form.joined.startswith("v"):
            voiced.append(form)
        if not form.common:
            keys = known.get(id(form))
            if keys is None:
                keys = known[id(form)] = (
                    tuple({v for code in form.codes for v in code_variants(code)}),
                    tuple({fold(code)[:-1] for code in form.codes if len(code) >= 3}),
                )
            for variant in keys[0]:
                out.setdefault(variant, []).append(form)
            if form.n_words > 1:
                by_size.setdefault(form.n_words, []).append(form)
            else:
                single.append(form)
                for short in keys[1]:
                    by_short.setdefault(short, []).append(form)
    return SceneForms(
        canon,
        {k: tuple(v) for k, v in out.items()},
        {k: tuple(v) for k, v in by_size.items()},
        {k: tuple(v) for k, v in by_short.items()},
        frozenset(map(len, out)),
        tuple(voiced),
        tuple(single),
    )
