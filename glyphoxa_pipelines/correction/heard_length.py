"""A name is not heard in far fewer syllables than it has.

Every guessing rule matches consonants: Double Metaphone codes keep a word's consonants and
drop its vowels, and Jaro-Winkler forgives the letters a short word lacks. So one spoken
syllable can carry the whole consonant frame of a longer name: "glares", heard as "clairs"
(KLRS), is the frame of Clarota (KLRT) cut short of its last sound, and the context stage
wrote the three-syllable name for the one-syllable word. Whisper drops an unstressed syllable
of a name it has no tokens for ("Lire" for Lyra, "Hires" for Hieris), but a heard span with
`MAX_LOST` or more syllables fewer than the name is another, shorter word that was said, not
the name.

Syllables are counted from spelling: each run of vowels is one, a silent final "e" ("stone")
and the silent "e" of a final "-es" or "-ed" ("glares", "named") are none, and a name that is
two ordinary words glued ("Whitestone", "Stoneskin") counts as those words. It is a rough
count, good to a syllable on English and made-up names alike; the rule asks for two. The
errors lean one way: a name's "e" is always read as silent (a name is never counted longer
than the rules allow), a heard word's only when the word is English. Whisper's spelling of a
name it has no tokens for is no English word, and its final "e" may be sounded: "Clared is
there", said "Clarota's there", is two syllables heard, and stays Clarota.

What stays: fixes that lose one syllable or none; the exact, respelled and aligned forms
(they are no guess); stage 1's fixes (the pipeline hands the guard the context stage's
fixes only: over stage 1's too, it cost the synthetic bench right fixes of names split into
English-looking words).
"""

from __future__ import annotations

import re
from functools import lru_cache

from glyphoxa_pipelines.correction.models import Correction, CorrectionConfig
from glyphoxa_pipelines.correction.name_index import english_zipf, word_zipf

MAX_LOST = 2  # syllables fewer than the name at which a heard span is another word
GUESSES = frozenset({"phonetic", "fuzzy", "context"})

_PARTS = re.compile(r"[a-z]+")
_VOWEL_RUNS = re.compile(r"[aeiouy]+")
_SOUNDED_ES = ("ses", "xes", "zes", "ches", "shes", "ges", "ces")


def _part_syllables(part: str, silent_e: bool = True) -> int:
    runs = len(_VOWEL_RUNS.findall(part[1:] if part.startswith("y") else part))
    if not silent_e or runs < 2:
        return runs
    if (
        (part.endswith("e") and not part.endswith(("le", "ee", "ie")))
        or (part.endswith("es") and not part.endswith(_SOUNDED_ES) and part[-3] not in "aeiouy")
        or (part.endswith("ed") and part[-3] not in "aeiouytd")
    ):
        runs -= 1
    return runs  # none for a part without a vowel: the "s" of "Walk's", the "t" of "don't"


# a word's count is kept per word: the guard counts each fix's heard words and name, the same
# names and words come back fix after fix, and a word's glued-word cuts are several look-ups
@lru_cache(maxsize=8192)
def _word_syllables(part: str, english_only: float | None, common_zipf: float = 3.0) -> int:
    """A word's syllables, or those of the two ordinary words it glues ("stone" + "skin":
    the first word's silent "e" is no syllable of its own). With `english_only`, a final "e"
    is silent only in a word at least that frequent in English."""
    for cut in range(3, len(part) - 2):
        head, tail = part[:cut], part[cut:]
        if word_zipf(head) >= common_zipf and english_zipf(tail) >= common_zipf:
            return _part_syllables(head) + _part_syllables(tail)
    silent_e = english_only is None or word_zipf(part) >= english_only
    return _part_syllables(part, silent_e)


def syllables(text: str, english_only: float | None = None) -> int:
    """About how many syllables `text` is said in (one at least); with `english_only`, the
    silent-"e" rules hold only for English words (Zipf of `english_only` or more)."""
    parts = _PARTS.findall(text.lower())
    return max(sum(_word_syllables(part, english_only) for part in parts), 1)


def too_short(c: Correction, cfg: CorrectionConfig) -> bool:
    """The heard words of a guessed fix are `MAX_LOST` or more syllables shorter than the
    name it wrote."""
    heard = syllables(c.original, english_only=cfg.english_zipf)
    return syllables(c.replacement) - heard >= MAX_LOST


def heard_in_full(corrections: list[Correction], cfg: CorrectionConfig) -> list[Correction]:
    """`corrections` without the guesses whose heard words are far shorter than the name."""
    return [c for c in corrections if c.method not in GUESSES or not too_short(c, cfg)]
