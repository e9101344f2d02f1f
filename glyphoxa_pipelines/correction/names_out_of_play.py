"""A name out of play comes from a guess only on evidence that chance rarely gives: several
words Whisper doubted, a word of the name heard exactly, or a long shared code.

The context stage accepts a window on one of two signals: the scene, or Whisper's doubt. On
doubt alone, a window that sounds roughly like one of a campaign's thousands of names is
mostly chance, not evidence, and the more names a campaign holds, the more such near sounds
there are. Two shapes of it recur on real speech:

- one word: tiny.en doubts many words it heard right ("dinette", "shithead"), and a misheard
  name of the scene often sounds a little like some other name too ("Kila", said for
  Keyleth, scores higher against an unrelated "Keill");
- a doubted word glued to a word Whisper was sure of: "with Kila" read as "Withgill", "am
  Rianna" as "Amryn", "billet is" as "Beill'theis". The sure word was said; only the other
  one is in question, and it alone is the first shape again.

So a context fix to a name outside the scene stands only when it spans
several words and either one of them is the name's own word, heard exactly ("Thessa born" for
Thessa Morn, "Box Machina" for Vox Machina), or Whisper was unsure of every one (under
`unsure_confidence`: "Elder Nax" for Eldrinax, a name heard split). Otherwise the words are
left as heard.

With no scene known, every name is as likely as any other, so the words alone must carry the
evidence: a lone doubted word becomes a name only when it shares with it a Double Metaphone
code of `unplayed_code_length` (4) sounds or more ("Tabirias" for Tiberius, TPRS). A short code
is chance among thousands of names ("mem" written Maem, MM; "pcero" Pouser, PSR: everyday talk
with no scene, 3,000 and 10,000 names; tenth pass, the eighth let doubt alone fix there). With
a scene known, a lone word out of it is dropped whatever its code: the table is talking about
other names.

Stage 1's sound-alike fixes meet the same chance once a scene is known
(`sounded_in_play_only`, tenth pass).

What stays: fixes to scene names; stage 1's fixes with no scene (they stand on the sound
alone) and its fixes that are no sound-alike guess (respelled, word by word, spelling only);
without a scene, the multi-word context fixes the rule above keeps; a multi-word fix when the
confidences do not fit the words (no word can be told sure).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from glyphoxa_pipelines.correction.heard_span import words_under
from glyphoxa_pipelines.correction.models import Correction, CorrectionConfig
from glyphoxa_pipelines.correction.name_index import NameIndex, normalize, phonetic_codes
from glyphoxa_pipelines.correction.scene_rivals import scene_of


def lone_word(c: Correction) -> bool:
    """The fix rewrote one heard word (a hyphenated or apostrophed word is one word)."""
    return len(c.original.split()) == 1


def long_code_shared(c: Correction, length: int) -> bool:
    """The word heard and the name share a Double Metaphone code of `length` sounds or more
    ("Tabirias" and Tiberius, TPRS): among thousands of names, a short code ("mem" and Maem,
    MM) is shared by chance, a long one seldom."""
    heard = phonetic_codes(normalize(c.original))
    return any(
        len(code) >= length for code in phonetic_codes(normalize(c.replacement)) if code in heard
    )


def fused(c: Correction) -> bool:
    """The fix wrote more heard words as fewer name words ("stay true" as Stathru)."""
    return len(c.original.split()) > len(c.replacement.split())


def anchored(c: Correction) -> bool:
    """One of the words heard is one of the name's own words, heard exactly ("Thessa born"
    for Thessa Morn): the name is said, not guessed from a near sound."""
    own = {normalize(w) for w in c.replacement.split()}
    return any(normalize(w) in own for w in c.original.split())


def doubted_through(
    text: str, c: Correction, word_confidences: Sequence[float] | None, cfg: CorrectionConfig
) -> bool:
    """Whisper was unsure of every word `c` rewrote; True when the confidences do not fit
    the text's words (nothing to judge by)."""
    heard = words_under(text, c, word_confidences) if word_confidences else None
    return heard is None or all(p < cfg.unsure_confidence for _, p in heard)


def in_play_only(
    text: str,
    corrections: list[Correction],
    index: NameIndex,
    scene: Iterable[str] | None,
    word_confidences: Sequence[float] | None,
    cfg: CorrectionConfig,
) -> list[Correction]:
    """The context stage's `corrections` without names out of play on too little doubt."""
    guesses = [c for c in corrections if c.method == "context"]
    if not guesses:  # most lines: no such fix, the scene is not looked at
        return corrections
    # no scene known: no name is in play, but none is out of it either, so a lone word
    # stands on a long code alone
    entities = scene_of(index, scene)[0] if scene else frozenset()
    dropped = {
        id(c)
        for c in guesses
        if c.entity not in entities
        and (
            (bool(scene) or not long_code_shared(c, cfg.unplayed_code_length))
            if lone_word(c)
            else not (anchored(c) or doubted_through(text, c, word_confidences, cfg))
        )
    }
    return [c for c in corrections if id(c) not in dropped] if dropped else corrections


def sounded_in_play_only(
    text: str,
    corrections: list[Correction],
    settled: list[tuple[int, int]],
    index: NameIndex,
    scene: Iterable[str] | None,
    word_confidences: Sequence[float] | None,
    cfg: CorrectionConfig,
) -> tuple[list[Correction], list[tuple[int, int]]]:
    """Stage 1's `corrections` and `settled` spans without its sound-alike fixes to names out
    of play on too little evidence (tenth pass), when the scene is known.

    Stage 1 writes a name on its Double Metaphone code and spelling alone, which is the best it
    can do with no scene (the synthetic bench, a campaign's first line). With the scene known
    and the name outside it, the same chance as in the context stage returns, the more so the
    more names a campaign holds (3,000 to 20,000 on tune): "Dush" became Dysh (TX), "Shami"
    Shaim (XM), "halan's" Hallyian's (HLN), "dooger" Dojer (TJR); "stay true" (both words
    sure) Stathru, "cast hail" Caisttail, "pod est" Poudest. So such a fix stands only as the
    context stage's would: a lone word on a shared code of `unplayed_code_length` sounds
    ("Talison" for Taliesin, TLSN, stays), several words fused into a name only when anchored
    or doubted throughout. Spelling-only (fuzzy), respelled and word-by-word fixes stay.
    """
    guesses = [c for c in corrections if c.method == "phonetic"]
    if not scene or not guesses:  # most lines: nothing guessed, the scene is not looked at
        return corrections, settled
    entities, _ = scene_of(index, scene)
    withdrawn = {
        (c.start, c.end)
        for c in guesses
        if c.entity not in entities
        and (
            not long_code_shared(c, cfg.unplayed_code_length)
            if lone_word(c)
            else fused(c) and not (anchored(c) or doubted_through(text, c, word_confidences, cfg))
        )
    }
    if not withdrawn:
        return corrections, settled
    return (
        [c for c in corrections if (c.start, c.end) not in withdrawn],
        [span for span in settled if span not in withdrawn],
    )
