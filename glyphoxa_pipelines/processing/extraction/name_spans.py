"""Where the proper names are: a session's sentences and the capitalized spans in them.

Whether a capitalized word is a name is decided per session ("Pike" is a name in a campaign
where it is always capitalized mid-sentence, a word where it is mostly lower case), then runs
of name words become spans ("Iron Hearth Tavern", "Lord Varkas"). Spans never cross "of":
"Kima of Vord" is two mentions, so the relation between them can be read.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from glyphoxa_pipelines.memory.models import Entry
from glyphoxa_pipelines.processing.chunking import split_sentences
from glyphoxa_pipelines.processing.extraction.resumed import joined, resumed_turns
from glyphoxa_pipelines.processing.extraction.vocabulary import (
    FACTION_NOUNS,
    FACTION_PREFIXES,
    ITEM_NOUNS,
    LOCATION_NOUNS,
    LOCATION_PREFIXES,
    NOT_NAMES,
    TITLES,
)
from glyphoxa_pipelines.processing.mentions import normalize_name

_TOKEN = re.compile(r"[A-Za-z0-9À-ÿ]+(?:['’\-][A-Za-z0-9À-ÿ]+)*|[^\sA-Za-z0-9À-ÿ]")
_CAMEL = re.compile(r"[a-z][A-Z]")
_CAMEL_PREFIX = re.compile(r"^(?:Mc|Mac|De|Di|Du|La|Le|Van|Von)(?=[A-Z])")
_HEAD_NOUNS = LOCATION_NOUNS | FACTION_NOUNS | ITEM_NOUNS

Span = tuple[int, int, int, str]  # sentence index, start, end, surface


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence of a turn; facts keep its entry for their time and its text as evidence."""

    entry: Entry
    text: str
    quoted: bool  # inside an NPC's quoted speech in a DM turn (may be a lie or a rumour)


_QUOTE_SPLIT = re.compile(r"(\"[^\"]*\"|“[^”]*”)")


def _turn_sentences(entry: Entry) -> list[Sentence]:
    out = []
    for piece in _QUOTE_SPLIT.split(entry.text):
        if not piece.strip():
            continue
        quoted = piece[:1] in "\"“"
        body = piece.strip("\"“” ")
        for sentence in split_sentences(body):
            out.append(Sentence(entry, sentence, quoted))
    return out


def session_sentences(entries: Sequence[Entry]) -> list[Sentence]:
    """Every sentence of the session, quoted speech split from narration around it; a
    sentence its speaker broke off and picked up after someone cut in is one sentence, kept
    with the turn it began in (`resumed`)."""
    turns = [_turn_sentences(e) for e in entries]
    for i, j in resumed_turns(entries).items():
        head, tail = turns[i], turns[j]
        if head and tail and not head[-1].quoted and not tail[0].quoted:
            head[-1] = Sentence(entries[i], joined(head[-1].text, tail[0].text), False)
            turns[j] = tail[1:]
    return [s for sentences in turns for s in sentences]


class WordStats:
    """Per-session capitalization statistics: is "Pike" a name here or a word?"""

    def __init__(self, sentences: list[Sentence]) -> None:
        self.cap_mid: Counter[str] = Counter()
        self.cap_start: Counter[str] = Counter()
        self.lower: Counter[str] = Counter()
        self.upper: Counter[str] = Counter()
        for s in sentences:
            tokens = [t for t in _TOKEN.findall(s.text) if t[0].isalnum()]
            for i, tok in enumerate(tokens):
                low = normalize_name(tok)
                if tok.isupper() and len(tok) > 1:
                    self.upper[low] += 1
                if tok[0].isupper():
                    (self.cap_start if i == 0 else self.cap_mid)[low] += 1
                else:
                    self.lower[low] += 1

    def is_name_word(self, token: str, sentence_start: bool) -> bool:
        from wordfreq import zipf_frequency

        low = normalize_name(token)
        if low in NOT_NAMES or not token[0].isupper() or low.isdigit() or len(low) < 2:
            return False
        mixed = self.cap_mid[low] + self.cap_start[low] - self.upper[low]
        if token.isupper() and mixed <= 0:
            return False  # only ever shouted or an acronym: TPK, RPG, SFX
        if _CAMEL.search(_CAMEL_PREFIX.sub("", token)):
            return False  # chat handles and brands: CheeseBug, AllWorkNoPlay
        base = re.sub(r"['’]s$", "", low)
        if token.isupper() and len(token) > 1 and base in {"matt", "dm"}:
            return False
        mid, lower = self.cap_mid[low], self.lower[low]
        if lower > 0.25 * (mid + self.cap_start[low]):
            return False  # mostly written in lower case: an ordinary word
        zipf = zipf_frequency(base, "en")
        if sentence_start and mid == 0:
            return zipf < 2.5
        return zipf < 5.0 or mid >= 3


