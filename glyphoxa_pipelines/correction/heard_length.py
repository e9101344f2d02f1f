"""A name is not heard in far fewer syllables than it has.

Every guessing rule matches consonants: Double Metaphone codes keep a word's consonants and
drop its vowels, and Jaro-Winkler forgives the letters a short word lacks. So one spoken
syllable can carry the whole consonant frame of a longer name: "glares", heard as "clairs"
(KLRS), is the frame of Clarota (KLRT) cut short of its last sound, and the context stage
wrote the three-syllable name for the one-syllable word. Whisper drops an unstressed syllable
of a name it has no tokens for ("Kash" for Kashaw, "Tabirias" for Tiberius), but a heard
span with `MAX_LOST` or more syllables fewer than the name is another, shorter word that was
said, not the name.

Syllables are counted from spelling: each run of vowels is one, a silent final "e" ("stone")
and the silent "e" of a final "-es" or "-ed" ("glares", "named") are none, and a name that is
two ordinary words glued ("Whitestone", "Stoneskin") counts as those words. It is a rough
count, good to a syllable on English and made-up names alike; the rule asks for two.

What stays: fixes that lose one syllable or none; the exact, respelled and aligned forms
(they are no guess).
"""

from __future__ import annotations

import re

from glyphoxa_pipelines.correction.models import Correction
from glyphoxa_pipelines.correction.name_index import english_zipf, word_zipf

MAX_LOST = 2  # syllables fewer than the name at which a heard span is another word
GUESSES = frozenset({"phonetic", "fuzzy", "context"})

_PARTS = re.compile(r"[a-z]+")
_VOWEL_RUNS = re.compile(r"[aeiouy]+")
_SOUNDED_ES = ("ses", "xes", "zes", "ches", "shes", "ges", "ces")


def _part_syllables(part: str) -> int:
    runs = len(_VOWEL_RUNS.findall(part[1:] if part.startswith("y") else part))
    if runs > 1 and (
        (part.endswith("e") and not part.endswith(("le", "ee", "ie")))
        or (part.endswith("es") and not part.endswith(_SOUNDED_ES) and part[-3] not in "aeiouy")
        or (part.endswith("ed") and part[-3] not in "aeiouytd")
    ):
        runs -= 1
    return runs  # none for a part without a vowel: the "s" of "Walk's", the "t" of "don't"


def _word_syllables(part: str, common_zipf: float = 3.0) -> int:
    """A word's syllables, or those of the two ordinary words it glues ("stone" + "skin":
    the first word's silent "e" is no syllable of its own)."""
    for cut in range(3, len(part) - 2):
        head, tail = part[:cut], part[cut:]
        if word_zipf(head) >= common_zipf and english_zipf(tail) >= common_zipf:
            return _part_syllables(head) + _part_syllables(tail)
    return _part_syllables(part)


def syllables(text: str) -> int:
    """About how many syllables `text` is said in (one at least)."""
    return max(sum(_word_syllables(part) for part in _PARTS.findall(text.lower())), 1)


def too_short(c: Correction) -> bool:
    """The heard words of a guessed fix are `MAX_LOST` or more syllables shorter than the
    name it wrote."""
    return syllables(c.replacement) - syllables(c.original) >= MAX_LOST


def heard_in_full(corrections: list[Correction]) -> list[Correction]:
    """`corrections` without the guesses whose heard words are far shorter than the name."""
    return [c for c in corrections if c.method not in GUESSES or not too_short(c)]
