"""The scene's look-ups, made through the index's variants filtered by the scene's names
instead of a layout built per scene, must find exactly the scene's forms that share a code
variant with a window, in the scene's order, and the per-scene memo of codes stays bounded."""

from __future__ import annotations

import itertools
import random

import pytest

from glyphoxa_pipelines.correction import NameIndex, correct
from glyphoxa_pipelines.correction import scene_forms as scene_module
from glyphoxa_pipelines.correction.confusions import code_variants
from glyphoxa_pipelines.correction.name_index import normalize, phonetic_codes
from glyphoxa_pipelines.correction.scene_forms import scene_forms
from tests.support.party_names import PARTY_NAMES

ENTITIES = PARTY_NAMES
HEARD = [
    "kila",
    "kiela",
    "bex",
    "vacks",
    "scamlin",
    "trinkit",
    "drink it",
    "grok",
    "percy",
    "clara to",
    "thessa born",
    "brannock",
    "borrel",
    "kima",
    "the crown shards",
    "tube rus",
    "strong jaw",
]


def _sharing(index: NameIndex, scene: tuple[str, ...], code: str) -> list[int]:
    """Ids of the scene's forms (not ordinary-word names) that share a variant with `code`,
    worked out from scratch, in the scene's order."""
    wanted = code_variants(code)
    out: list[int] = []
    for name in scene:
        canonicals = {f.canonical for f in index.forms if name in (f.surface, f.canonical)}
        for form in index.forms:
            if form.canonical not in canonicals or form.common or id(form) in out:
                continue
            if wanted & {v for c in form.codes for v in code_variants(c)}:
                out.append(id(form))
    return out


def test_code_look_up_finds_the_forms_of_every_shared_variant() -> None:
    index = NameIndex(ENTITIES)
    names = ("Vrel", "Keyleth", "Kima of Vord", "Brannoc", "Vax'ildan", "Vex'ahlia", "Trinket")
    scene = scene_forms(index, names)
    rng = random.Random(3)
    codes = {c for text in HEARD for c in phonetic_codes(normalize(text))}
    codes |= {c for form in index.forms for c in form.codes}
    # random codes of the letters Double Metaphone writes, short and long
    letters = "0AFHJKLMNPRSTX"
    codes |= {"".join(rng.choice(letters) for _ in range(rng.randint(1, 9))) for _ in range(3000)}
    found_any = 0
    for code in sorted(codes):
        got = scene.forms_of_code(code)
        expected = _sharing(index, names, code)
        assert set(map(id, got)) == set(expected), code
        # the look-up by one variant keeps the scene's order
        folded = code.replace("P", "F").replace("M", "N")
        by_own = [id(f) for f in scene.by_variant.get(folded)]
        assert by_own == [k for k in expected if k in by_own], code
        assert scene.forms_of_code(code) == got  # read back from the index's memo
        found_any += bool(got)
    assert found_any > 20  # the check compared real hits, not only empty answers
    assert scene.by_variant and not scene_forms(index, ("Nobody",)).by_variant


def test_scene_variant_lengths_are_those_of_its_names_variants() -> None:
    index = NameIndex(ENTITIES)
    for names in (tuple(ENTITIES), ("Keyleth",), ("Grog Strongjaw", "Vrel")):
        scene = scene_forms(index, names)
        forms = [f for f in index.forms if f.canonical in scene.canon and not f.common]
        expected = {len(v) for f in forms for c in f.codes for v in code_variants(c)}
        assert scene.variant_lengths == expected


def test_a_layout_keeps_no_code_memo_of_its_own() -> None:
    # a new scene is laid out on most lines that name someone: the codes it is asked for
    # are kept per index (`SceneVariants.known`), so the evicted layout lets go of no keys
    index = NameIndex(ENTITIES)
    scene = scene_forms(index, ("Keyleth", "Trinket"))
    for letters in itertools.islice(itertools.product("KLNRT", repeat=5), 400):
        scene.forms_of_code("".join(letters))
    assert not hasattr(scene, "__dict__") and not hasattr(scene, "by_code")
    assert "KLNRT" in scene.by_variant.known
    assert scene.forms_of_code("KLT") == scene.forms_of_code("KLT")


def test_a_scene_name_the_index_never_held_is_not_kept() -> None:
    # a long-running service's scenes bring speakers and names no index holds: kept, the
    # per-index memo of names' shares would only grow
    index = NameIndex(ENTITIES)
    known = scene_module._name_parts(index)
    scene = scene_forms(index, ("Keyleth", "Somebody Unheard Of", "Nobody Either"))
    assert scene.single  # Keyleth's forms are laid out
    assert "Somebody Unheard Of" not in known and "Nobody Either" not in known
    assert any(name in known for name in ("Keyleth", "keyleth"))


