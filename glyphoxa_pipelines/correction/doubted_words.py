"""An ordinary word Whisper gave less than even odds, with the very code of a name in play.

The context stage holds an ordinary English word ("clarity") to a Jaro-Winkler of 0.9 against
a scene name even when Whisper doubted it, since ordinary words mostly say what they say.
Whisper's doubt comes in degrees, though. Under `DOUBT_FLOOR` it gave the word it wrote less
than even odds: tiny.en writes the nearest word it knows for a name it has no tokens for, and
doubts it that much. Such a word, spelled the way a one-word name of the scene sounds (the
very Double Metaphone code), needs only `DOUBTED_THRESHOLD`.

What stays: a word Whisper merely doubted (above the floor), a name out of play, a code that
is only near (a traded consonant, one edit), frequent words ("price" for Perce), names heard
right, and words an earlier stage settled.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

from rapidfuzz.distance import JaroWinkler

from glyphoxa_pipelines.correction.models import Correction, CorrectionConfig
from glyphoxa_pipelines.correction.name_index import (
    NameForm,
    NameIndex,
    phonetic_codes,
    spelling_key,
)
from glyphoxa_pipelines.correction.phonetic import Scan

DOUBT_FLOOR = 0.5  # Whisper's word probability under which it bet against the word it wrote
DOUBTED_THRESHOLD = 0.85  # Jaro-Winkler such a word needs (an ordinary word otherwise: 0.9)
# a word more frequent than this (Zipf; "price", "press") is said far more often than a name is
# misheard as it: Whisper's doubt of it is about something else
FREQUENT_ZIPF = 5.0


@lru_cache(maxsize=8)
def _forms_by_name(index: NameIndex) -> dict[str, tuple[NameForm, ...]]:
    """Every name of the index (canonical or alias) → its entity's one-word forms that are no
    ordinary words, built once per index (indexes are immutable)."""
    by_canonical: dict[str, list[NameForm]] = {}
    for form in index.forms:
        if form.n_words == 1 and not form.common:
            by_canonical.setdefault(form.canonical, []).append(form)
    entities: dict[str, dict[str, None]] = {}  # a name two entities share names both
    for form in index.forms:
        for name in (form.surface, form.canonical):
            entities.setdefault(name, {})[form.canonical] = None
    return {
        name: tuple(f for canonical in found for f in by_canonical.get(canonical, ()))
        for name, found in entities.items()
    }


@lru_cache(maxsize=256)
def _scene_codes(index: NameIndex, scene: tuple[str, ...]) -> dict[str, tuple[NameForm, ...]]:
    """The scene's one-word forms by each of their codes."""
    by_name = _forms_by_name(index)
    out: dict[str, list[NameForm]] = {}
    for name in scene:
        for form in by_name.get(name, ()):
            for code in form.codes:
                if form not in out.setdefault(code, []):
                    out[code].append(form)
    return {code: tuple(forms) for code, forms in out.items()}


def very_doubted(
    text: str,
    index: NameIndex,
    scan: Scan,
    word_confidences: Sequence[float] | None,
    scene: Iterable[str] | None,
    settled: Iterable[tuple[int, int]],
    cfg: CorrectionConfig,
) -> list[Correction]:
    """Corrections of single ordinary words Whisper bet against into the scene's names
    of their very code, outside the `settled` spans (names heard right, earlier fixes)."""
    if not word_confidences or not scene or len(text.split()) != len(word_confidences):
        return []
    if min(word_confidences) >= DOUBT_FLOOR:
        return []
    # the words that may qualify, found before the scene is looked at: most lines have none
    norms, zipfs, chunk, by_joined = scan.norms, scan.zipfs, scan.chunk, index.by_joined
    candidates = [
        k
        for k, zipf in enumerate(zipfs)
        if cfg.common_zipf <= zipf < FREQUENT_ZIPF
        and word_confidences[chunk[k]] < DOUBT_FLOOR
        and scan.plain[k]
        and len(scan.variants[k]) == 1  # a possessive: `possessive.py` reads those
        and norms[k] not in by_joined
    ]
    if not candidates:
        return []
    spans = list(settled)
    starts = scan.starts
    candidates = [k for k in candidates if not any(s <= starts[k] < e for s, e in spans)]
    by_code = _scene_codes(index, scene if isinstance(scene, tuple) else tuple(scene))
    if not candidates or not by_code:
        return []
    out = []
    for k in candidates:
        norm = norms[k]
        key = spelling_key(norm)
        scored = {
            form.canonical: (score, form)
            for code in phonetic_codes(norm)
            for form in by_code.get(code, ())
            if (
                score := max(
                    JaroWinkler.similarity(norm, form.joined), JaroWinkler.similarity(key, form.key)
                )
            )
            >= DOUBTED_THRESHOLD
        }
        if not scored:
            continue
        ranked = sorted(scored.values(), key=lambda pair: -pair[0])
        if len(ranked) > 1 and ranked[0][0] - ranked[1][0] <= cfg.ambiguity_margin:
            continue  # two names about equally near: no change
        score, form = ranked[0]
        out.append(
            Correction(
                original=text[starts[k] : scan.ends[k]],
                replacement=form.surface,
                start=starts[k],
                end=scan.ends[k],
                score=round(score, 4),
                method="context",
                entity=form.canonical,
            )
        )
    return out
