"""A name said with a possessive ("Scanlan's") and misheard ("scamlin's", "Kiela's").

The context stage reads each word as written, so the possessive's S runs on after the name's
last sound: "Kiela's" is no longer a sound short of Keyleth, "Clerida's" no longer has
Clarota's code, and a fix that does match writes the name over the whole word and drops the
"'s". Stage 1 reads a possessive word both ways (`Scan.variants`); the context stage gets the
same by a second run over the text with each possessive ending masked. The mask keeps every
offset and every whitespace word (Whisper's confidences still line up with the words), and it
parts the word from the next, since a name ends where its possessive does. A fix found that
way ends before the "'s", which stays as it was said.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterator, Sequence
from dataclasses import dataclass

from glyphoxa_pipelines.correction.context import confidences_at
from glyphoxa_pipelines.correction.models import Correction, CorrectionConfig
from glyphoxa_pipelines.correction.name_index import normalize, word_zipf

# "'s" after a word of letters and before no further letter ("Kiela's", not "'sup"); the curly
# apostrophes Whisper and editors write count too
_POSSESSIVE = re.compile(r"(?<=[^\W\d_]{2})['’ʼ][sS](?![^\W_])")
_APOSTROPHES = ("'", "’", "ʼ")
_WORD_BEFORE = re.compile(r"[^\W\d_]+$")
_STRETCH = 24  # letters read back at a time for the word before a possessive
# as long as "'s", no letter, no space: the word before ends there and joins nothing after
_MASK = "--"


@dataclass(frozen=True, slots=True)
class MaskedPossessives:
    """The text with each possessive ending masked, and where those endings began."""

    text: str
    base_ends: frozenset[int]


def mask_possessives(
    text: str,
    word_confidences: Sequence[float] | None,
    names: Container[str],
    cfg: CorrectionConfig,
) -> MaskedPossessives | None:
    """`text` with the possessive "'s" masked where the word before may be a misheard name, or
    None when there is no such word (most lines: the second run costs a whole context pass).
    Left as they are: the "'s" of a function word ("it's", "that's": a contraction), of a name
    heard right (`names`: normalized spellings), and of an ordinary word Whisper was sure of
    (the context stage would change it in neither reading)."""
    ends = []
    for m in _possessives(text):
        word = _word_before(text, m.start())
        if word is None:
            continue
        zipf = word_zipf(word.group())
        if zipf >= cfg.function_zipf or normalize(word.group()) in names:
            continue
        if zipf >= cfg.common_zipf and (
            confidences_at(text, [m.start()], word_confidences)[0] >= cfg.unsure_confidence
        ):
            continue
        ends.append(m.start())
    if not ends:
        return None
    masked = list(text)
    for end in ends:
        masked[end : end + len(_MASK)] = _MASK
    return MaskedPossessives("".join(masked), frozenset(ends))


def _possessives(text: str) -> list[re.Match[str]]:
    """`_POSSESSIVE.finditer(text)`, tried only where an apostrophe stands: a search tries the
    look-behind at every position of the line, and most lines hold no "'s" (a match is two
    characters, the second no apostrophe, so matches tried apart never overlap)."""
    at = sorted(k for mark in _APOSTROPHES if mark in text for k in _positions(text, mark))
    return [m for k in at if (m := _POSSESSIVE.match(text, k)) is not None]


def _positions(text: str, mark: str) -> Iterator[int]:
    k = text.find(mark)
    while k >= 0:
        yield k
        k = text.find(mark, k + 1)


def _word_before(text: str, end: int) -> re.Match[str] | None:
    """`_WORD_BEFORE.search(text, 0, end)`: the letters that run up to `end`, read back a
    stretch at a time. A search from the start of the line tries every position before the
    word, once per possessive; a run found at a stretch's start may begin earlier."""
    low = end
    while True:
        low = max(0, low - _STRETCH)
        word = _WORD_BEFORE.search(text, low, end)
        if word is None or word.start() > low or low == 0:
            return word


def with_possessives(
    found: Sequence[Correction], masked_found: Sequence[Correction], masked: MaskedPossessives
) -> list[Correction]:
    """The context stage's corrections of the text as written (`found`) joined with those of
    the masked text (`masked_found`) that end where a possessive begins: the name written before
    the "'s". Where both readings changed the same word, the same entity keeps the possessive
    reading and two different entities change nothing, as when two names tie."""
    extra = [c for c in masked_found if c.end in masked.base_ends]
    if not extra:
        return list(found)
    dropped: set[int] = set()
    out: list[Correction] = []
    for c in extra:
        rivals = [k for k, f in enumerate(found) if f.start < c.end and c.start < f.end]
        dropped.update(rivals)
        if all(found[k].entity == c.entity for k in rivals):
            out.append(c)
    out += [f for k, f in enumerate(found) if k not in dropped]
    return sorted(out, key=lambda c: c.start)
