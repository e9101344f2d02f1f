"""The context stage reads a word as the English word it inflects or owns
(`correction/english_readings.py`): "Beach Walk's", said "beach walks", is not Vax's."""

from __future__ import annotations

from glyphoxa_pipelines.correction import NameIndex, correct
from glyphoxa_pipelines.correction.english_readings import english_readings
from glyphoxa_pipelines.correction.models import CorrectionConfig
from glyphoxa_pipelines.correction.phonetic import Scan

INDEX = NameIndex([("Vax'ildan", ["Vax"]), "Keyleth", "Grog", "Trinket"])
PARTY = ("Vax'ildan", "Keyleth", "Grog", "Trinket")
# said (LoCoMo): "Glimpsing that calms me. Taking beach walks relaxes me."
WALKS = "Blancing that comes me, taking Beach Walk's relaxes me."
WALKS_CONF = [0.4042, 0.8882, 0.6806, 0.9636, 0.9533, 0.5046, 0.3761, 0.8886, 0.9965]


def test_an_ordinary_word_written_as_a_possessive_stays() -> None:
    # ninth pass: "Walk's" read at the possessive's Zipf (1.41) as a made-up word: Vax at
    # 0.78; a guard withdrew it after the fact, now the word is read as "walks" (4.32)
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


def readings(line: str) -> dict[str, float]:
    scan = Scan(line)
    return dict(zip(scan.words, english_readings(scan, INDEX.by_joined, CONFIG), strict=True))


CONFIG = CorrectionConfig()


def test_a_possessive_or_an_inflection_of_an_ordinary_word_reads_as_that_word() -> None:
    read = readings("taking Beach Walk's relaxes me")
    assert read["Walk's"] >= CONFIG.common_zipf > Scan("Walk's").zipfs[0]  # "walks", 4.32
    assert read["relaxes"] >= CONFIG.common_zipf > Scan("relaxes").zipfs[0]  # "relax", 4.29


def test_a_frequent_stem_does_not_make_a_function_word() -> None:
    # "Back's": "backs" itself is ordinary (4.1); "back" (6.04) would read as a function word
    read = readings("Then Back's blades")
    assert CONFIG.common_zipf <= read["Back's"] < CONFIG.function_zipf


def test_a_spelling_english_never_shows_keeps_its_own_frequency() -> None:
    # near misses: "Clared" (for "Clarota's") is no past tense of "clare", "Kiela's" no
    # English, "Vax's" a name's possessive
    read = readings("Clared is there with Kiela's and Vax's")
    for word in ("Clared", "Kiela's", "Vax's"):
        assert read[word] < CONFIG.common_zipf
