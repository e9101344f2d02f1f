"""Context-stage rules for the ways Whisper writes a name it heard that the window walk in
`context.py` cannot see as a name: split by a comma it guessed ("Hi, Russ." for Hieris),
split over a name that is also an ordinary word ("Elder Nax" for Eldrinax, "Elder" being a
name too), with a first V heard as "the" ("serves the Exmirror" for Vexmira), or as a
shorter name and a word ("Vex Alia" for Vex'ahlia). Each takes the evidence a window of its
kind needs and returns (first word, last word, name, score) spans for the context stage to
choose among.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rapidfuzz.distance import JaroWinkler

from glyphoxa_pipelines.correction.confusions import fold
from glyphoxa_pipelines.correction.models import CorrectionConfig
from glyphoxa_pipelines.correction.name_index import (
    NameForm,
    NameIndex,
    english_zipf,
    phonetic_codes,
    spelling_key,
)

if TYPE_CHECKING:  # the scene's look-up by code variant (`scene_forms.SceneVariants`)
    from glyphoxa_pipelines.correction.scene_forms import VariantLookup

Span = tuple[int, int, NameForm, float]
_jw = JaroWinkler.similarity


def onset_heard_as_the(
    first: int, rest: str, voiced: Sequence[NameForm], cfg: CorrectionConfig
) -> list[Span]:
    """A scene name's first sound, a V, heard as "the" (the two are near twins, both voiced
    and made at the teeth) and the rest as a made-up word Whisper doubted ("serves the
    Exmirror" for "serves Vexmira"): the name's V put back must spell it closely
    (`fuzzy_threshold`). `voiced` are the scene's one-word names beginning with V; the caller
    checks that the rest is doubted and no English, so "the Exodus" keeps its "the"."""
    out = []
    for form in voiced:
        score = _jw(form.joined[0] + rest, form.joined)
        if score >= cfg.fuzzy_threshold:
            out.append((first, first + 1, form, score))
    return out


def across_comma(
    norms: Sequence[str],
    first: int,
    by_scene: VariantLookup,
    scene_canon: frozenset[str],
    cfg: CorrectionConfig,
) -> list[Span]:
    """A one-word name of the scene that Whisper wrote as two doubted words with a comma
    between ("Hi, Russ." for Hieris): the comma is its guess at a pause, not the speaker's.
    Only the very code of a name in play (`by_scene`: its forms by folded code), spelled as
    close as a spelling-only match must be (`fuzzy_threshold`); the caller checks the doubt."""
    joined = norms[first] + norms[first + 1]
    key = spelling_key(joined)
    out = []
    for code in phonetic_codes(joined):
        for form in by_scene.get(fold(code), ()):
            if form.n_words != 1 or form.canonical not in scene_canon or code not in form.codes:
                continue
            score = max(_jw(joined, form.joined), _jw(key, form.key))
            if score >= cfg.fuzzy_threshold:
                out.append((first, first + 1, form, score))
    return out


def split_over_ordinary_name(
    zipfs: Sequence[float],
    first: int,
    last: int,
    anchors: Sequence[int],
    joined: str,
    index: NameIndex,
    cfg: CorrectionConfig,
) -> list[Span]:
    """One-word names a doubted window may be though it holds a name heard right (`anchors`),
    when that name is also an ordinary English word ("Elder Nax" for Eldrinax, "Elder" being a
    title and a name): the very code of the joined words, spelled as close as several words
    heard for one name must be (`split_threshold`), and no function word at an edge. A name
    that is no ordinary word ("Grog") keeps its window: it was said."""
    if any(zipfs[k] < cfg.common_zipf for k in anchors):
        return []
    if max(zipfs[first], zipfs[last]) >= cfg.function_zipf:
        return []
    out = []
    for code in phonetic_codes(joined):
        for form in index.by_code.get(code, ()):
            if form.n_words == 1 and not form.common:
                score = _jw(joined, form.joined)
                if score >= cfg.split_threshold:
                    out.append((first, last, form, score))
    return out


def rest_heard_apart(
    norms: Sequence[str],
    zipfs: Sequence[float],
    named: Sequence[bool],
    blocked: Sequence[bool],
    joinable: Sequence[bool],
    unsure_of: Sequence[bool],
    single: Sequence[NameForm],
    cfg: CorrectionConfig,
) -> list[Span]:
    """A one-word scene name heard as a shorter name it begins with, heard right, and a word for
    the rest ("Vex Alia" for Vex'ahlia, "Vax Ildan" for Vax'ildan): the apostrophe is a pause
    Whisper hears as a word break, and the first part is a name of its own, so the window walk
    takes it as said. The two words must have the very code of the name, spelled as close as a
    spelling-only match (`fuzzy_threshold`), and the second word must be no function word and
    either doubted or no English: "Vex and Alia", or an ordinary word said clearly after the
    name, stays. `single` are the scene's one-word names."""
    out = []
    for k in range(len(norms) - 1):
        after = k + 1
        if not named[k] or named[after] or blocked[after] or not joinable[after]:
            continue
        if zipfs[after] >= cfg.function_zipf:
            continue
        if not unsure_of[after] and english_zipf(norms[after]) >= cfg.english_zipf:
            continue
        head = norms[k]
        joined = head + norms[after]
        codes: tuple[str, ...] | None = None
        for form in single:
            if len(form.joined) <= len(head) + 2 or not form.joined.startswith(head):
                continue
            codes = codes or phonetic_codes(joined)
            if not any(code in form.codes for code in codes):
                continue
            score = max(_jw(joined, form.joined), _jw(spelling_key(joined), form.key))
            if score >= cfg.fuzzy_threshold:
                out.append((k, after, form, score))
    return out
