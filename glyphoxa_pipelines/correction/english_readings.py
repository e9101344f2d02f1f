"""How ordinary each heard word is to the context stage: a word is read as the English word it
inflects or owns.

The context stage sets its bars by a word's English frequency (Zipf): an ordinary word
("backs") becomes a name only with the scene and Whisper's doubt and at a close match, a word
no English list holds at a looser bar, since it is likelier a name Whisper had no tokens for.
The frequency of the exact spelling undersells inflected and possessive forms: tiny.en writes
a plural or a verb with an apostrophe ("taking beach walks" heard as "Beach Walk's", Zipf 1.41
against 4.32 for "walks" and 5.08 for "walk"), and a plain inflection can fall under the bar
too ("relaxes" 2.92, "relax" 4.29). Read at those spellings' Zipf, the words count as made up
and meet the loose bar ("Walk's" became Vax at 0.78).

So a word under `common_zipf` is read as its letters without an apostrophe when those are
ordinary English ("walks"), and a listed English word form (`english_zipf` or more) as its
most frequent stem (`name_index.english_stems`: less "-s", "-es", "-ed", "-ing") when that is
ordinary ("relax"). A spelling English text never shows keeps its own frequency, however
ordinary its stem: "Clared", heard for "Clarota's", is no past tense of "clare". So does a
known name, or a word whose stem is one ("Scanlan's"), as in stage 1, and a made-up word with
a possessive ("Kiela's": "kiela" is no English).

This replaces the ninth pass's guard (`apostrophe_words`), which withdrew such a fix after the
context stage had made it; the bar is now the right one to begin with.
"""

from __future__ import annotations

from glyphoxa_pipelines.correction.models import CorrectionConfig
from glyphoxa_pipelines.correction.name_index import english_stems
from glyphoxa_pipelines.correction.phonetic import Scan

_KEPT = 65_536  # words: a campaign's rare words are a few thousand
_UNDER = 0.999  # a stem's Zipf is kept just under the function words'
# per (common_zipf, english_zipf): a rare word's normalized spelling → the ordinary word it is
# read as, with its Zipf, or None when it is read as written (most rare words: names, made-up
# words); a plain dict, since a line's context stage asks for each rare word of it
_LIFTS: dict[tuple[float, float], dict[str, tuple[str, float] | None]] = {}


def _lift(norm: str, common_zipf: float, english_zipf: float) -> tuple[str, float] | None:
    """The ordinary English word `norm` is read as, and its Zipf: itself when it is ordinary
    ("walks", written "walk's"); its most frequent stem when it is itself a listed English word
    form ("relax" for "relaxes", 2.92) and that stem is ordinary; else None. A spelling English
    text never shows ("clared", 0.0; "clairs", 1.17) is no inflection, whatever its stem:
    Whisper's spelling of a name."""
    stems = english_stems(norm)  # itself first
    own = stems[0][1]
    if own < english_zipf:
        return None
    best = stems[0] if own >= common_zipf else max(stems, key=lambda stem: stem[1])
    return best if best[1] >= common_zipf else None


def english_readings(scan: Scan, names: dict[str, object], cfg: CorrectionConfig) -> list[float]:
    """The Zipf the context stage reads each word of `scan` at (`names`: the index's names by
    spelling, `NameIndex.by_joined`). Only words under `common_zipf` are looked at: most words
    of a line are ordinary as written, and the list is the scan's own when none changes. An
    inflected word reads as a content word however frequent its stem ("back" is 6.04, at the
    function words' `function_zipf`): the context stage lets function words pass at a window's
    edge, and "Back's" is no "the"."""
    common_zipf, english_zipf = cfg.common_zipf, cfg.english_zipf
    zipfs = scan.zipfs
    rare = [k for k, zipf in enumerate(zipfs) if zipf < common_zipf]
    if not rare:
        return zipfs
    lifts = _LIFTS.setdefault((common_zipf, english_zipf), {})
    norms = scan.norms
    out: list[float] | None = None
    for k in rare:
        norm = norms[k]
        if norm in lifts:
            lift = lifts[norm]
        else:
            if len(lifts) >= _KEPT:
                lifts.clear()
            lift = lifts[norm] = _lift(norm, common_zipf, english_zipf)
        if lift is None or norm in names or lift[0] in names:
            continue
        if out is None:
            out = list(zipfs)
        out[k] = min(lift[1], _UNDER * cfg.function_zipf)
    return zipfs if out is None else out
