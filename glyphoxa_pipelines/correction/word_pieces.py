"""The words of a piece of text between two spaces, with what matching needs to know of each.

Why a module: the scan of an utterance (`phonetic.Scan`) reads it piece by piece, and a
piece (a word with its punctuation: "Grog's", "Okay,") is tokenized and looked up once per
process, not once per utterance: words repeat, and the look-ups (normalizing, English
frequency, the plain-word tests) cost more than reading them back. Tokens never hold a
space, so a piece's tokens are the text's tokens in it.
"""

from __future__ import annotations

import re
from functools import lru_cache

from glyphoxa_pipelines.correction.dict_memo import dict_memo
from glyphoxa_pipelines.correction.name_index import normalize, word_zipf

TOKEN_RE = re.compile(r"[^\W_]+(?:['’ʼ\-][^\W_]+)*")
_CAMEL = re.compile(r"[a-z][A-Z]")
_NAME_PREFIX = re.compile(r"^(?:Mc|Mac|De|Di|La|Le|Van|Von)(?=[A-Z])")
_CONTRACTION = re.compile(r"['’ʼ](?:d|ll|re|ve|m|t)$|n['’ʼ]t$", re.IGNORECASE)
_POSSESSIVE = ("'s", "’s", "ʼs", "'S", "’S")
_CACHE = 200_000
_CLOSING = frozenset(",.?!;:")


@lru_cache(maxsize=_CACHE)
def _word_facts(word: str) -> tuple[str, float, int, str, float, bool]:
    """(normalized, zipf, base length, base normalized, base zipf, plain) of one word."""
    norm = normalize(word)
    zipf = word_zipf(word)
    if word.isascii() and word.isalpha() and (word.islower() or word[1:].islower()):
        # most words, cheaply: no digit, no apostrophe, no capital after the first letter
        plain = True
    else:
        plain = (
            not any(ch.isdigit() for ch in word)
            # camelCase runs are handles and hashtags ("FindGrog"), but "McGregor" is a name
            and _CAMEL.search(_NAME_PREFIX.sub("", word)) is None
            and _CONTRACTION.search(word) is None
        )
    if len(word) > 2 and word.endswith(_POSSESSIVE):
        base = word[:-2]
        return norm, zipf, len(base), normalize(base), word_zipf(base), plain
    return norm, zipf, len(word), norm, zipf, plain


def _spans(piece: str) -> list[tuple[int, int, str]]:
    """(start, end, word) of each token of a piece: a piece of letters, or of letters and one
    closing mark, is one word (most pieces; `TOKEN_RE` would find just that), the rest are
    read by `TOKEN_RE`."""
    if piece and piece.isascii():
        if piece.isalpha():
            return [(0, len(piece), piece)]
        if piece[-1] in _CLOSING and piece[:-1].isalpha():
            return [(0, len(piece) - 1, piece[:-1])]
    return [(m.start(), m.end(), m.group()) for m in TOKEN_RE.finditer(piece)]


# `piece_tokens`' results by piece: `Scan` reads them here and calls it for new pieces only
PIECES: dict[str, tuple[tuple[int, int, str, str, float, int, str, float, bool, bool], ...]] = {}


@dict_memo(_CACHE, PIECES)  # a plain dict: asked for every piece of every utterance
def piece_tokens(
    piece: str,
) -> tuple[tuple[int, int, str, str, float, int, str, float, bool, bool], ...]:
    """(start in the piece, length, word, normalized, zipf, base length, base normalized,
    base zipf, plain, capitalized) of each token of a piece of text between spaces."""
    out = []
    for start, end, word in _spans(piece):
        norm, zipf, base_len, base_norm, base_zipf, plain = _word_facts(word)
        if not norm:
            continue
        if start and piece[start - 1] in "#@/\\":
            plain = False  # a handle, a hashtag, a path
        out.append(
            (
                start,
                end - start,
                word,
                norm,
                zipf,
                base_len,
                base_norm,
                base_zipf,
                plain,
                word[0].isupper(),
            )
        )
    return tuple(out)
