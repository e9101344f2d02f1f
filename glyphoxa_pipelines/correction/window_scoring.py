"""How well one window of heard words matches a known name, as a score.

`find_corrections` (phonetic.py) walks the windows of an utterance and keeps the best ones; the
rules in its docstring are applied here, one window at a time: spelled like a name up to case and
punctuation (`normalized_hit`), else the space-stripped window against names with the same Double
Metaphone codes or folded spelling, word by word against multi-word names, and a Jaro-Winkler
fallback for rare words (`best_name`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

from rapidfuzz import process
from rapidfuzz.distance import Indel, JaroWinkler

from glyphoxa_pipelines.correction.confusions import fold
from glyphoxa_pipelines.correction.models import CorrectionConfig, Method
from glyphoxa_pipelines.correction.name_index import (
    NameForm,
    NameIndex,
    english_stems,
    english_zipf,
    is_compound,
    phonetic_codes,
    spelling_key,
    unify_apostrophes,
)

_MARKS = "'’ʼ-"
_jw = JaroWinkler.similarity


class Window:
    """Facts about one window that survived the cheap checks of `find_corrections`."""

    __slots__ = (
        "norms",
        "joined",
        "text",
        "zipfs",
        "exact_tokens",
        "all_common",
        "titled",
        "initial",
        "english",
        "listed",
    )

    def __init__(
        self,
        norms: list[str],
        joined: str,
        text: str,
        zipfs: list[float],
        exact_tokens: Sequence[bool],
        all_common: bool,
        titled: bool,
        initial: bool = False,
    ) -> None:
        self.norms = norms
        self.joined = joined
        self.text = text
        self.zipfs = zipfs
        self.exact_tokens = exact_tokens
        self.all_common = all_common
        self.titled = titled  # every word capitalized, not at a sentence start
        self.initial = initial  # the first word starts a sentence
        self.english = False  # a single word that is (rare) English
        self.listed = False  # a single word the English list knows, however rarely


@lru_cache(maxsize=200_000)
def pair_similarity(
    word: str, name_word: str, short_length: int, phonetic: float, fuzzy: float
) -> float:
    """Jaro-Winkler of a heard word against the differing word of a multi-word name, as the
    aligned comparison counts it, or -1.0 when the pair rules the name out. Cached: the same
    ordinary words meet the same name words in utterance after utterance."""
    sim = _jw(word, name_word)
    overlap = any(c in phonetic_codes(name_word) for c in phonetic_codes(word))
    short = min(len(word), len(name_word)) <= short_length
    if short and not overlap:
        return -1.0
    if short and word[0] == name_word[0]:
        # "Lady Vecks" for "Lady Vex": same sounds, the rest of the name as context
        sim = max(sim, phonetic)
        need = phonetic
    else:
        need = fuzzy if (short or not overlap) else phonetic
    return sim if sim >= need else -1.0


@lru_cache(maxsize=65_536)
def sounds_like(word: str, name_word: str, anchor_threshold: float) -> float:
    """Jaro-Winkler of a heard word and a differing word of a multi-word name when the heard
    word's code agrees with the name word's or runs on past it, B/V and M/N folded ("box
    machinist" for "Vox Machina"), else -1.0: the context stage's word test for a name heard
    as other words of its sounds. Cached: the same words meet the scene's names utterance
    after utterance."""
    sim = _jw(word, name_word)
    if sim < anchor_threshold:
        return -1.0
    heard = [fold(c) for c in phonetic_codes(word)]
    said = [fold(c) for c in phonetic_codes(name_word)]
    if not any(h.startswith(n) or n.startswith(h) for h in heard for n in said if h and n):
        return -1.0
    return sim


def aligned_score(
    norms: Sequence[str],
    exact_tokens: Sequence[bool],
    first: int,
    last_norm: str,
    form: NameForm,
    cfg: CorrectionConfig,
) -> float | None:
    """Word-by-word comparison of the window `norms[first:]` (its last word read as
    `last_norm`, one word per word of the name) with a multi-word name, else None. The words
    are read in place: the walk asks this of many windows, and slicing them costs."""
    total = 0.0
    differs = False
    anchored = False  # some word of the name was heard exactly
    words = form.words
    last = len(words) - 1
    for k, name_word in enumerate(words):
        word = last_norm if k == last else norms[first + k]
        if word == name_word:
            total += 1.0
            anchored = True
            continue
        if exact_tokens[first + k]:
            return None  # a correctly heard other name is never rewritten
        differs = True
        sim = pair_similarity(
            word, name_word, cfg.short_length, cfg.phonetic_threshold, cfg.fuzzy_threshold
        )
        if sim < 0.0:
            return None
        total += sim
    if not differs or (last > 0 and not anchored and total / len(words) < 0.8):
        return None
    return total / len(words)


def aligned_forms(
    index: NameIndex, n: int, first_norm: str, last_norm: str, codes: bool
) -> list[NameForm]:
    """The multi-word names of `n` words a window is compared with word by word: those whose
    first or last word is the window's, or (`codes`) shares a code with it."""
    by_edge = index.by_edge
    keys = [(n, "w:" + first_norm), (n, "w:" + last_norm)]
    if codes:
        for word in (first_norm, last_norm):
            keys.extend((n, "c:" + c) for c in phonetic_codes(word))
    seen: set[int] = set()
    out = []
    for key in keys:
        for form in by_edge.get(key, ()):
            if id(form) not in seen:
                seen.add(id(form))
                out.append(form)
    return out


@lru_cache(maxsize=65_536)
def edge_candidates(
    index: NameIndex,
    n: int,
    word: str,
    codes: bool,
    at: int,
    pair: tuple[int, float, float],
) -> tuple[NameForm, ...]:
    """The names of `n` words that `aligned_forms` draws from `word`'s own keys (its words,
    and with `codes` its codes) and whose word at `at` (0: first, -1: last) `word` may stand
    for in `aligned_score`: the same word, or a pair `pair_similarity` does not rule out
    (`pair`: its short_length, phonetic and fuzzy thresholds). A window's first word's
    candidates at 0 and its last word's at -1 hold every name `aligned_score` can accept
    (both edge words must align), mostly none: kept per word, since words repeat."""
    keys = [(n, "w:" + word)]
    if codes:
        keys.extend((n, "c:" + c) for c in phonetic_codes(word))
    seen: set[int] = set()
    out = []
    for key in keys:
        for form in index.by_edge.get(key, ()):
            if id(form) in seen:
                continue
            seen.add(id(form))
            name_word = form.words[at]
            if word == name_word or pair_similarity(word, name_word, *pair) >= 0.0:
                out.append(form)
    return tuple(out)


def _code_need(code_length: int, cfg: CorrectionConfig) -> float:
    """Jaro-Winkler needed on top of a code match: the longer the codes that agree, the more
    evidence they are, from `fuzzy_threshold` for 3-letter codes down to `phonetic_threshold`."""
    step = (cfg.fuzzy_threshold - cfg.phonetic_threshold) / 6
    return max(cfg.phonetic_threshold, cfg.fuzzy_threshold - step * max(0, code_length - 3))


def _joined_score(
    win: Window, form: NameForm, cfg: CorrectionConfig, codes: tuple[str, ...]
) -> tuple[float, Method] | None:
    """Compare the space-stripped window with the space-stripped name."""
    n = len(win.norms)
    if form.common or (n > 1 and n == form.n_words):
        return None  # ordinary-word names are written right; equal word counts align instead
    if n > form.n_words + cfg.max_extra_words:
        return None
    length, name_length = len(win.joined), len(form.joined)
    ratio = length / name_length
    if ratio < cfg.min_length_ratio or ratio > cfg.max_length_ratio:
        # compare the lengths of the spellings folded to sounds: "vacks" is "vaks", not 5/3
        ratio = len(spelling_key(win.joined)) / len(form.key)
        if ratio < cfg.min_length_ratio or ratio > cfg.max_length_ratio:
            return None
    split = n > form.n_words
    if split and max(win.zipfs) >= cfg.function_zipf:
        return None  # "sound as the duergar": function words are their own words
    matched = [c for c in codes if c in form.codes]
    # the same sounds in another English spelling ("vacks", "vacx" for "Vax"): Double Metaphone
    # may code them apart ("vacx" is FKKS, "Vax" FKS), the folded spellings agree
    homophone = n == 1 and form.n_words == 1 and spelling_key(win.joined) == form.key
    short = min(length, name_length) <= cfg.short_length
    # Several English words ("tight roll") become a name only when they spell it almost exactly
    # ("key leith" → "Keyleth"), unless capitalized like a name mid-sentence.
    english_words = split and not win.titled and min(win.zipfs) >= cfg.english_zipf
    if matched or homophone:
        # a spelling of the very sounds needs only the phonetic threshold
        need = cfg.phonetic_threshold if homophone else _code_need(max(map(len, matched)), cfg)
        if win.english:
            # a capitalized English word ("Milli", "Clarita") is a name of its own as likely
            need = max(need, cfg.english_name_threshold)
        elif (win.listed and not homophone) or win.all_common:
            need = max(need, cfg.fuzzy_threshold)
        elif short:
            # "Vaks" for "Vax": short names need the same first letter and a close spelling
            if win.joined[0] != form.joined[0]:
                return None
            need = max(need, (cfg.phonetic_threshold + cfg.fuzzy_threshold) / 2)
        elif n == 1 and win.text[:1].isupper():
            # written as a name already ("Grimthorn", "Alduin"): it may well be a name the
            # graph does not know yet, so a weak resemblance to a known one is not enough
            need = max(need, cfg.fuzzy_threshold)
        if split:
            need = max(need, cfg.split_phonetic_threshold)
        if english_words:
            # English words that spell the name almost exactly ("key leith"), or that agree
            # with it in a long code and are an unlikely pair of words to say ("tube rus" →
            # TPRS = "Tiberius"; not "tight roll" → "Thidroll": everyday words, likely said)
            if (
                max(map(len, matched)) >= cfg.split_code_length
                and sum(win.zipfs) / n <= cfg.split_pair_zipf
            ):
                need = max(need, cfg.fuzzy_threshold)
            else:
                need = max(need, cfg.split_threshold)
    elif english_words:
        return None
    else:
        # No phonetic agreement: only a close spelling of a longer word that is no English.
        if min(length, name_length) < cfg.fuzzy_min_length or not 0.8 <= ratio <= 1.25:
            return None
        unknown = [w for w in win.norms if english_zipf(w) < cfg.english_zipf]
        if not unknown or any(is_compound(w, cfg.common_zipf) for w in unknown):
            return None
        if Indel.normalized_similarity(win.joined, form.joined) < 0.8:
            return None
        need = cfg.fuzzy_threshold
    blend = (bool(matched) or homophone) and not english_words

    def similarity(joined: str) -> float:
        plain = _jw(joined, form.joined)
        if not blend:
            return plain
        # "vacks" for "Vax": the same sounds spelled another English way count half
        return (plain + _jw(spelling_key(joined), form.key)) / 2

    score = similarity(win.joined)
    if score < need:
        return None
    # Every word must earn its place: dropping an edge word must make the match worse.
    if n > 1 and (
        similarity("".join(win.norms[1:])) >= score or similarity("".join(win.norms[:-1])) >= score
    ):
        return None
    if form.n_words > 1:
        score = max(score, _jw(" ".join(win.norms), form.spaced))
    return score, ("phonetic" if matched or homophone else "fuzzy")


def normalized_hit(
    win: Window, forms: list[NameForm], cfg: CorrectionConfig
) -> tuple[NameForm, float, Method, bool] | None:
    """The window is spelled like a name up to case, spacing and punctuation."""
    text = unify_apostrophes(win.text)
    upper = text.upper()
    for form in forms:
        surface = unify_apostrophes(form.surface)
        if text == surface or (upper == text and upper == surface.upper()):
            return form, 1.0, "normalized", True
    form = forms[0]
    surface = unify_apostrophes(form.surface)
    if any(text.count(mark) > surface.count(mark) for mark in _MARKS):
        return None  # "Mur-ghol", "NPC's": punctuation the speaker chose is not an STT error
    if win.titled and len(win.norms) > 1 and " " not in surface:
        return None  # "Feather Fall" for "Featherfall": written as a name already, in two words
    if text[:1].isupper() and text.lower() == surface.lower():
        return None  # "Tal'dorei" for "Tal'Dorei": already written as a name
    if len(win.norms) == 1:
        if win.zipfs[0] >= cfg.common_zipf:
            return None  # "pike" may be the fish: ordinary words are left alone
        return form, 1.0, "normalized", False
    if win.all_common and (form.common or len(form.joined) < 6):
        return None  # an ordinary phrase ("the tower", "be an") spelled like a name
    if (
        win.all_common
        and english_zipf(form.joined) >= cfg.english_zipf
        and (text[1:] if win.initial else text).islower()
    ):
        # "ball sack" for "Ballsack": the name is itself a word of the English list, and
        # ordinary words in lower case that spell it are that word's open spelling
        return None
    return form, 1.0, "normalized", False


def fallback_lengths_ok(index: NameIndex, joined: str, cfg: CorrectionConfig) -> bool:
    """Whether some name starts with the window's letter and has a length the spelling
    fallback accepts (`_joined_score` wants lengths within 0.8-1.25 of each other when no code
    agrees): long windows of several words fail here, before any search."""
    return _lengths_ok(index, joined[0], len(joined), cfg.fuzzy_min_length)


@lru_cache(maxsize=4096)
def _lengths_ok(index: NameIndex, first: str, size: int, min_length: int) -> bool:
    lengths = index.first_lengths.get(first)
    if not lengths:
        return False
    low = max(min_length, math.ceil(size / 1.25))
    return any(length in lengths for length in range(low, int(size / 0.8) + 1))


@lru_cache(maxsize=4096)
def _fallback_strings(
    index: NameIndex,
    first: str,
    size: int,
    key_size: int,
    n: int,
    gates: tuple[int, float, float, int],
) -> tuple[str, ...]:
    """The joined names beginning with `first` that `_joined_score` could accept without a
    code in common for a window of `n` words, `size` letters and a spelling key of `key_size`:
    its gates on the name alone (not an ordinary-word name, no equal word count, few extra
    words) and on the lengths, in its own order and arithmetic. Keyed by shape, not by the
    window: a few hundred entries serve every utterance. `gates` are the configuration's
    (max_extra_words, min_length_ratio, max_length_ratio, fuzzy_min_length): hashing the
    whole configuration would cost more than the look-up saves."""
    max_extra, min_ratio, max_ratio, min_length = gates
    if size < min_length:
        return ()  # `min(size, length)` would be short for every name
    out = []
    for length, key_length, joined in _shapes_for(index, first, n, max_extra):
        ratio = size / length
        if ratio < min_ratio or ratio > max_ratio:
            ratio = key_size / key_length
            if ratio < min_ratio or ratio > max_ratio:
                continue
        if length < min_length or not 0.8 <= ratio <= 1.25:
            continue
        out.append(joined)
    return tuple(out)


@lru_cache(maxsize=1024)
def _shapes_for(
    index: NameIndex, first: str, n: int, max_extra: int
) -> tuple[tuple[int, int, str], ...]:
    """(length, key length, joined) of the names beginning with `first` that pass
    `_fallback_strings`' gates on the name alone for a window of `n` words, in index order:
    they depend on the window's word count only, so a new window shape tests lengths only."""
    return tuple(
        (length, key_length, joined)
        for length, key_length, words, common, joined in index.first_shapes.get(first, ())
        if not (common or (n > 1 and n == words) or n > words + max_extra)
    )


def spelling_fallback_possible(
    index: NameIndex, joined: str, n: int, cfg: CorrectionConfig
) -> bool:
    """Whether the spelling fallback could find a name for a window of `n` words with no code
    in common with any name: one of a length it accepts (`fallback_lengths_ok`), spelled
    closely enough. One search in C instead of a window's full scoring, over only the names
    whose lengths `_joined_score` would accept (a fifth of the letter's names or fewer: the
    search is the dearest step of the walk's pre-checks)."""
    if not fallback_lengths_ok(index, joined, cfg):
        return False  # before the window's spelling key: new windows' keys cost regexes
    gates = (cfg.max_extra_words, cfg.min_length_ratio, cfg.max_length_ratio, cfg.fuzzy_min_length)
    strings = _fallback_strings(index, joined[0], len(joined), len(spelling_key(joined)), n, gates)
    return (
        bool(strings)
        and process.extractOne(joined, strings, scorer=_jw, score_cutoff=cfg.fuzzy_threshold)
        is not None
    )


def best_name(
    win: Window, index: NameIndex, cfg: CorrectionConfig
) -> tuple[NameForm, float, Method, bool] | None:
    """Best name for a window that is not spelled like one, as (form, score, method, exact)."""
    n = len(win.norms)
    found: dict[int, tuple[NameForm, float, Method]] = {}

    hyphen = "-" in win.text

    def consider(form: NameForm, score: float, method: Method) -> None:
        if hyphen and "-" not in form.surface:
            return  # "Vax-inate", "Angeles-based": a hyphen the speaker chose
        old = found.get(id(form))
        if old is None or old[1] < score:
            found[id(form)] = (form, score, method)

    if n == 1:
        # A real English word is replaced by a differently spelled name on its own only when it
        # is capitalized like a name mid-sentence ("Clarita" for "Clarota", never "careen").
        # Stems that are names do not count: "Tiberiuss" is no English word.
        by_joined = index.by_joined
        englishness = max(
            (z for stem, z in english_stems(win.joined) if stem not in by_joined), default=0.0
        )
        win.english = englishness >= cfg.english_zipf
        win.listed = englishness >= cfg.listed_zipf
        joined_ok = englishness < cfg.common_zipf and (
            not win.english or (win.titled and len(win.joined) > cfg.short_length)
        )
    else:
        joined_ok = (
            not any(win.exact_tokens)
            # a very frequent word at an edge ("is", "on", "the") is its own word
            and max(win.zipfs[0], win.zipfs[-1]) < cfg.function_zipf
        )
    codes: tuple[str, ...] = ()
    if joined_ok:
        codes = phonetic_codes(win.joined)
        for code in codes:
            for form in index.by_code.get(code, ()):
                result = _joined_score(win, form, cfg, codes)
                if result is not None:
                    consider(form, *result)
        if n == 1:
            for form in index.by_key.get(spelling_key(win.joined), ()):
                if id(form) not in found:
                    result = _joined_score(win, form, cfg, codes)
                    if result is not None:
                        consider(form, *result)
    # Word-by-word against names of as many words; two ordinary words ("black power" for
    # "Black Powder") are too weak a sign of a name.
    if n in index.multi_sizes and not (win.all_common and n < 3):
        norms = win.norms
        for form in aligned_forms(index, n, norms[0], norms[-1], not win.all_common):
            aligned = aligned_score(norms, win.exact_tokens, 0, norms[-1], form, cfg)
            if aligned is not None and aligned >= cfg.phonetic_threshold:
                consider(form, aligned, "aligned")
    if (
        not found
        and joined_ok
        and not win.all_common
        and min(win.zipfs) < cfg.rare_zipf
        # the search below finds nothing exactly when `spelling_fallback_possible` is false:
        # its length check, then one search instead of two
        and fallback_lengths_ok(index, win.joined, cfg)
    ):
        strings, bucket_forms = index.by_first[win.joined[0]]
        for _, _, pos in process.extract(
            win.joined,
            strings,
            scorer=_jw,
            score_cutoff=cfg.fuzzy_threshold,
            limit=3,
        ):
            form = bucket_forms[pos]
            result = _joined_score(win, form, cfg, codes)
            if result is not None:
                consider(form, *result)
    if not found:
        return None
    ranked = sorted(found.values(), key=lambda item: -item[1])
    best_form, best_score, best_method = ranked[0]
    for form, score, _ in ranked[1:]:
        if best_score - score > cfg.ambiguity_margin:
            break
        if form.canonical != best_form.canonical and form.surface != best_form.surface:
            return None  # two entities fit about equally well: leave it to a human or stage 2
    return best_form, best_score, best_method, False
