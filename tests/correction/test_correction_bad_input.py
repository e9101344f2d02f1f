"""Bad and unusual input: empty things, huge utterances, non-ASCII, apostrophes, hyphens."""

from __future__ import annotations

import pytest

from glyphoxa_pipelines.correction import (
    Corrector,
    NameIndex,
    build_index,
    correct,
    keyword_list,
    parse_entity_lines,
)
from glyphoxa_pipelines.memory.models import Entity


def test_empty_and_blank_text() -> None:
    index = NameIndex(["Eldrinax"])
    for text in ["", " ", "\n\n", "\t \r\n", "...", "!?"]:
        result = correct(text, index)
        assert (result.text, result.raw_text, result.corrections) == (text, text, [])


def test_empty_entity_list_changes_nothing() -> None:
    for entities in ([], NameIndex([]), ["", "   "], [("", [""])]):
        result = correct("elder nacks lives in iron hold", entities)
        assert result.text == "elder nacks lives in iron hold"
        assert result.corrections == []


def test_text_must_be_a_string() -> None:
    with pytest.raises(TypeError):
        correct(None, ["Eldrinax"])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        NameIndex([42])  # type: ignore[list-item]


def test_ten_thousand_word_utterance() -> None:
    names = ["Eldrinax", "Tower of Whispers", "Ironhold"] + [f"Zarn{i}ok" for i in range(50)]
    index = NameIndex(names)
    filler = "the party walks along the road and talks about the weather again "
    words = (filler * 900).split()[:9_990]
    text = " ".join(words[:5000] + ["elder", "nacks"] + words[5000:] + ["iron", "hold"])
    result = correct(text, index)
    assert len(text.split()) == 9_994
    assert [c.replacement for c in result.corrections] == ["Eldrinax", "Ironhold"]
    assert result.text == text.replace("elder nacks", "Eldrinax").replace("iron hold", "Ironhold")


def test_non_ascii_names_and_text() -> None:
    index = NameIndex(["Zoë Vashti", "Ñandúmar", "Добрыня", "Æthelrod", "東京丸"])
    assert correct("ask zoe vashti", index).text == "ask Zoë Vashti"
    assert correct("el nandumar llega", index).text == "el Ñandúmar llega"
    assert correct("и добрыня пришёл", index).text == "и Добрыня пришёл"
    assert correct("Æthelrod is here", index).corrections == []
    assert correct("東京丸に乗る", index).corrections == []
    for text in ["日本語のテキストです", "naïve café façade 🐉🔥", "Ωμέγα λόγος", "ä ö ü ß"]:
        result = correct(text, index)
        assert result.text == text
        assert result.corrections == []


def test_names_with_apostrophes_and_hyphens() -> None:
    index = NameIndex(["K'Varn", "Jean-Luc Tavi", "Vax'ildan", "Ty'rex"])
    assert correct("beware kvarn", index).text == "beware K'Varn"
    assert correct("beware k varn", index).text == "beware K'Varn"
    assert correct("ask jean luc tavi", index).text == "ask Jean-Luc Tavi"
    assert correct("Vax’ildan waits", index).corrections == []  # typographic apostrophe
    assert correct("vaxildan's dagger", index).text == "Vax'ildan's dagger"
    assert correct("tyrex roars", index).text == "Ty'rex roars"


def test_apostrophes_and_hyphens_in_ordinary_text_stay() -> None:
    index = NameIndex(["Murghol", "Vax'ildan", "Halfelm"])
    for text in [
        "the half-elf can't, won't and shouldn't",
        "Mur-ghol?",  # a speaker spelling the name out on purpose
        "don't Vax-inate them",
        "'tis the rock 'n' roll o'clock",
        "it's Murghol's",
    ]:
        assert correct(text, index).text == text


def test_index_from_entity_objects_and_reuse() -> None:
    entities = [
        Entity(campaign_id="c", id="e1", type="npc", name="Eldrinax", aliases=["The Red"]),
        Entity(campaign_id="c", id="e2", type="location", name="Ironhold"),
    ]
    index = build_index(entities)
    assert build_index(index) is index
    assert correct("elder nacks", index).corrections[0].entity == "Eldrinax"
    corrector = Corrector(entities)
    assert corrector("to iron hold").text == "to Ironhold"


def test_keyword_list_and_entity_lines() -> None:
    pairs = parse_entity_lines(
        ["# comment", "", "Vex'ahlia|Vex| Lady Vex ", "Eldrinax", "Vex'ahlia|Vex", "  |  "]
    )
    assert pairs == [
        ("Vex'ahlia", ["Vex", "Lady Vex"]),
        ("Eldrinax", []),
        ("Vex'ahlia", ["Vex"]),
    ]
    assert keyword_list(pairs) == ["Vex'ahlia", "Vex", "Lady Vex", "Eldrinax"]
    assert keyword_list([]) == []


def test_entity_specs_index_pickles_and_names_with_camel_prefixes() -> None:
    import pickle

    index = NameIndex(
        [("Vex'ahlia", "Vex", "Lady Vex"), ["Ironhold", ["Iron Hold Keep"]], "McKraggen"]
    )
    assert index.keywords == (
        "Vex'ahlia",
        "Vex",
        "Lady Vex",
        "Ironhold",
        "Iron Hold Keep",
        "McKraggen",
    )
    clone = pickle.loads(pickle.dumps(index))
    assert correct("ask mckragen", clone).text == "ask McKraggen"
    assert correct("ask McKragen", clone).text == "ask McKraggen"