def test_a_confident_window_is_still_anchored_without_its_code() -> None:
    """Windows Whisper was sure of, holding an ordinary content word, skip the code look-ups:
    a multi-word name is still found by its own rare word heard exactly, whether the scene
    names it or only others, and ordinary words around a scene name stay as they are."""
    index = NameIndex(ENTITIES)
    for text in ("we met Thessa born today at noon", "we met big Thessa born today"):
        sure = [0.99] * len(text.split())
        for scene in (["Thessa Morn"], ["Keyleth"], ["Keyleth", "Grog Strongjaw"]):
            assert "Thessa Morn" in correct(text, index, sure, scene=scene).text, (text, scene)
    text = "we met big born today and kept going"
    sure = [0.99] * len(text.split())
    assert correct(text, index, sure, scene=["Thessa Morn", "Keyleth"]).text == text


def _layout(index: NameIndex, scene: tuple[str, ...]) -> tuple[object, ...]:
    """A scene's layout worked out from scratch, form by form, in the scene's order."""
    forms = {
        id(f): f
        for name in scene
        for f in index.forms
        if f.canonical in {g.canonical for g in index.forms if name in (g.surface, g.canonical)}
    }
    kept = [f for f in forms.values() if not f.common]
    lengths = {len(c) - d for f in kept for c in f.codes for d in ((0, 1) if len(c) >= 4 else (0,))}
    singles = [f for f in kept if len(f.words) == 1]
    by_short: dict[str, list[int]] = {}
    for f in singles:
        for short in sorted(
            {c.translate(str.maketrans("PM", "FN"))[:-1] for c in f.codes if len(c) >= 3}
        ):
            by_short.setdefault(short, []).append(id(f))
    by_size: dict[int, list[int]] = {}
    for f in kept:
        if len(f.words) > 1:
            by_size.setdefault(len(f.words), []).append(id(f))
    return (
        frozenset(f.canonical for f in forms.values()),
        frozenset(lengths),
        by_size,
        {k: sorted(v) for k, v in by_short.items()},
        [id(f) for f in singles if f.joined.startswith("v")],
        [id(f) for f in singles],
        frozenset(w for f in kept if len(f.words) > 1 for w in f.words),
    )


def test_a_scene_laid_out_from_remembered_form_facts_is_laid_out_as_from_scratch() -> None:
    # each form's share of a scene is worked out once per process: scenes laid out later,
    # from the remembered facts, must come out as a scene laid out from scratch
    index = NameIndex(ENTITIES)
    rng = random.Random(11)
    names = [f.surface for f in index.forms]
    scenes = [tuple(rng.sample(names, rng.randint(1, len(names)))) for _ in range(40)]
    multi = 0
    for scene in [*scenes, *scenes]:
        got = scene_forms.__wrapped__(index, scene)
        multi += bool(got.by_size)
        assert (
            got.canon,
            got.variant_lengths,
            {k: [id(f) for f in v] for k, v in got.by_size.items()},
            {k: sorted(id(f) for f in v) for k, v in got.by_short.items()},
            [id(f) for f in got.voiced],
            [id(f) for f in got.single],
            got.anchor_words,
        ) == _layout(index, scene), scene
    assert multi > 0  # the multi-word branch was taken


def test_a_code_is_looked_up_in_the_index_once_whatever_the_scene(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A window code is looked up in the index's variants once per index: later scenes (the
    live scene is new on most turns that name someone) read the answer back and keep their
    own names, and every answer is the one worked out from scratch for that scene."""
    index = NameIndex(ENTITIES)
    looked_up: list[str] = []
    sharing = scene_module._sharing

    def counted(index: NameIndex, code: str) -> tuple:
        looked_up.append(code)
        return sharing(index, code)

    monkeypatch.setattr(scene_module, "_sharing", counted)
    rng = random.Random(5)
    letters = "0AFHJKLMNPRSTX"
    codes = {"".join(rng.choice(letters) for _ in range(rng.randint(1, 8))) for _ in range(800)}
    codes |= {c for form in index.forms for c in form.codes}
    codes |= {c + "T" for form in index.forms for c in form.codes}  # one letter more: hits
    scenes = [
        ("Keyleth", "Trinket", "Kima of Vord", "Vrel"),
        ("Kima of Vord", "Brannoc", "Vax'ildan", "Vex'ahlia", "Thessa Morn", "Keyleth"),
        ("Scanlan Shorthalt", "Clarota"),
    ]
    found = 0
    for names in scenes:
        scene = scene_forms(index, names)
        for code in sorted(codes):
            got = scene.forms_of_code(code)
            assert set(map(id, got)) == set(_sharing(index, names, code)), (names, code)
            found += bool(got)
    assert found >= 10
    assert sorted(looked_up) == sorted(codes)  # each code once, for all three scenes

