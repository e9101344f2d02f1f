"""What a window's spelling brings to the context stage, read in one look-up per window.

The context stage asks three things of each window it walks (`context.py`): its Double
Metaphone codes, the index's names of each code (the names Whisper's doubt may take), and
which of the scene's names share a variant of a code (`SceneForms.forms_of_code`). Each was a
look-up of its own into a memo of tens of thousands of entries (the codes of every string
seen, the index's names by code, the codes seen in any scene), and on a warm line each is a
miss of the memory cache: about 57 such look-ups in a slow line of 24 words.

All three depend on the window's spelling and the index only, so they are kept together per
spelling and index (`window_codes`): one look-up per window, then the scene's part is one set
test of the canonical names sharing a variant with a code against the scene's (`canon`).
Most codes share no name of the scene, and those then cost no call into the scene's memo; a
code that does is looked up there as before, so the scene's forms, and their order, are the
scene's own answer. The same holds for a scene's one-word forms by their codes cut short of
the last sound (`SceneForms.by_short`), which a scene then lays out only when it has one.

A new window must cost about what it did (a live session meets new utterances): a code's
facts are one object per code, shared by the windows with that code, and its two sets of
names are worked out only when a scene first asks (most codes of a new window never reach
the scene's test), from per-variant sets built once per index (`_variant_names`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from glyphoxa_pipelines.correction.confusions import fold
from glyphoxa_pipelines.correction.name_index import CODES, NameForm, NameIndex, phonetic_codes

WINDOWS_KEPT = 65_536  # per index: a session's windows of one to three words, emptied when full
CODES_KEPT = 65_536  # per index: the codes of those windows, each with its facts

_NO_NAMES: frozenset[str] = frozenset()


class CodeFacts:
    """One code of a window and what it brings: its length, the index's forms with the code,
    the canonical names of the index's forms sharing a variant with it (`code_variants`;
    None until a scene's look-up first needs them, as a new window's codes mostly do not),
    and those of its one-word forms with a code that is this one, folded, and one sound more
    ("Kila", KL, for Keyleth, KLÞ: `SceneForms.by_short`; None until first needed, too)."""

    __slots__ = ("code", "size", "named", "sharing", "cut_short")

    def __init__(self, code: str, named: Sequence[NameForm]) -> None:
        self.code = code
        self.size = len(code)
        self.named = named
        self.sharing: frozenset[str] | None = None
        self.cut_short: frozenset[str] | None = None


# a window's codes, and each code's facts in the same order
WindowCodes = tuple[tuple[str, ...], tuple[CodeFacts, ...]]


@lru_cache(maxsize=8)
def _kept(index: NameIndex) -> dict[str, WindowCodes]:
    """The per-index memo of `window_codes`, emptied when it holds `WINDOWS_KEPT`."""
    return {}


@lru_cache(maxsize=8)
def _codes_kept(index: NameIndex) -> dict[str, CodeFacts]:
    """The per-index memo of `_code_facts`, emptied when it holds `CODES_KEPT`."""
    return {}


@lru_cache(maxsize=8)
def _variant_names(index: NameIndex) -> dict[str, frozenset[str]]:
    """Every code variant of the index (`NameIndex.by_code_variant`) → the canonical names of
    its forms, built once per index: a new code's sharing names are then the union of a few
    sets made in C, not a pass over the forms of each variant (dozens for a short code)."""
    shared: dict[frozenset[str], frozenset[str]] = {}  # one set per distinct set of names
    out: dict[str, frozenset[str]] = {}
    for variant, forms in index.by_code_variant.items():
        names = frozenset([form.canonical for form in forms])
        out[variant] = shared.setdefault(names, names)
    return out


def sharing_names(index: NameIndex, code: str) -> frozenset[str]:
    """Canonical names of the index's forms sharing a variant with `code` (the variants
    `SceneVariants.sharing` looks up: `confusions.code_variants`): a scene holding none of
    them has no form for it. Worked out once per code: the caller keeps the answer in the
    code's `CodeFacts`."""
    names = _variant_names(index)
    folded = fold(code)
    found = [names.get(folded, _NO_NAMES)]
    if len(folded) >= 4:  # the variants are made as `code_variants` makes them
        found += [names.get(folded[:k] + folded[k + 1 :], _NO_NAMES) for k in range(len(folded))]
    return found[0].union(*found[1:]) if len(found) > 1 else found[0]


def cut_short_names(index: NameIndex, code: str) -> frozenset[str]:
    """Canonical names of the index's one-word forms with a code that is `code`, folded,
    and one sound more: a scene holding none of them has no one-word form cut short to it."""
    return _cut_short_names(index).get(fold(code), _NO_NAMES)


@lru_cache(maxsize=8)
def _cut_short_names(index: NameIndex) -> dict[str, frozenset[str]]:
    """A folded code less its last sound → the canonical names of the index's one-word forms
    (ordinary-word names aside) with such a code of three sounds or more, as a scene lays
    its one-word forms out by them (`scene_forms._facts_of`)."""
    names: dict[str, set[str]] = {}
    for form in index.forms:
        if len(form.words) == 1 and not form.common:
            for code in form.codes:
                if len(code) >= 3:
                    names.setdefault(fold(code)[:-1], set()).add(form.canonical)
    return {short: frozenset(found) for short, found in names.items()}


def window_codes(index: NameIndex) -> dict[str, WindowCodes]:
    """The memo of windows' facts for `index`: a hot loop reads it with `get` and calls
    `window_facts` for spellings it lacks."""
    return _kept(index)


def window_facts(index: NameIndex, joined: str) -> WindowCodes:
    """The codes of a window spelled `joined` (its words' normalized spellings, joined) and
    what each brings (`CodeFacts`), worked out and kept (the caller found it not kept). A
    code's facts are one object per code and index: windows spelled otherwise with the same
    code ("kila", "kiela") share it, and a new window mostly brings known codes."""
    codes = CODES.get(joined) or phonetic_codes(joined)
    by_code = _codes_kept(index)
    facts = []
    for code in codes:
        found = by_code.get(code)
        if found is None:
            found = CodeFacts(code, index.by_code.get(code, ()))
            if len(by_code) >= CODES_KEPT:
                by_code.clear()
            by_code[code] = found
        facts.append(found)
    kept = _kept(index)
    if len(kept) >= WINDOWS_KEPT:
        kept.clear()
    found_window = kept[joined] = (codes, tuple(facts))
    return found_window
