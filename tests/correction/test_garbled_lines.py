"""No context fix among neighbours Whisper mostly doubted (`correction/garbled_lines.py`):
"R. Kelly would agree" heard as "Are Kelly with a gree?" does not become Keyleth."""

from __future__ import annotations

from glyphoxa_pipelines.correction import NameIndex, correct
from glyphoxa_pipelines.correction.garbled_lines import garbled_around
from glyphoxa_pipelines.correction.heard_span import line_words, words_over

INDEX = NameIndex(["Keyleth", "Grog", "Scanlan"])
SCENE = ("Keyleth", "Grog")
LINE = "Are Kelly with a gree?"
GARBLED = [0.31, 0.31, 0.65, 0.51, 0.41]
CLEAR = [0.95, 0.31, 0.65, 0.91, 0.93]  # only the name's own words doubted
WINDOW = (4, 14)  # "Kelly with"


def test_a_window_among_garbled_neighbours_keeps_its_words() -> None:
    assert garbled_around(LINE, *WINDOW, GARBLED)
    assert correct(LINE, INDEX, GARBLED, scene=SCENE).text == LINE


def test_the_same_window_among_neighbours_heard_clearly_is_fixed() -> None:
    # near miss: the neighbours were heard, so they vouch for the doubted window
    assert not garbled_around(LINE, *WINDOW, CLEAR)
    assert correct(LINE, INDEX, CLEAR, scene=SCENE).text == "Are Keyleth a gree?"


def test_the_window_own_doubt_does_not_count() -> None:
    # near miss: a short line whose doubted words are mostly the name's own
    line = "Kelly with, go."
    assert not garbled_around(line, 0, 10, [0.3, 0.3, 0.95])
    assert correct(line, INDEX, [0.3, 0.3, 0.95], scene=SCENE).text == "Keyleth, go."


def test_a_stage_one_fix_stands_among_garbled_neighbours() -> None:
    # near miss: a spelling one sound off the name needs no neighbours to vouch for it
    line = "Then Scanlon goes up there"
    confidences = [0.3, 0.4, 0.45, 0.9, 0.2]
    assert correct(line, INDEX, confidences, scene=SCENE).text == "Then Scanlan goes up there"


def test_confidences_that_do_not_fit_say_nothing() -> None:
    assert not garbled_around(LINE, *WINDOW, None)
    assert not garbled_around(LINE, *WINDOW, [0.1, 0.1])


def test_a_line_words_are_read_with_their_offsets_once() -> None:
    """The guards read a line's whitespace words, with offsets, from one kept reading, and
    find those a span overlaps by bisection: the same words a pass over the line finds."""
    line = "  Kelly\twith a\u00a0gree?\n"
    words, starts, ends = line_words(line)
    assert list(words) == line.split()
    assert all(line[s:e] == w for w, s, e in zip(words, starts, ends, strict=True))
    assert line_words(line) is line_words(line)
    for start in range(len(line) + 1):
        for end in range(start, len(line) + 1):
            overlapped = [k for k in range(len(words)) if starts[k] < end and start < ends[k]]
            assert list(words_over(line, start, end)) == overlapped, (start, end)
    # a span inside one word: that word alone; a span of spaces: none
    assert list(words_over(line, 3, 5)) == [0] and not words_over(line, 0, 2)


def test_a_word_holding_the_whole_span_and_more_counts_among_the_others() -> None:
    # the span lies inside "aaaa": that word is neither inside nor at an edge of it, so its
    # doubt counts (median of 0.1, 0.1, 0.9); without it the median would be 0.5
    assert garbled_around("aaaa bbbb cccc", 1, 3, [0.1, 0.1, 0.9])
    assert not garbled_around("aaaa bbbb cccc", 0, 4, [0.1, 0.1, 0.9])  # the word itself
