"""An apostrophe Whisper wrote does not make an ordinary word a rare one.

The context stage sets its bar for one heard word by the word's English frequency: an ordinary
word ("backs") becomes a scene name only at `edge_threshold`, a word no English list holds at
a looser bar, since it is likelier a name Whisper had no tokens for. tiny.en sometimes writes a
plural or a verb with an apostrophe ("taking beach walks" heard as "Beach Walk's"), and the
possessive spelling is rare in English text (Zipf 1.41 for "walk's", 4.32 for "walks"). So the
word was read as made-up and met the looser bar: "Walk's" became Vax (0.78), in play.

The rule: a context fix of one heard word holding an apostrophe, whose letters without it
spell ordinary English (Zipf of `common_zipf` or more), must reach `edge_threshold`, the bar
the word would have met written without the apostrophe.

What stays: a name heard as a made-up word with a possessive ("Kiela's" for Keyleth's: "kielas"
is no English); a close match; fixes of several words; stage 1's fixes.
"""

from __future__ import annotations

from glyphoxa_pipelines.correction.models import Correction, CorrectionConfig
from glyphoxa_pipelines.correction.name_index import normalize, unify_apostrophes, word_zipf


def plain_word_apostrophed(heard: str, cfg: CorrectionConfig) -> bool:
    """`heard` is one word holding an apostrophe, and its letters are an ordinary word."""
    word = unify_apostrophes(heard.strip('.,!?;:"()'))
    return " " not in word and "'" in word and word_zipf(normalize(word)) >= cfg.common_zipf


def ordinary_bar(corrections: list[Correction], cfg: CorrectionConfig) -> list[Correction]:
    """The context stage's `corrections` without loose matches over one ordinary word that
    Whisper wrote with an apostrophe."""
    return [
        c
        for c in corrections
        if c.method != "context"
        or c.score >= cfg.edge_threshold
        or not plain_word_apostrophed(c.original, cfg)
    ]
