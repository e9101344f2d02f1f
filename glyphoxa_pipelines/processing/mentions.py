"""Find which known entities a text mentions: whole-word, case-insensitive name/alias matching.

Names are tokenized the same way as the text and stored in a dict keyed by token tuples, so a
scan is one dict probe per (position, name length) — linear in the text, independent of how
many thousands of names a campaign has. Possessives ("Grog's") and curly apostrophes match.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from glyphoxa_pipelines.memory.models import Entity

_WORD = re.compile(r"\w+(?:['’]\w+)*", re.UNICODE)


_FOLD_CACHE: dict[str, str] = {"’": "'", "‘": "'"}


def _fold_char(ch: str) -> str:
    folded = _FOLD_CACHE.get(ch)
    if folded is None:
        base = "".join(
            c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c)
        ).lower()
        folded = _FOLD_CACHE[ch] = base if len(base) == 1 else ch
    return folded


def normalize_name(text: str) -> str:
    """Case-, accent- and apostrophe-insensitive form used to compare names.

    Length-preserving (one character in, one out), so match offsets index the original text.
    """
    if text.isascii():
        return text.lower()
    return "".join(_fold_char(ch) for ch in text)


def name_tokens(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(normalize_name(text)))


def _strip_possessive(token: str) -> str:
    if token.endswith("'s"):
        return token[:-2]
    return token


@dataclass(frozen=True, slots=True)
class Mention:
    entity_id: str
    surface: str
    start: int
    end: int


class MentionFinder:
    """Matches entity names and aliases in text; longest match wins at each position."""

    def __init__(self, names: Mapping[str, str | Iterable[str]] | None = None) -> None:
        self._index: dict[tuple[str, ...], set[str]] = {}
        self._max_len = 0
        for name, ids in (names or {}).items():
            self.add(name, [ids] if isinstance(ids, str) else ids)

    @classmethod
    def from_entities(cls, entities: Iterable[Entity], *, min_chars: int = 2) -> MentionFinder:
        finder = cls()
        for entity in entities:
            for name in [entity.name, *entity.aliases]:
                if len(name.strip()) >= min_chars:
                    finder.add(name, [entity.id])
        return finder

    def add(self, name: str, entity_ids: Iterable[str]) -> None:
        tokens = name_tokens(name)
        if not tokens:
            return
        self._index.setdefault(tokens, set()).update(entity_ids)
        self._max_len = max(self._max_len, len(tokens))

    def __len__(self) -> int:
        return len(self._index)

    def find(self, text: str) -> list[Mention]:
        """Non-overlapping mentions in text order (the longest name at each position)."""
        if not self._index or not text:
            return []
        matches = list(_WORD.finditer(normalize_name(text)))
        words = [m.group(0) for m in matches]
        bare = [_strip_possessive(w) for w in words]
        out: list[Mention] = []
        i = 0
        while i < len(words):
            hit = None
            for n in range(min(self._max_len, len(words) - i), 0, -1):
                key = tuple(words[i : i + n])
                ids = self._index.get(key)
                if ids is None and bare[i + n - 1] != words[i + n - 1]:
                    ids = self._index.get((*key[:-1], bare[i + n - 1]))
                if ids:
                    hit = (n, ids)
                    break
            if hit is None:
                i += 1
                continue
            n, ids = hit
            start, end = matches[i].start(), matches[i + n - 1].end()
            for entity_id in sorted(ids):
                out.append(Mention(entity_id, text[start:end], start, end))
            i += n
        return out

    def entity_ids(self, text: str) -> list[str]:
        """Distinct entity ids mentioned, in order of first mention."""
        return list(dict.fromkeys(m.entity_id for m in self.find(text)))
