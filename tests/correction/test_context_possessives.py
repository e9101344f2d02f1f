"""A misheard name said with a possessive (issue 13, fifth pass): the context stage reads the
word without its "'s" too, and a fix keeps the "'s" as it was said."""

from __future__ import annotations

from glyphoxa_pipelines.correction import CorrectionConfig, NameIndex, correct, possessive
from glyphoxa_pipelines.correction.context import context_corrections
from glyphoxa_pipelines.correction.possessive import mask_possessives

INDEX = NameIndex(["Keyleth", "Scanlan", "Clarota", "Grog", "Vex"])


def confidences(text: str, unsure: set[str], p: float = 0.4) -> list[float]:
    return [p if w.strip(",.!?") in unsure else 0.98 for w in text.split()]


def fixed(text: str, unsure: set[str], scene: list[str]) -> str:
    return correct(text, INDEX, confidences(text, unsure), scene=scene).text


def test_mask_keeps_offsets_and_whitespace_words() -> None:
    text = "It's Kiela's and Bex’s turn, isn't it?"
    masked = mask_possessives(text, None, INDEX.by_joined, CorrectionConfig())
    assert masked is not None
    assert len(masked.text) == len(text)
    assert len(masked.text.split()) == len(text.split())  # Whisper's confidences line up
    assert masked.text.startswith("It's Kiela-- and Bex-- turn")  # "It's" is no possessive
    assert masked.base_ends == {text.index("'s and"), text.index("’s turn")}
    cfg = CorrectionConfig()
    assert mask_possessives("No possessive here, isn't it? That's it.", None, (), cfg) is None
    # a name heard right, or an ordinary word said clearly, keeps its "'s" unread
    assert mask_possessives("Keyleth's and the killer's turn.", None, INDEX.by_joined, cfg) is None
    doubted = mask_possessives("The killer's turn.", [0.9, 0.4, 0.9], (), cfg)
    assert doubted is not None and doubted.text == "The killer-- turn."


def test_possessive_of_a_misheard_scene_name_keeps_its_s() -> None:
    text = "I grab scamlin's arm and run."
    assert fixed(text, {"scamlin's"}, ["Scanlan"]) == "I grab Scanlan's arm and run."


def test_possessive_s_no_longer_hides_a_name_a_sound_short() -> None:
    # "Kiela" is Keyleth less its last sound; the possessive's S used to run on after it
    text = "We go to Kiela's side."
    assert fixed(text, {"Kiela's"}, ["Keyleth"]) == "We go to Keyleth's side."
    text = "She heals Clerida's wound."
    assert fixed(text, {"Clerida's"}, ["Clarota"]) == "She heals Clarota's wound."


def test_possessives_that_stay() -> None:
    # an ordinary word, doubted, with a scene name of a near sound
    ordinary = "The killer's knife is sharp."
    assert fixed(ordinary, {"killer's"}, ["Keyleth"]) == ordinary
    # a name-like word with no known name near it
    kyle = "We go to Kyle's house."
    assert fixed(kyle, {"Kyle's"}, ["Keyleth", "Grog"]) == kyle
    # the same mishearing with its name out of play, and a name heard right
    assert fixed("We go to Kiela's side.", {"Kiela's"}, ["Grog"]) == "We go to Kiela's side."
    right = "Keyleth's staff glows."
    assert fixed(right, {"Keyleth's"}, ["Keyleth"]) == right


def test_possessive_ends_the_name_it_closes() -> None:
    # the word after a possessive never joins the name ("Grug's axe" is not one name)
    text = "He takes Grug's axe."
    result = correct(text, INDEX, confidences(text, {"Grug's"}), scene=["Grog"])
    assert result.text == "He takes Grog's axe."
    assert [(c.original, c.replacement) for c in result.corrections] == [("Grug", "Grog")]


def test_possessives_found_by_their_apostrophes_match_the_patterns_search() -> None:
    """The mask reads only where an apostrophe stands, and the word before a possessive back
    from it (issue 13, latency): the same ends and words as the patterns' search of the line,
    for a word longer than the stretch read back at once and for every apostrophe."""
    long_word = "Vorugalimandrastelinoquarthes"  # longer than one stretch read back
    text = f"It's {long_word}'s, 1ab's x's Bexʼs ’s Grog’S 'sup and Kiela'ss {long_word * 2}’s."
    found = possessive._possessives(text)
    assert [m.span() for m in found] == [m.span() for m in possessive._POSSESSIVE.finditer(text)]
    assert len(found) == 6  # It's, the long word's, 1ab's, Bexʼs, Grog’S and the longest's
    for m in found:
        word = possessive._word_before(text, m.start())
        assert word is not None
        assert word.span() == possessive._WORD_BEFORE.search(text, 0, m.start()).span()
    assert possessive._word_before(text, text.index("’s.")).group() == long_word * 2
    masked = mask_possessives(text, None, (), CorrectionConfig())
    assert masked is not None and f"{long_word * 2}--." in masked.text


def test_second_pass_walks_only_near_the_possessive_and_keeps_its_fixes() -> None:
    # `ending_at` (the masked reading's pass) must give every fix of the whole pass that ends
    # at a masked "'s", and nothing when the whole pass has none there
    cfg = CorrectionConfig()
    lines = [
        (
            "Then kill it and Kiela's cat run to scamlin's side.",
            {"kill", "it", "Kiela's", "scamlin's"},
        ),
        (
            "So kill it says the killer's knife is at Kyle's neck.",
            {"kill", "it", "killer's", "Kyle's"},
        ),
    ]
    found_any = found_none = False
    for text, unsure in lines:
        masked = mask_possessives(text, confidences(text, unsure), INDEX.by_joined, cfg)
        assert masked is not None
        whole = context_corrections(
            masked.text, INDEX, [], confidences(text, unsure), ("Keyleth", "Scanlan"), cfg
        )
        near = context_corrections(
            masked.text,
            INDEX,
            [],
            confidences(text, unsure),
            ("Keyleth", "Scanlan"),
            cfg,
            ending_at=masked.base_ends,
        )
        wanted = [c for c in whole if c.end in masked.base_ends]
        assert [c for c in near if c.end in masked.base_ends] == wanted
        assert near == (whole if wanted else [])
        found_any = found_any or bool(wanted)
        found_none = found_none or (bool(whole) and not wanted)
    assert found_any  # the first line's fixes end at its possessives
    assert found_none  # the second's one fix ("kill it") ends elsewhere: the pass gives none
