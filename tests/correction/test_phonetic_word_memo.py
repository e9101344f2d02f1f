"""The walk's speed-ups must not change what it finds: the one-word memo answers as
`best_name` does and stays bounded, the spelling fallback's length-filtered search says yes
to every window `best_name` matches by spelling alone, and the edge words' candidates hold
every multi-word name the word-by-word scoring accepts, and the scan read piece by piece
finds the words the whole text holds."""

from __future__ import annotations

import itertools
import re

import pytest

from glyphoxa_pipelines.correction import CorrectionConfig, NameIndex, correct, word_memo
from glyphoxa_pipelines.correction.name_index import normalize, word_zipf
from glyphoxa_pipelines.correction.phonetic import Scan, _code_edge_sizes
from glyphoxa_pipelines.correction.window_scoring import (
    Window,
    aligned_forms,
    aligned_score,
    best_name,
    edge_candidates,
    spelling_fallback_possible,
)
from glyphoxa_pipelines.correction.word_memo import memo_for, walk_facts
from glyphoxa_pipelines.correction.word_pieces import TOKEN_RE

ENTITIES = [
    "Eldrinax",
    "Grimjaw",
    "Kraghammer",
    "Allura Vysoren",
    ("Vax'ildan", ["Vax"]),
    "Tiberius Stormwind",
    "Thaljurandir",
    "Brannoc",
    "Grinchock",
]

HEARD = [
    "Eldrinacks",
    "Grimjow",
    "kraghamer",
    "Vaks",
    "Brannock",
    "Grincho",
    "Thaljur",
    "tiberias",
    "Zorblax",
    "eldrinax",
]


def test_a_remembered_word_is_what_best_name_finds() -> None:
    index, cfg = NameIndex(ENTITIES), CorrectionConfig()
    memo = memo_for(index, cfg)
    found = 0
    for text, titled, initial in itertools.product(HEARD, (False, True), (False, True)):
        norm = normalize(text)
        window = Window([norm], norm, text, [word_zipf(text)], [False], False, titled, initial)
        expected = best_name(window, index, cfg)
        for _ in range(2):  # the first answer computed, the second remembered
            assert memo.single(text, norm, word_zipf(text), titled, initial) == expected
        found += expected is not None
    assert found >= 8  # the words above are mostly names misheard: the memo holds results


def test_the_memo_is_per_index_and_configuration_and_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(word_memo, "WORDS_KEPT", 4)
    index, cfg = NameIndex(ENTITIES), CorrectionConfig()
    memo = memo_for(index, cfg)
    assert memo_for(index, cfg) is memo
    assert memo_for(index, CorrectionConfig(fuzzy_threshold=0.9)) is not memo
    assert memo_for(NameIndex(ENTITIES), cfg) is not memo
    line = "we met " + " and ".join(HEARD) + " at the gate"
    first = correct(line, index, config=cfg)
    assert memo.single.cache_info().currsize == 4  # more words than it keeps were scored
    assert 0 < len(memo.words) <= 4
    assert correct(line, index, config=cfg) == first
    # past MEMOS_KEPT other pairs the oldest memo is dropped, and a new one gives the same
    for _ in range(word_memo.MEMOS_KEPT):
        memo_for(NameIndex(ENTITIES), cfg)
    assert memo_for(index, cfg) is not memo
    assert correct(line, index, config=cfg) == first
    assert first.corrections  # the line holds misheard names: the check compares findings


