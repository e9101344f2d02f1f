"""A window's facts read in one look-up (`window_codes`) must say what the separate look-ups
said: its codes, the index's names of each code, and, for every scene, whether the scene has
a form sharing a variant with a code, or a one-word form whose code cut short of its last
sound is the code (the context stage asks the scene only then)."""

from __future__ import annotations

import itertools
import random

from glyphoxa_pipelines.correction import NameIndex
from glyphoxa_pipelines.correction import window_codes as module
from glyphoxa_pipelines.correction.confusions import fold
from glyphoxa_pipelines.correction.name_index import normalize, phonetic_codes
from glyphoxa_pipelines.correction.scene_forms import scene_forms
from glyphoxa_pipelines.correction.window_codes import (
    cut_short_names,
    sharing_names,
    window_codes,
    window_facts,
)
from tests.support.party_names import PARTY_NAMES

ENTITIES = PARTY_NAMES
HEARD = ["kila", "bex", "vacks", "scamlin", "trinkit", "drinkit", "grok", "claratoe", "borrel"]
HEARD += ["thessaborn", "brannock", "kima", "tuberus", "strongjaw", "table", "the", "zzq"]


def test_a_window_brings_its_codes_and_the_index_names_of_each() -> None:
    index = NameIndex(ENTITIES)
    for heard in HEARD:
        codes, facts = window_facts(index, heard)
        assert codes == phonetic_codes(heard)
        assert [fact.code for fact in facts] == list(codes)
        for fact in facts:
            assert fact.size == len(fact.code)
            assert list(fact.named) == list(index.by_code.get(fact.code, ()))
    # "trinkit" has Trinket's very code: the look-up must find it, not an empty answer
    _, facts = window_facts(index, "trinkit")
    assert any(form.canonical == "Trinket" for fact in facts for form in fact.named)


def test_a_scene_without_a_sharing_name_has_no_form_for_the_code() -> None:
    """Every scene, every window code: the scene's own look-up finds forms only when the
    scene holds a name sharing a variant, so skipping it otherwise changes nothing; and some
    codes do find forms (a test that found none would prove nothing)."""
    index = NameIndex(ENTITIES)
    names = [normalize(name).split()[0] for name in ENTITIES] + ENTITIES
    rng = random.Random(3)
    scenes = [tuple(rng.sample(ENTITIES, rng.randint(1, 5))) for _ in range(40)]
    scenes += [(name,) for name in names]
    found = skipped = cut = 0
    for scene, heard in itertools.product(scenes, HEARD):
        in_play = scene_forms(index, scene)
        for fact in window_facts(index, heard)[1]:
            code, cut_short = fact.code, cut_short_names(index, fact.code)
            sharing = sharing_names(index, code)
            forms = in_play.forms_of_code(code)
            if forms:
                found += 1
                assert not in_play.canon.isdisjoint(sharing), (scene, heard, code)
                assert {form.canonical for form in forms} <= sharing
            elif in_play.canon.isdisjoint(sharing):
                skipped += 1
            shorts = in_play.by_short.get(fold(code), ())
            if shorts:  # a scene name cut short of its last sound ("kila" for Keyleth)
                cut += 1
                assert {form.canonical for form in shorts} <= cut_short, (scene, heard, code)
            assert bool(shorts) == (not in_play.canon.isdisjoint(cut_short))
    assert found > 50 and skipped > 50 and cut > 5


def test_the_memo_is_read_by_spelling_and_stays_bounded(monkeypatch) -> None:
    index = NameIndex(ENTITIES)
    monkeypatch.setattr(module, "WINDOWS_KEPT", 4)
    kept = window_codes(index)
    kept.clear()
    first = window_facts(index, "kila")
    assert kept["kila"] is first
    assert window_facts(index, "kila")[1][0] is first[1][0]  # made again, the same code facts
    for heard in HEARD:
        window_facts(index, heard)
        assert len(kept) <= 4
    assert window_codes(NameIndex(["Keyleth"])) is not kept  # one memo per index
    # spellings with one code share the code's facts, in a memo bounded as well
    kila, kiela = window_facts(index, "kila")[1], window_facts(index, "kiela")[1]
    assert kila[0].code == kiela[0].code and kila[0] is kiela[0]
    monkeypatch.setattr(module, "CODES_KEPT", 2)
    module._codes_kept(index).clear()
    for heard in HEARD:
        kept.clear()
        window_facts(index, heard)
        assert len(module._codes_kept(index)) <= 2
