"""An apostrophe Whisper wrote does not make an ordinary word a rare one
(`correction/apostrophe_words.py`): "Beach Walk's", said "beach walks", is not Vax's."""

from __future__ import annotations

from glyphoxa_pipelines.correction import NameIndex, correct

INDEX = NameIndex([("Vax'ildan", ["Vax"]), "Keyleth", "Grog", "Trinket"])
PARTY = ("Vax'ildan", "Keyleth", "Grog", "Trinket")
# said (LoCoMo): "Glimpsing that calms me. Taking beach walks relaxes me."
WALKS = "Blancing that comes me, taking Beach Walk's relaxes me."
WALKS_CONF = [0.4042, 0.8882, 0.6806, 0.9636, 0.9533, 0.5046, 0.3761, 0.8886, 0.9965]


def test_an_ordinary_word_written_as_a_possessive_stays() -> None:
    # base: "Walk's" read at the possessive's Zipf (1.41) as a made-up word: Vax at 0.78
    assert correct(WALKS, INDEX, WALKS_CONF, scene=PARTY).text == WALKS


def test_a_made_up_word_with_a_possessive_still_becomes_the_name() -> None:
    # near miss, real (fifth pass): "Kiela's" for Keyleth's; "kielas" is no English
    line = "We go to Kiela's side."
    conf = [0.95, 0.95, 0.95, 0.3, 0.95]
    assert correct(line, INDEX, conf, scene=PARTY).text == "We go to Keyleth's side."


def test_an_apostrophed_word_close_to_the_name_still_becomes_it() -> None:
    # near miss: "Back's" (Vax said, heard as a possessive) sounds exactly like Vax (1.0)
    line = "Then Back's blades come down on the troll."
    conf = [0.95, 0.35, 0.9, 0.95, 0.95, 0.95, 0.95, 0.95]
    assert correct(line, INDEX, conf, scene=PARTY).text.startswith("Then Vax")