def test_a_remembered_window_pre_check_answers_as_a_fresh_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The walk keeps its pre-check of windows of several words per index and configuration,
    keyed by the window's words as written: every line corrected
    after all the others (their windows kept) must read as it does with nothing kept, and
    the memo stays bounded."""
    monkeypatch.setattr(word_memo, "WINDOWS_KEPT", 64)
    lines = [
        "Grincho hands Brannock the kraghamer",
        "grincho hands brannock the Kraghammer",  # the same words, cased as names
        "Grincho's hands, Brannock's kraghamer",  # possessives: the base word is read
        "tiberias storm wind met allura visoren",
        "Tiberius storm wind met Allura visoren",  # a name heard right inside the window
        "the eldrin ax and vax il dan ran to thaljur",
        "I don't think eldrin acks and the dont think grim jow",
        "we met " + " and ".join(HEARD) + " at the gate",
        # the same words as read, but a frequent word ("don't") in the window: the pre-check
        # says no to it and yes to its neighbour
        "I don't allo it",
        "I dont allo it",
    ]
    entities = [*ENTITIES, "Dontalo"]
    cfg = CorrectionConfig()
    shared = NameIndex(entities)
    for line in lines:  # every window of every line kept first
        correct(line, shared, config=cfg)
    kept = memo_for(shared, cfg).windows
    assert kept and len(kept) <= 64
    probe = NameIndex(entities)  # keyed by the words as written, possessives whole
    correct(lines[1], probe, config=cfg)
    correct(lines[2], probe, config=cfg)
    assert {("Grincho's", "hands"), ("grincho", "hands")} <= set(memo_for(probe, cfg).windows)
    changed = 0
    for line in reversed(lines):
        fresh = correct(line, NameIndex(entities), config=cfg)
        assert correct(line, shared, config=cfg) == fresh, line
        changed += bool(fresh.corrections)
    assert changed >= 5  # the lines hold misheard names: the check compares findings


def test_a_window_scored_once_is_read_back_not_scored_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A window of several words the pre-check lets through is scored by `best_name` once
    per index and configuration: the memo keeps what it found, and the line comes out the
    same from the memo as from scratch."""
    from glyphoxa_pipelines.correction import phonetic

    scored: list[str] = []
    score = phonetic.best_name

    def counted(win: Window, index: NameIndex, cfg: CorrectionConfig):  # noqa: ANN202
        scored.append(win.joined)
        return score(win, index, cfg)

    monkeypatch.setattr(phonetic, "best_name", counted)
    lines = ["the eldrin acks and vax il dan ran", "so tiberias storm wind met grim jow"]
    cfg = CorrectionConfig()
    index = NameIndex(ENTITIES)
    first = [correct(line, index, config=cfg) for line in lines]
    assert {"eldrinacks", "grimjow"} <= set(scored)  # several heard words scored as one name
    kept = memo_for(index, cfg).windows
    assert kept[("eldrin", "acks")][0].canonical == "Eldrinax"  # what was found, not a yes
    assert kept[("grim", "jow")][0].canonical == "Grimjaw"
    assert any(value is False for value in kept.values())  # and the windows that found none
    scored.clear()
    again = [correct(line, index, config=cfg) for line in lines]
    assert not scored
    assert again == first
    assert [c.replacement for r in first for c in r.corrections] == [
        "Eldrinax",
        "Vax'ildan",
        "Tiberius Stormwind",
        "Grimjaw",
    ]


def test_the_walk_reads_of_a_word_what_the_index_says_of_it() -> None:
    """A one-word name heard right (also before "'s"), the sizes of the multi-word names a
    word begins or ends (its base's, for the last word of a window), function and ordinary
    words: what the walk keeps per word."""
    index, cfg = NameIndex(ENTITIES), CorrectionConfig()

    def facts(word: str) -> tuple[bool, frozenset[int], frozenset[int], bool, bool, bool]:
        scan = Scan(word)
        variants = scan.variants[0]
        base = word[: variants[0][1]] if len(variants) > 1 else None
        return walk_facts(index, word, base, variants, scan.zipfs[0], cfg)

    assert facts("Grimjaw") == (True, frozenset(), frozenset(), False, False, True)
    assert facts("Grimjaw's")[0] and not facts("grimjaw")[0]
    assert facts("Tiberius")[1:3] == (frozenset({2}), frozenset({2}))
    assert facts("Stormwind's")[1:3] == (frozenset(), frozenset({2}))
    assert facts("the")[3:5] == (True, True)
    assert facts("hammer")[3:5] == (False, True)
    assert facts("hammer's")[3:5] == (False, False)  # two readings: not passed over
    # a name's spelling begins with the word as read, "'s" and all
    assert facts("grim")[5] and facts("Tiberius")[5] and not facts("Grimjaw's")[5]
    assert not facts("hammer")[5]


def test_the_fallback_search_says_yes_to_every_window_spelled_close_to_a_name() -> None:
    # every two-word window of these words that best_name matches with no code in common
    # ("fuzzy": "yal reth" for Yareth) must pass the filtered search, or the walk would skip
    # it; the words that match nothing ("ia", "kie") check that the search can say no
    index = NameIndex(["Trinket", "Tiberius", "Laduguer", "Balgus", "Yareth", "Grimjaw"])
    cfg = CorrectionConfig()
    words = ["trin", "kie", "tiber", "ia", "lajug", "er", "bal", "dus", "yal", "reth", "grim"]
    words.append("jall")
    fuzzy = refused = 0
    for a, b in itertools.permutations(words, 2):
        zipfs = [word_zipf(a), word_zipf(b)]
        window = Window([a, b], a + b, f"{a} {b}", zipfs, [False, False], False, False)
        result = best_name(window, index, cfg)
        possible = spelling_fallback_possible(index, a + b, 2, cfg)
        if result is not None and result[2] == "fuzzy":
            fuzzy += 1
            assert possible, (a, b)
        refused += not possible
    assert fuzzy >= 4
    assert refused >= 100


