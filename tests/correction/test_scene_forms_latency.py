"""The scene's look-up by a window's code, made without building the code's variant set, must
find exactly the forms that share a variant with it, and its per-scene memo stays bounded."""

from __future__ import annotations

import itertools
import random

import pytest

from glyphoxa_pipelines.correction import NameIndex
from glyphoxa_pipelines.correction import scene_forms as scene_module
from glyphoxa_pipelines.correction.confusions import code_variants
from glyphoxa_pipelines.correction.name_index import normalize, phonetic_codes
from glyphoxa_pipelines.correction.scene_forms import scene_forms

ENTITIES = [
    "Keyleth",
    "Vex'ahlia",
    "Vax'ildan",
    "Scanlan Shorthalt",
    "Trinket",
    "Grog Strongjaw",
    "Percival de Rolo",
    "Clarota",
    "Thessa Morn",
    "Brannoc",
    "Vrel",
    "Kima of Vord",
]
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


def _by_variant_sets(scene: scene_module.SceneForms, code: str) -> set[int]:
    return {id(f) for v in code_variants(code) for f in scene.by_variant.get(v, ())}


def test_code_look_up_finds_the_forms_of_every_shared_variant() -> None:
    index = NameIndex(ENTITIES)
    scene = scene_forms(index, tuple(ENTITIES))
    rng = random.Random(3)
    codes = {c for text in HEARD for c in phonetic_codes(normalize(text))}
    codes |= {c for form in index.forms for c in form.codes}
    # random codes of the letters Double Metaphone writes, short and long
    letters = "0AFHJKLMNPRSTX"
    codes |= {"".join(rng.choice(letters) for _ in range(rng.randint(1, 9))) for _ in range(3000)}
    found_any = 0
    for code in sorted(codes):
        got = scene.forms_of_code(code)
        assert {id(f) for f in got} == _by_variant_sets(scene, code), code
        assert scene.forms_of_code(code) is got  # the memo answers the second time
        found_any += bool(got)
    assert found_any > 20  # the check compared real hits, not only empty answers


def test_code_memo_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scene_module, "CODES_KEPT", 50)
    index = NameIndex(ENTITIES)
    scene = scene_forms(index, ("Keyleth", "Trinket"))
    for letters in itertools.islice(itertools.product("KLNRT", repeat=5), 400):
        scene.forms_of_code("".join(letters))
        assert len(scene.by_code) <= 50
    assert scene.forms_of_code("KLT") == scene.forms_of_code("KLT")
