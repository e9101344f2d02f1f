"""The shortcuts for plain pieces (letters only, or letters and one closing mark) and plain
words must read what the general path reads: the same tokens, the same word facts."""

from __future__ import annotations

import random

from glyphoxa_pipelines.correction.name_index import normalize, word_zipf
from glyphoxa_pipelines.correction.phonetic import (
    _INLINE_SPACE,
    _SENTENCE_END,
    Scan,
    _chunks_started,
    _gap_facts,
)
from glyphoxa_pipelines.correction.word_pieces import TOKEN_RE, piece_tokens

LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
MARKS = "0123456789'’ʼ-_.,?!;:#@/\\éÉß²中"


def _reference(piece: str) -> list[tuple[int, int, str, str, float, bool]]:
    """(start, length, word, normalized, zipf, capitalized) by the general path: every token
    `TOKEN_RE` finds, its facts from the word itself."""
    out = []
    for m in TOKEN_RE.finditer(piece):
        norm = normalize(m.group())
        if norm:
            word = m.group()
            out.append((m.start(), len(word), word, norm, word_zipf(word), word[0].isupper()))
    return out


def test_plain_pieces_read_as_the_general_path_reads_them() -> None:
    rng = random.Random(5)
    pieces = ["Grog", "grog,", "Grog's", "okay.", "what?", "Vax'ildan!", "A", "I,", ".", ",,"]
    for _ in range(5_000):
        size = rng.randint(1, 9)
        body = "".join(rng.choice(LETTERS) for _ in range(size))
        tail = rng.choice(["", "", rng.choice(",.?!;:"), rng.choice(MARKS)])
        pieces.append(body + tail)
        pieces.append("".join(rng.choice(LETTERS + MARKS) for _ in range(size)))
    shortcut = 0
    for piece in pieces:
        got = [(t[0], t[1], t[2], t[3], t[4], t[9]) for t in piece_tokens(piece)]
        assert got == _reference(piece), piece
        shortcut += piece.isascii() and piece.rstrip(",.?!;:").isalpha()
    assert shortcut > 2_500  # most cases took the shortcut the test is about


def test_plain_word_shortcut_keeps_the_handle_and_contraction_rules() -> None:
    plain = {
        t[2]: t[8]
        for p in ("grog", "Grog", "McGregor", "FindGrog", "aB", "don't", "R2")
        for t in piece_tokens(p)
    }
    assert plain == {
        "grog": True,
        "Grog": True,
        "McGregor": True,
        "FindGrog": False,
        "aB": False,
        "don't": False,
        "R2": False,
    }


def test_a_gap_between_tokens_is_read_as_the_text_around_it_reads() -> None:
    """What the scan keeps per gap between two tokens (joinable, a sentence start, the
    whitespace words begun) is what reading the text there gives, wherever the gap stands."""
    gaps = [", ", ". ", "—", " -- ", "\t", "\n\n", " \u00a0", "\u2003", "...", "' ", " (", "/"]
    for gap in gaps:
        text = f"Grog{gap}vex"
        start = len(text) - 3
        joinable, initial, started = _gap_facts(gap)
        assert started == _chunks_started(text, 4, start), gap
        assert joinable == (_INLINE_SPACE.fullmatch(gap) is not None), gap
        assert initial == (not joinable and _SENTENCE_END.search(gap) is not None), gap
        assert Scan(text).chunk == [0, started], gap
    assert _gap_facts(" -- ")[2] == 2 and _gap_facts(". ")[1]  # "--" is a word of its own