def _head_noun_run_ends(tokens: list[tuple[str, int, int]], j: int) -> bool:
    """Whether tokens[j:] continue a run of capitalized words that ends in a head noun."""
    while j < len(tokens) and tokens[j][0][:1].isupper():
        if tokens[j][0].lower() in _HEAD_NOUNS and (
            j + 1 >= len(tokens) or not tokens[j + 1][0][:1].isupper()
        ):
            return True
        j += 1
    return False


def scan_spans(sentences: list[Sentence], stats: WordStats) -> list[Span]:
    """(sentence index, start, end, surface) of proper-name spans in every sentence."""
    spans = []
    for si, s in enumerate(sentences):
        text = s.text
        tokens = [(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(text)]
        i = 0
        word_index = 0
        while i < len(tokens):
            tok, start, _ = tokens[i]
            if not tok[0].isalnum():
                i += 1
                continue
            sentence_start = word_index == 0
            word_index += 1
            is_title = tok[0].isupper() and (
                tok.lower().rstrip(".") in TITLES
                or (
                    tok.lower() in FACTION_PREFIXES | LOCATION_PREFIXES
                    and i + 1 < len(tokens)
                    and stats.is_name_word(tokens[i + 1][0], False)
                )
            )
            head_run = (
                not sentence_start
                and tok[0].isupper()
                and normalize_name(tok) not in NOT_NAMES
                and _head_noun_run_ends(tokens, i + 1)
            )
            title_case_run = (  # "the Bad News", "the Platinum Dragon": one Title Case name
                not sentence_start
                and tok[0].isupper()
                and normalize_name(tok) not in NOT_NAMES
                and i + 1 < len(tokens)
                and tokens[i + 1][0][:1].isupper()
                and normalize_name(tokens[i + 1][0]) not in NOT_NAMES
            )
            if not (
                is_title or head_run or title_case_run or stats.is_name_word(tok, sentence_start)
            ):
                i += 1
                continue
            j = i + 1
            end = tokens[i][2]
            last_good = i
            while j < len(tokens):
                t = tokens[j][0]
                if t[0].isupper() and (stats.is_name_word(t, False) or t.lower() in TITLES):
                    last_good, end = j, tokens[j][2]
                    j += 1
                elif t[0].isupper() and _head_noun_run_ends(tokens, j):
                    last_good, end = j, tokens[j][2]  # "Iron Hearth Tavern": common words
                    j += 1
                elif t[0].isupper() and t.isalpha() and normalize_name(t) not in NOT_NAMES:
                    last_good, end = j, tokens[j][2]  # "Platinum Dragon": Title Case goes on
                    j += 1
                else:
                    break  # never across "of": "Kima of Vord" is Kima, then Vord
            first = tokens[i][0]
            span_tokens = [tokens[k][0] for k in range(i, last_good + 1)]
            if len(span_tokens) == 1 and is_title and not stats.is_name_word(first, sentence_start):
                i = last_good + 1
                continue
            spans.append((si, start, end, text[start:end]))
            word_index += last_good - i
            i = last_good + 1
    return spans
