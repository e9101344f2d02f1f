"""What stage 1 finds for a word standing alone, and whether a window of several words may be
a name at all, remembered per name index and configuration.

Why: the words of table talk repeat from utterance to utterance (a name misheard the same way
each time it is said, the same rare words of the campaign), and a one-word window that no
name is spelled like costs a full `best_name` search, the dearest step of the walk, every
time. Its result depends only on the word as written, whether it is capitalized like a name
where it stands and whether it starts a sentence, the index and the configuration; so it is
kept, per (index, configuration), in a bounded least-recently-used memo. The index is
immutable and the configuration frozen, so a kept result never goes stale.

A window of several words that no name is spelled like goes through the walk's pre-check
(`phonetic._may_match`: its code, the names sharing an edge word, the spelling fallback's
search) before any scoring, and the few it lets through go to `best_name`; both answers
depend only on its words as written (the last read without its "'s": their capitals, the
names heard right among them, their frequencies) and the same pair (index, configuration),
and the same windows ("Grog and", "hands Branaka") come back turn after turn, so the
window's answer is kept too: False, or what `best_name` found (a window the pre-check lets
through costs a full search, tens of microseconds, each time it is met otherwise). So
is what the walk reads of each word (a name heard right, the sizes of the names it may begin
or end, an ordinary or a function word): a few look-ups a word, read once per utterance.
"""

from __future__ import annotations

from functools import lru_cache

from glyphoxa_pipelines.correction.models import CorrectionConfig, Method
from glyphoxa_pipelines.correction.name_index import NameForm, NameIndex
from glyphoxa_pipelines.correction.window_scoring import Window, best_name

WORDS_KEPT = 16_384  # per (index, configuration): a campaign's talk uses a few thousand words
WINDOWS_KEPT = 16_384  # per (index, configuration): about 3 MiB full, then emptied
MEMOS_KEPT = 8  # (index, configuration) pairs: a worker serves a few campaigns at a time

Found = tuple[NameForm, float, Method, bool] | None
# what the walk reads of a word (`walk_facts`)
WalkFacts = tuple[bool, frozenset[int], frozenset[int], bool, bool, bool]
_NO_SIZES: frozenset[int] = frozenset()


def walk_facts(
    index: NameIndex,
    word: str,
    base: str | None,
    variants: tuple[tuple[str, int, float], ...],
    zipf: float,
    config: CorrectionConfig,
) -> WalkFacts:
    """What stage 1's walk reads of a word as written (`base`: written without its "'s",
    when it has one; `variants`, `zipf`: its readings, base first, and its frequency):
    whether it is a one-word name heard right, the sizes of the multi-word names it begins
    or ends and those its base ends, whether it is a function word, and whether it is an
    ordinary word of one reading, and whether some name's spelling begins with it (read as
    written, "'s" and all). All follow from the word, the index and the configuration."""
    by_surface = index.by_surface
    form = by_surface.get(word)
    if form is None and base is not None:
        form = by_surface.get(base)
    edge_sizes = index.edge_sizes
    return (
        form is not None and form.n_words == 1,
        edge_sizes.get(variants[-1][0], _NO_SIZES),
        edge_sizes.get(variants[0][0], _NO_SIZES),
        zipf >= config.function_zipf,
        zipf >= config.common_zipf and len(variants) == 1,
        # a look-up in a set of every prefix of every name, once per word, not once per
        # utterance the word is in (among tens of thousands, each a miss of the memory cache)
        variants[-1][0] in index.joined_prefixes,
    )


class WordMemo:
    """`best_name` of one-word windows, the walk's facts of each word and its pre-check of
    longer windows, for one index and configuration."""

    __slots__ = ("index", "config", "single", "words", "words_kept", "windows", "windows_kept")

    def __init__(self, index: NameIndex, config: CorrectionConfig) -> None:
        self.index = index
        self.config = config
        self.single = lru_cache(maxsize=WORDS_KEPT)(self._single)
        # a word as written → what the walk reads of it for this index and configuration
        # (`walk_facts`); emptied when it holds `words_kept`
        self.words: dict[str, WalkFacts] = {}
        self.words_kept = WORDS_KEPT
        # a window's words as written → False when the walk's pre-check turns it away or
        # `best_name` finds nothing for it, else what `best_name` found (what both read of
        # the words, their normalized forms, frequencies, capitals and which are names
        # heard right, follows from them; the last is read without its "'s")
        self.windows: dict[tuple[str, ...], Found | bool] = {}
        self.windows_kept = WINDOWS_KEPT  # `windows` is emptied when it holds as many

    def _single(self, text: str, norm: str, zipf: float, titled: bool, initial: bool) -> Found:
        """`best_name` of the window of one word, `text` as written (`norm`, `zipf` its
        normalized form and frequency), not a name heard right and not an ordinary word:
        the only one-word windows the walk scores this way."""
        window = Window([norm], norm, text, [zipf], [False], False, titled, initial)
        return best_name(window, self.index, self.config)


# keyed by identity: hashing a configuration (35 fields) costs more than a word's look-up;
# each memo holds its index and configuration, so an id cannot be reused while it is kept
_MEMOS: dict[tuple[int, int], WordMemo] = {}


def memo_for(index: NameIndex, config: CorrectionConfig) -> WordMemo:
    """The memo of this index and configuration; the oldest is dropped past `MEMOS_KEPT`."""
    key = (id(index), id(config))
    memo = _MEMOS.get(key)
    if memo is None:
        while len(_MEMOS) >= MEMOS_KEPT:
            _MEMOS.pop(next(iter(_MEMOS)), None)
        memo = _MEMOS[key] = WordMemo(index, config)
    return memo
