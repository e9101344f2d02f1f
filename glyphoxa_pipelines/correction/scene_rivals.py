"""A sound-alike fix to a name out of play yields when a name in play sounds the same.

Stage 1 matches a word against every known name, the scene unseen. On real speech a name of
the scene is often heard split ("Tiberius" as "Hi, Burias"): the tail word alone then sounds
like some other, unrelated name of a large campaign ("Brais"), and stage 1 writes that one. The
scene says which name the table is talking about. So a stage-1 sound-alike fix (phonetic or
fuzzy) to a name outside the scene is withdrawn when the heard word's Double Metaphone code
lies inside the code of a scene name, up to the consonants Whisper trades ("Bixalia" for
Vex'ahlia: B for V, `confusions.fold`; the word heard may be that name, or its tail or head):
no change beats the wrong name, and the span is left to the context stage, which reads the
word with its neighbours against the scene.

What stays: a fix to a scene name, a fix when no scene is known, a word whose code no scene
name holds, a code too short to tell (under `MIN_CODE` sounds), and the exact or respelled
forms of a name (they are no guess).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

from glyphoxa_pipelines.correction.confusions import fold
from glyphoxa_pipelines.correction.models import Correction
from glyphoxa_pipelines.correction.name_index import NameIndex, normalize, phonetic_codes

MIN_CODE = 3  # a two-sound code ("KL") sits inside half of all names
GUESSES = frozenset({"phonetic", "fuzzy", "context"})


@lru_cache(maxsize=8)
def _forms_by_name(index: NameIndex) -> dict[str, tuple[tuple[str, tuple[str, ...]], ...]]:
    """Every name of the index (canonical or alias) → (canonical, codes) of each form of its
    entities, built once per index (indexes are immutable)."""
    by_canonical: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    for form in index.forms:
        by_canonical.setdefault(form.canonical, []).append((form.canonical, form.codes))
    out: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    for form in index.forms:
        for name in {form.surface, form.canonical}:
            forms = out.setdefault(name, [])
            if form.canonical not in {canonical for canonical, _ in forms}:
                forms.extend(by_canonical[form.canonical])
    return {name: tuple(forms) for name, forms in out.items()}


def scene_of(index: NameIndex, scene: Iterable[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    """The scene's entities (canonical names) and the codes of all their forms, folded
    (`confusions.fold`)."""
    return _scene_of(index, scene if isinstance(scene, tuple) else tuple(scene))


@lru_cache(maxsize=256)
def _scene_of(index: NameIndex, scene: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...]]:
    """`scene_of`, kept per scene as `scene_forms` keeps a scene's layout: a line with a
    guessed fix asks for it up to three times, and the live scene comes back line after line
    until a new name is said."""
    by_name = _forms_by_name(index)
    entities: set[str] = set()
    codes: set[str] = set()
    for name in scene:
        for canonical, form_codes in by_name.get(name, ()):
            entities.add(canonical)
            codes.update(form_codes)
    return frozenset(entities), tuple(sorted({fold(code) for code in codes}))


def yield_to_scene(
    corrections: Sequence[Correction],
    settled: Sequence[tuple[int, int]],
    index: NameIndex,
    scene: Iterable[str] | None,
) -> tuple[list[Correction], list[tuple[int, int]]]:
    """Stage 1's `corrections` and `settled` spans without the sound-alike fixes to names
    out of the scene that a scene name's sound holds."""
    guesses = [c for c in corrections if c.method in GUESSES]
    if not scene or not guesses:  # most lines: nothing guessed, the scene is not looked at
        return list(corrections), list(settled)
    entities, rivals = scene_of(index, scene)
    withdrawn: set[tuple[int, int]] = set()
    for c in guesses:
        if c.entity in entities:
            continue
        heard = [
            fold(code) for code in phonetic_codes(normalize(c.original)) if len(code) >= MIN_CODE
        ]
        if any(code in rival for code in heard for rival in rivals):
            withdrawn.add((c.start, c.end))
    if not withdrawn:
        return list(corrections), list(settled)
    return (
        [c for c in corrections if (c.start, c.end) not in withdrawn],
        [span for span in settled if span not in withdrawn],
    )
