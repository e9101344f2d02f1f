"""Stage 1: phonetic entity matching, cheap enough for the live voice path.

Windows of consecutive words (longest first) are compared with the known names of a prepared
`NameIndex`: normalized spelling, Double Metaphone codes of the space-stripped window, aligned
word pairs for multi-word names, and Jaro-Winkler to rank. The rules below exist because the
reference implementation corrupted correct text:

- English words are never replaced on their own by a differently spelled name; ordinary ones
  (wordfreq Zipf >= `common_zipf`) not even by a differently *cased* one;
- a window made of several English words must spell the name almost exactly ("key leith" →
  "Keyleth", "iron hold" → "Ironhold") unless one of them is no English at all ("elder
  *nacks*"), it aligns word by word with a multi-word name, or it is capitalized like a name;
- every word of a window must earn its place, so neighbours ("of course", "lives in the") are
  never swallowed, and a multi-word name matches only when all of it was heard;
- two entities matching about equally well change nothing;
- several English words become a name on a looser bar only when they agree with it in a long
  Double Metaphone code and are an unlikely pair to say (mean Zipf low: "tube rus", not
  "tight roll"); lower-case words never spell out a name that is itself a listed word;
- a word written as a name already (capitalized) or listed by wordfreq however rarely needs a
  close match, since it may be a name the graph does not know yet; the same sounds in another
  English spelling ("vacks" for "Vax", equal `spelling_key`) are a match of their own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from glyphoxa_pipelines.correction.models import Correction, CorrectionConfig, Method
from glyphoxa_pipelines.correction.name_index import (
    NameForm,
    NameIndex,
    english_zipf,
    phonetic_codes,
)
from glyphoxa_pipelines.correction.window_scoring import (
    Window,
    aligned_score,
    best_name,
    edge_candidates,
    normalized_hit,
    pair_similarity,
    spelling_fallback_possible,
)
from glyphoxa_pipelines.correction.word_memo import memo_for, walk_facts
from glyphoxa_pipelines.correction.word_pieces import PIECES, piece_tokens
from glyphoxa_pipelines.correction.word_pieces import TOKEN_RE as TOKEN_RE  # re-exported

_INLINE_SPACE = re.compile(r"[ \t\u00a0]+")
_SENTENCE_END = re.compile(r"[.!?\n\r:;\"“”(\[]")
_CACHE = 200_000
_DEFAULT_CONFIG = CorrectionConfig()


@dataclass(frozen=True, slots=True)
class Token:
    """A word of the utterance with what matching needs to know about it."""

    start: int
    end: int
    text: str
    norm: str
    zipf: float
    base_end: int  # end of the word without a possessive "'s" (== end when there is none)
    base_norm: str
    base_zipf: float
    joinable: bool  # only plain spaces separate it from the previous token
    title: bool  # starts with a capital letter
    initial: bool  # first word of a sentence
    plain: bool  # a word, not a handle, hashtag, number or camelCase run


class Scan:
    """The words of an utterance as parallel lists: the hot loops index lists, they do not
    build an object per word. Built once per utterance and shared by stage 1 and the context
    stage."""

    __slots__ = (
        "starts",
        "ends",
        "words",
        "norms",
        "zipfs",
        "variants",
        "joinable",
        "plain",
        "title",
        "initial",
        "chunk",
    )

    def __init__(self, text: str) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.words: list[str] = []
        self.norms: list[str] = []
        self.zipfs: list[float] = []
        # (normalized, end, zipf) readings of a word: base first for "Grimjaw's"
        self.variants: list[tuple[tuple[str, int, float], ...]] = []
        self.joinable: list[bool] = []
        self.plain: list[bool] = []
        self.title: list[bool] = []
        self.initial: list[bool] = []
        # which whitespace-separated word of the text holds each token: Whisper gives one
        # probability per such word ("--" is one, with no token in it)
        self.chunk: list[int] = []
        starts, ends, words, norms, zipfs = (
            self.starts,
            self.ends,
            self.words,
            self.norms,
            self.zipfs,
        )
        variants, joinables, plains, titles = self.variants, self.joinable, self.plain, self.title
        initials, chunks = self.initial, self.chunk
        prev_end = -1
        chunk = -1
        offset = 0
        # tokens never hold a space, so the text's pieces between spaces are tokenized
        # alone, each piece once per process (`piece_tokens`): pieces are words with their
        # punctuation, and words repeat
        pieces = PIECES.get  # `piece_tokens`' memo read in the loop, the call for new pieces
        for piece in text.split(" "):
            for at, size, word, norm, zipf, base_len, base_norm, base_zipf, plain, title in (
                (pieces(piece) or piece_tokens(piece)) if piece else ()
            ):
                start = offset + at
                end = start + size
                if prev_end >= 0:
                    if start == prev_end + 1 and text[prev_end] == " ":
                        joinable, initial = True, False
                        chunk += 1
                    else:
                        joinable, initial, started = _gap_facts(text[prev_end:start])
                        chunk += started
                else:
                    joinable, initial = False, True
                    chunk += _chunks_started(text, 0, start)
                starts.append(start)
                ends.append(end)
                words.append(word)
                norms.append(norm)
                zipfs.append(zipf)
                if base_len != size:
                    variants.append(((base_norm, start + base_len, base_zipf), (norm, end, zipf)))
                else:
                    variants.append(((norm, end, zipf),))
                joinables.append(joinable)
                plains.append(plain)
                titles.append(title)
                initials.append(initial)
                chunks.append(chunk)
                prev_end = end
            offset += len(piece) + 1


def _chunks_started(text: str, begin: int, start: int) -> int:
    """How many whitespace-separated words start in text[begin:start + 1] (the last position
    being a token's first letter)."""
    count = 0
    for p in range(begin, start + 1):
        if not text[p].isspace() and (p == 0 or text[p - 1].isspace()):
            count += 1
    return count


@lru_cache(maxsize=4096)
def _gap_facts(gap: str) -> tuple[bool, bool, int]:
    """(joinable, starts a sentence, whitespace words begun) of the text between two tokens:
    read once per process, the same few gaps (", ", ". ", "-") come back line after line. The
    count is `_chunks_started` over the gap between a token's last letter and the next
    token's first (neither is a space, so any letter stands for them)."""
    joinable = _INLINE_SPACE.fullmatch(gap) is not None
    initial = not joinable and _SENTENCE_END.search(gap) is not None
    return joinable, initial, _chunks_started(f"a{gap}a", 1, len(gap) + 1)


@lru_cache(maxsize=4)
def scan_of(text: str) -> Scan:
    """`Scan(text)`, the last few kept: the live path scans an utterance to correct it, then
    again to read the names it said, and most utterances come out unchanged. Never mutated."""
    return Scan(text)


def tokenize(text: str) -> list[Token]:
    """Words with character offsets; apostrophes and hyphens inside a word stay in it."""
    scan = Scan(text)
    tokens = []
    for k, variants in enumerate(scan.variants):
        base_norm, base_end, base_zipf = variants[0]
        tokens.append(
            Token(
                scan.starts[k],
                scan.ends[k],
                scan.words[k],
                scan.norms[k],
                scan.zipfs[k],
                base_end,
                base_norm,
                base_zipf,
                scan.joinable[k],
                scan.title[k],
                scan.initial[k],
                scan.plain[k],
            )
        )
    return tokens


@dataclass(slots=True)
class _Candidate:
    first: int
    last: int  # inclusive token index
    end: int  # character end (shorter than the last token when a possessive was split off)
    form: NameForm
    score: float
    method: Method
    exact: bool
    split: bool  # several heard words joined into a shorter name


def _case_like(original: str, surface: str) -> str:
    """The replacement in the casing context of the original (shouted text stays shouted)."""
    letters = [ch for ch in original if ch.isalpha()]
    if len(letters) > 1 and all(ch.isupper() for ch in letters):
        return surface.upper()
    return surface


def find_corrections(
    text: str,
    index: NameIndex,
    config: CorrectionConfig | None = None,
    *,
    scan: Scan | None = None,
) -> tuple[list[Correction], list[tuple[int, int]]]:
    """Stage-1 corrections of `text` (offsets into `text`) and the spans of names heard right.

    The second list holds character spans (start, end) already settled: exact hits and
    corrected spans; stage 2 must not touch them. `scan` is `Scan(text)` when the caller has it.
    """
    cfg = config or _DEFAULT_CONFIG
    if not text or not index:
        return [], []
    scan = scan or Scan(text)
    count = len(scan.norms)
    if not count:
        return [], []
    memo = memo_for(index, cfg)
    single_name, windows, windows_kept = memo.single, memo.windows, memo.windows_kept
    starts, norms_of, zipfs_of, variants_of = scan.starts, scan.norms, scan.zipfs, scan.variants
    # a tuple once per utterance: a window's memo key is then one slice, not a list made
    # into a tuple
    words_of = tuple(scan.words)
    joinable, plain, title = scan.joinable, scan.plain, scan.title
    max_size = index.max_words + cfg.max_extra_words
    max_len = index.max_joined * cfg.max_length_ratio
    min_len = index.min_joined * cfg.min_length_ratio
    common_zipf = cfg.common_zipf
    function_zipf = cfg.function_zipf
    by_joined = index.by_joined
    by_edge = index.by_edge
    prefixes = index.joined_prefixes
    # what the walk reads of each word for this index and configuration, kept per word as
    # written (`word_memo.walk_facts`): one look-up per word instead of several per utterance
    kept_facts, facts_kept = memo.words, memo.words_kept
    # read in one C-level pass: most words are known, the new ones are worked out after
    rows = list(map(kept_facts.get, words_of))
    if None in rows:
        for k, word in enumerate(words_of):
            if rows[k] is not None:
                continue
            row = kept_facts.get(word)  # the same new word said twice is worked out once
            if row is None:
                base = text[starts[k] : variants_of[k][0][1]] if len(variants_of[k]) > 1 else None
                row = walk_facts(index, word, base, variants_of[k], zipfs_of[k], cfg)
                if len(kept_facts) >= facts_kept:
                    kept_facts.clear()
                kept_facts[word] = row
            rows[k] = row
    # a name heard right alone; the sizes of the multi-word names the word begins or ends,
    # and those its base (without "'s") ends; a function word; an ordinary word with one
    # reading (the only kind the first check below lets pass)
    exact_tokens, edge_sizes, last_sizes, function_of, plain_common, spells_of = zip(
        *rows, strict=True
    )
    initial_of = scan.initial
    # where a run of ordinary words ends, and where the words that can be joined end: the
    # walk below jumps over the windows the first check inside it would pass over one by one
    next_uncommon = [count] * (count + 1)
    next_break = [count] * (count + 1)
    for k in range(count - 1, -1, -1):
        next_uncommon[k] = next_uncommon[k + 1] if plain_common[k] else k
        after = k + 1
        if after < count and not (joinable[after] and plain[after]):
            next_break[k] = after
        else:
            next_break[k] = next_break[after]
    edge_at = [k for k in range(count) if last_sizes[k]]
    candidates: list[_Candidate] = []
    for first in range(count):
        if not plain[first]:
            continue
        # capitalized like a name: mid-sentence, or with a capitalized second word
        titled = title[first]
        alone_titled = titled and not initial_of[first]
        first_zipf = zipfs_of[first]
        first_function = function_of[first]
        first_sizes = edge_sizes[first]
        # every window from here begins with this word: when no name's spelling begins with
        # it, none of them spells a name's beginning either (the prefixes hold every prefix)
        spells = spells_of[first]  # `norms_of[first] in prefixes`, kept per word
        joined = ""
        all_common = True
        stop = min(count, first + max_size)
        begin = first
        if plain_common[first] and not (spells and norms_of[first] in by_joined):
            # The first windows from an ordinary word are ordinary words that spell no name
            # and that no rule lets become one, up to the first window that is not: a word
            # that is not ordinary, two ordinary content words, a name's size from an edge
            # word. Found from the per-utterance lists instead of window by window.
            end = min(stop, next_break[first])
            begin = first + 1
            if (
                begin < end
                and plain_common[begin]
                and (first_function or function_of[begin])
                and not (spells and (norms_of[first] + norms_of[begin]) in prefixes)
            ):
                begin = min(next_uncommon[begin], end)
                for size in first_sizes:
                    if size >= 3 and first + size - 1 < begin:
                        begin = first + size - 1
                for at in edge_at:
                    if first + 2 <= at < begin and at - first + 1 in last_sizes[at]:
                        begin = at
                        break
            if begin >= end:
                continue
            joined = "".join(norms_of[first:begin])
            if len(joined) > max_len:
                continue
            if titled:
                titled = all(title[first + 1 : begin])
        for last in range(begin, stop):
            if last > first and not (joinable[last] and plain[last]):
                break
            n = last - first + 1
            titled = titled and title[last]
            if (
                all_common
                and plain_common[last]
                and not (spells and (joined + norms_of[last]) in prefixes)
                and (
                    n == 1
                    or (n == 2 and (first_function or function_of[last]))
                    or (n > 2 and n not in first_sizes and n not in last_sizes[last])
                )
            ):
                # ordinary words that spell no name and that no rule below lets become one:
                # most windows of ordinary speech end here, after a few list look-ups
                joined += norms_of[last]
                if len(joined) > max_len:
                    break
                continue
            variants = variants_of[last]
            for k, (norm, end, zipf) in enumerate(variants):
                common = zipf >= common_zipf
                win_joined = joined + norm
                # a window of several words begins with its first word read whole: when no
                # name's spelling begins with that (`spells`), none is spelled like the
                # window, and the look-up (a miss of the memory cache) is spared
                forms = by_joined.get(win_joined) if spells or n == 1 else None
                if forms is None:
                    # cheap rejections before any phonetic work
                    if k or (common and n == 1):
                        continue  # "duergar's" is matched as "duergar" only
                    if all_common and common:
                        if n >= 3:
                            # ordinary words only: "Iron Hearth Tavern" heard with one word
                            # misspelled, so an edge word must be a word of such a name
                            if (n, "w:" + norms_of[first]) not in by_edge and (
                                n,
                                "w:" + norm,
                            ) not in by_edge:
                                continue
                        elif first_zipf >= function_zipf or zipf >= function_zipf:
                            # a name heard as two ordinary words ("key leith"), but never
                            # "of course", "in the": function words at an edge
                            continue
                    if len(win_joined) < min_len or len(win_joined) > max_len:
                        continue
                    if n == 1 and exact_tokens[first]:
                        continue
                    if n > 1:
                        # what the pre-check and `best_name` read (the words normalized, the
                        # last as read, their frequencies and capitals, the names heard right
                        # among them) follows from the words as written, the last read
                        # without its "'s" (the only reading that gets here): a key of those
                        # is shorter to build and hash (`word_memo`). The memo keeps the
                        # window's answer: False, or what `best_name` found
                        key = words_of[first : last + 1]
                        kept = windows.get(key)
                        if kept is None:
                            if not _may_match(
                                index,
                                cfg,
                                scan,
                                exact_tokens,
                                first,
                                last,
                                win_joined,
                                norm,
                                zipf,
                                all_common and common,
                                (first_sizes, last_sizes[last]),
                            ):
                                if len(windows) >= windows_kept:
                                    windows.clear()
                                windows[key] = False
                                continue
                        elif not kept:
                            continue
                if forms is None and n == 1:
                    # a word alone: its result depends on the word and where it stands only
                    result = single_name(
                        text[starts[first] : end], norm, zipf, alone_titled, initial_of[first]
                    )
                elif forms is None and kept is not None:
                    result = kept  # a window of several words scored before
                else:
                    win = Window(
                        norms_of[first:last] + [norm],
                        win_joined,
                        text[starts[first] : end],
                        zipfs_of[first:last] + [zipf],
                        exact_tokens[first : last + 1],
                        all_common and common,
                        titled if n > 1 else alone_titled,
                        initial_of[first],
                    )
                    if forms is not None:
                        result = normalized_hit(win, forms, cfg)
                    else:
                        result = best_name(win, index, cfg)
                        if len(windows) >= windows_kept:
                            windows.clear()
                        windows[key] = result or False
                if result is not None:
                    form, score, method, exact = result
                    split = n > form.n_words and not exact and method != "normalized"
                    candidates.append(
                        _Candidate(first, last, end, form, score, method, exact, split)
                    )
                    break
            joined += norms_of[last]
            all_common = all_common and zipfs_of[last] >= common_zipf
            if len(joined) > max_len:
                break  # longer windows only get longer than any name
    if not candidates:
        return [], []
    return _select(text, starts, candidates)


@lru_cache(maxsize=_CACHE)
def _code_edge_sizes(index: NameIndex, word: str) -> frozenset[int]:
    """Sizes of the multi-word names whose first or last word shares a code with `word`."""
    sizes = index.edge_code_sizes
    found = [sizes[code] for code in phonetic_codes(word) if code in sizes]
    return frozenset().union(*found)


def _may_match(
    index: NameIndex,
    cfg: CorrectionConfig,
    scan: Scan,
    exact_tokens: Sequence[bool],
    first: int,
    last: int,
    joined: str,
    norm: str,
    zipf: float,
    all_common: bool,
    edge_sizes: tuple[frozenset[int], frozenset[int]],
) -> bool:
    """Whether `best_name` could find anything for the window of words `first`..`last` (the
    last read as `norm`, `zipf`), by the same look-ups it starts with and nothing dearer: a
    name with a code of the joined words, a name of as many words with an edge word (or its
    code) in common (`edge_sizes`: the sizes of the multi-word names the first and the last
    word begin or end) that also aligns with the window word by word, or a word no English
    list holds for the spelling fallback, the
    dearest test, last. Most windows fail all three, and building and scoring a `Window`
    cost more than these look-ups; the window's words are read from the scan by index, as
    building lists per window costs too."""
    n = last - first + 1
    norms_of = scan.norms
    joined_ok = max(scan.zipfs[first], zipf) < cfg.function_zipf and not any(
        exact_tokens[first : last + 1]
    )
    if joined_ok:
        by_code = index.by_code
        for code in phonetic_codes(joined):
            if code in by_code:
                return True
    if n in index.multi_sizes and not (all_common and n < 3):
        head = norms_of[first]
        codes = not all_common
        # a side draws names of as many words only when its word (or, with codes, its code)
        # is an edge word of one (`edge_sizes`, `_code_edge_sizes`): without that its
        # `edge_candidates` is empty, and only the side that has such names is looked up (a
        # new word's look-up is a miss of several microseconds)
        from_head = n in edge_sizes[0] or (codes and n in _code_edge_sizes(index, head))
        from_last = n in edge_sizes[1] or (codes and n in _code_edge_sizes(index, norm))
        # some name of as many words shares an edge word or its code: score word by word,
        # as `best_name` will, only those whose edge word the window's may stand for (kept
        # per word): most such windows ("the wall and" against "the X Y" names) have none
        threshold = cfg.phonetic_threshold
        pair = (cfg.short_length, cfg.phonetic_threshold, cfg.fuzzy_threshold)
        # a name drawn by one edge word must also align at the other edge (a look-up per
        # word pair) before its words are scored: "the crown shards" against "the X Y"
        if from_head:
            for form in edge_candidates(index, n, head, codes, 0, pair):
                other = form.words[-1]
                if norm != other and pair_similarity(norm, other, *pair) < 0.0:
                    continue
                aligned = aligned_score(norms_of, exact_tokens, first, norm, form, cfg)
                if aligned is not None and aligned >= threshold:
                    return True
        if from_last:
            for form in edge_candidates(index, n, norm, codes, -1, pair):
                other = form.words[0]
                if head != other and pair_similarity(head, other, *pair) < 0.0:
                    continue
                aligned = aligned_score(norms_of, exact_tokens, first, norm, form, cfg)
                if aligned is not None and aligned >= threshold:
                    return True
    return (
        joined_ok
        and not all_common
        and min(min(scan.zipfs[first:last]), zipf) < cfg.rare_zipf
        and (
            english_zipf(norm) < cfg.english_zipf
            or any(english_zipf(w) < cfg.english_zipf for w in norms_of[first:last])
        )
        and spelling_fallback_possible(index, joined, n, cfg)
    )


def _select(
    text: str, starts: list[int], candidates: list[_Candidate]
) -> tuple[list[Correction], list[tuple[int, int]]]:
    """Longest windows first; a name heard as several words loses to a clearly better part."""
    candidates.sort(key=lambda c: (c.first - c.last, not c.exact, -c.score, c.first))
    claimed = [False] * len(starts)
    corrections: list[Correction] = []
    settled: list[tuple[int, int]] = []
    for cand in candidates:
        if any(claimed[cand.first : cand.last + 1]):
            continue
        if cand.split and any(
            other is not cand
            and cand.first <= other.first
            and other.last <= cand.last
            and (other.exact or other.score >= cand.score + 0.05)
            for other in candidates
        ):
            continue  # "Kyma sees": "Kyma" alone is clearly the better reading
        for k in range(cand.first, cand.last + 1):
            claimed[k] = True
        start = starts[cand.first]
        settled.append((start, cand.end))
        if cand.exact:
            continue
        original = text[start : cand.end]
        replacement = _case_like(original, cand.form.surface)
        if replacement == original:
            continue
        corrections.append(
            Correction(
                original=original,
                replacement=replacement,
                start=start,
                end=cand.end,
                score=round(cand.score, 4),
                method=cand.method,
                entity=cand.form.canonical,
            )
        )
    corrections.sort(key=lambda c: c.start)
    settled.sort()
    return corrections, settled