def test_edge_candidates_hold_every_multi_word_name_the_aligned_scoring_accepts() -> None:
    # the walk scores word by word only the names its edge words may stand for: every name
    # `aligned_score` accepts for a window must be among its first word's candidates (drawn
    # by that word, checked at 0) or its last word's (at -1), or the walk would skip a window
    # best_name matches ("tiberias stormwin": drawn by the first word's code only)
    index = NameIndex(["Allura Vysoren", "Tiberius Stormwind", "Elder Brin", "the Iron Gate"])
    cfg = CorrectionConfig()
    pair = (cfg.short_length, cfg.phonetic_threshold, cfg.fuzzy_threshold)
    words = ["alura", "allura", "visoren", "tiberias", "stormwin", "elder", "brinn", "the"]
    words += ["iron", "gait", "wall", "and", "storm", "wind"]
    accepted = skipped = 0
    for n in (2, 3):
        for window in itertools.permutations(words, n):
            first, last = window[0], window[-1]
            heads = edge_candidates(index, n, first, True, 0, pair)
            tails = edge_candidates(index, n, last, True, -1, pair)
            for form in aligned_forms(index, n, first, last, True):
                score = aligned_score(window, [False] * n, 0, last, form, cfg)
                if score is not None and score >= cfg.phonetic_threshold:
                    accepted += 1
                    assert form in heads or form in tails, (window, form.surface)
                elif form not in heads and form not in tails:
                    skipped += 1
    assert accepted >= 5
    assert skipped >= 100  # and most names an edge word draws are ruled out up front


def test_a_word_without_edge_sizes_draws_no_edge_candidates() -> None:
    # the walk's pre-check looks up a side's edge candidates only when its word, or with codes
    # its code, is an edge word of a name of the window's size: otherwise the look-up must be
    # empty, and the words here that are such edge words check that it often is not
    index = NameIndex(["Allura Vysoren", "Tiberius Stormwind", "Elder Brin", "the Iron Gate"])
    cfg = CorrectionConfig()
    pair = (cfg.short_length, cfg.phonetic_threshold, cfg.fuzzy_threshold)
    words = ["alura", "allura", "visoren", "tiberias", "stormwin", "elder", "brinn", "the"]
    words += ["iron", "gait", "gate", "wall", "and", "storm", "wind", "brin", "tibby", "vise"]
    drawn = empty = 0
    for word, n, codes, at in itertools.product(words, (2, 3, 4), (False, True), (0, -1)):
        sizes = index.edge_sizes.get(word, frozenset())
        has = n in sizes or (codes and n in _code_edge_sizes(index, word))
        found = edge_candidates(index, n, word, codes, at, pair)
        if not has:
            assert found == (), (word, n, codes, at)
            empty += 1
        drawn += bool(found)
    assert drawn >= 10
    assert empty >= 100


@pytest.mark.parametrize(
    "text",
    [
        "Grog's axe,  and Vax'ildan\tran -- to #FindGrog @pike. Then\nthe bear",
        "  leading spaces, trailing ones  ",
        "a\u00a0b c\u2003d. e!f ?g (h) [i]: j;k",
        "",
        "one",
    ],
)
def test_scanning_piece_by_piece_reads_the_words_as_the_whole_text_does(text: str) -> None:
    # the scan tokenizes the pieces between spaces, each once per process: the tokens, their
    # offsets and the whitespace word (Whisper's unit of confidence) holding each must be
    # what the token pattern finds in the whole text
    scan = Scan(text)
    found = [m for m in TOKEN_RE.finditer(text) if normalize(m.group())]
    assert scan.words == [m.group() for m in found]
    assert list(zip(scan.starts, scan.ends, strict=True)) == [m.span() for m in found]
    chunks = [m.span() for m in re.finditer(r"\S+", text)]
    holding = [next(k for k, (a, b) in enumerate(chunks) if a <= m.start() < b) for m in found]
    assert scan.chunk == holding
    assert Scan(text).plain == scan.plain  # read again from the pieces kept: the same
    assert scan.joinable == [
        k > 0 and re.fullmatch(r"[ \t\u00a0]+", text[found[k - 1].end() : m.start()]) is not None
        for k, m in enumerate(found)
    ]
