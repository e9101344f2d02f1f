"""Stage 1b: names stage 1 would not risk, accepted because the context vouches for them.

Stage 1 judges a window on its spelling alone, so it must be strict: a capitalized or English
word is as likely a name it does not know, or just the word. Real Whisper output breaks those
rules in a few recurring ways ("Clara to" for "Clarota", "Liar" for "Lyra", "Thessa born" for
"Thessa Morn"), and two facts a live session has tell such mishearings from ordinary speech:

- the scene: a name said in the turns just before (or the speaker's own) is far more likely
  than any of the other thousands of names, so it needs less resemblance;
- Whisper's word probability: a word it was unsure of was likely not what it wrote, while an
  ordinary word it was sure of was said.

Every acceptance needs Double Metaphone agreement (the same code, or one longer by a letter) and
at least one of the two signals; ordinary English words need both. A multi-word name with one
of its own rare words heard exactly ("Thessa") is anchored by it, and the other word needs only
to sound close. Correctly heard names, and spans stage 1 settled, are never touched.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz.distance import JaroWinkler, Levenshtein

from glyphoxa_pipelines.correction.models import Correction, CorrectionConfig
from glyphoxa_pipelines.correction.name_index import (
    NameForm,
    NameIndex,
    phonetic_codes,
    spelling_key,
)
from glyphoxa_pipelines.correction.phonetic import Token, tokenize

_WORD = re.compile(r"\S+")
_jw = JaroWinkler.similarity


@dataclass(frozen=True, slots=True)
class _Hit:
    first: int
    last: int
    form: NameForm
    score: float


def _fold(code: str) -> str:
    """A code with B and V folded ("Bex" for "Vex"): Whisper trades the two."""
    return code.replace("P", "F")


@lru_cache(maxsize=65_536)
def _variants(code: str) -> frozenset[str]:
    """A folded code and, from four letters on, each of its one-letter deletions: two codes
    within one edit share a variant."""
    folded = _fold(code)
    out = {folded}
    if len(folded) >= 4:
        out.update(folded[:k] + folded[k + 1 :] for k in range(len(folded)))
    return frozenset(out)


@lru_cache(maxsize=8)
def _folded_index(index: NameIndex) -> dict[str, tuple[NameForm, ...]]:
    """Forms by their folded codes, built once per index (indexes are immutable)."""
    out: dict[str, list[NameForm]] = {}
    for form in index.forms:
        if not form.common:
            for folded in {_fold(code) for code in form.codes}:
                out.setdefault(folded, []).append(form)
    return {k: tuple(v) for k, v in out.items()}


@lru_cache(maxsize=256)
def _scene_forms(
    index: NameIndex, scene: tuple[str, ...]
) -> tuple[frozenset[str], dict[str, tuple[NameForm, ...]]]:
    """Canonical names of the scene's entities (given by canonical name or any alias), and
    their forms by every variant of their codes."""
    wanted = set(scene)
    canon = frozenset(
        f.canonical for f in index.forms if f.surface in wanted or f.canonical in wanted
    )
    out: dict[str, list[NameForm]] = {}
    for form in index.forms:
        if form.canonical in canon and not form.common:
            for variant in {v for code in form.codes for v in _variants(code)}:
                out.setdefault(variant, []).append(form)
    return canon, {k: tuple(v) for k, v in out.items()}


def token_confidences(
    text: str, tokens: list[Token], word_confidences: Sequence[float] | None
) -> list[float]:
    """Whisper's probability of the whitespace word holding each token (1.0 when unknown)."""
    if not word_confidences:
        return [1.0] * len(tokens)
    spans = [m.span() for m in _WORD.finditer(text)]
    if len(spans) != len(word_confidences):
        return [1.0] * len(tokens)  # confidences of another text: no signal rather than a wrong one
    out, k = [], 0
    for token in tokens:
        while k + 1 < len(spans) and spans[k][1] <= token.start:
            k += 1
        out.append(float(word_confidences[k]))
    return out


def _codes_agree(codes: tuple[str, ...], form: NameForm) -> tuple[bool, bool, bool]:
    """(same code, same up to B/V, within one edit up to B/V) of a window and a name."""
    if any(code in form.codes for code in codes):
        return True, True, True
    labial = edit = False
    for code in codes:
        folded = _fold(code)
        for other in form.codes:
            distance = Levenshtein.distance(folded, _fold(other))
            labial = labial or distance == 0
            edit = edit or (distance <= 1 and min(len(code), len(other)) >= 3)
    return False, labial, edit


def _need(
    cfg: CorrectionConfig, *, scene: bool, unsure: bool, exact: bool, zipf: float
) -> float | None:
    """Jaro-Winkler a window needs to become a name, or None when the context cannot vouch.

    `zipf` is the most frequent word's: a made-up word ("Tabirias") is a name misheard or a
    name unknown, a listed word ("Bex") needs one signal, an ordinary word ("clarity") both.
    """
    if zipf >= cfg.common_zipf:
        if not (scene and unsure):
            return None
        need = cfg.context_threshold
    elif zipf >= cfg.english_zipf:
        if not (scene or unsure):
            return None
        need = cfg.context_threshold
    else:
        need = cfg.context_threshold - cfg.unknown_bonus
    if scene:
        need -= cfg.scene_bonus
    if unsure:
        need -= cfg.unsure_bonus
    if not exact:
        need += cfg.near_code_penalty
    return need


def _anchored(
    tokens: list[Token], first: int, last: int, form: NameForm, cfg: CorrectionConfig
) -> float | None:
    """Score of a window with as many words as a multi-word name, one rare word heard exactly."""
    words = [t.norm for t in tokens[first : last + 1]]
    anchor = any(
        w == nw and t.zipf < cfg.common_zipf
        for w, nw, t in zip(words, form.words, tokens[first : last + 1], strict=True)
    )
    if not anchor or words == list(form.words):
        return None
    total = 0.0
    for k, (w, nw) in enumerate(zip(words, form.words, strict=True)):
        if w == nw:
            total += 1.0
            continue
        sim = _jw(w, nw)
        overlap = any(c in form.word_codes[k] for c in phonetic_codes(w))
        if sim < cfg.anchor_threshold and not (overlap and sim >= cfg.phonetic_threshold):
            return None
        total += sim
    return total / len(words)


def context_corrections(
    text: str,
    index: NameIndex,
    settled: Iterable[tuple[int, int]],
    word_confidences: Sequence[float] | None,
    scene: Iterable[str] | None,
    cfg: CorrectionConfig,
) -> list[Correction]:
    """Corrections the scene or Whisper's uncertainty vouch for, outside `settled` spans."""
    tokens = tokenize(text)
    if not tokens or not index:
        return []
    scene_key = tuple(sorted(set(scene or ())))
    scene_canon, by_scene = _scene_forms(index, scene_key) if scene_key else (frozenset(), {})
    conf = token_confidences(text, tokens, word_confidences)
    if not scene_canon and min(conf) >= cfg.unsure_confidence:
        return []
    by_folded = _folded_index(index)
    spans = list(settled)
    blocked = [
        any(s <= t.start < e for s, e in spans)
        or not t.plain
        or t.norm in index.by_joined  # a name heard right stays
        for t in tokens
    ]
    hits: list[_Hit] = []
    for first in range(len(tokens)):
        joined = ""
        for last in range(first, min(len(tokens), first + cfg.context_max_words)):
            if blocked[last] or (last > first and not tokens[last].joinable):
                break
            joined += tokens[last].norm
            window = tokens[first : last + 1]
            n = len(window)
            edge = max(window[0].zipf, window[-1].zipf) >= cfg.function_zipf
            unsure = min(conf[first : last + 1]) < cfg.unsure_confidence
            # a function word at an edge ("Trink it") is judged by the edge rule, not here
            zipf = max((t.zipf for t in window if t.zipf < cfg.function_zipf), default=9.0)
            if not unsure and min(t.zipf for t in window) >= cfg.common_zipf:
                continue  # confident ordinary words: no signal could vouch for a change
            codes = phonetic_codes(joined)
            forms: dict[int, NameForm] = {}
            for code in codes:
                if unsure:
                    for form in by_folded.get(_fold(code), ()):
                        forms[id(form)] = form
                if by_scene:
                    for variant in _variants(code):
                        for form in by_scene.get(variant, ()):
                            forms[id(form)] = form
            if n > 1 and n in index.multi_sizes:
                for key in ((n, "w:" + window[0].norm), (n, "w:" + window[-1].norm)):
                    for form in index.by_edge.get(key, ()):
                        forms[id(form)] = form
            key = spelling_key(joined)
            for form in forms.values():
                if n > form.n_words + 1 or form.common:
                    continue
                in_scene = form.canonical in scene_canon
                if n == form.n_words and n > 1:
                    score = _anchored(tokens, first, last, form, cfg)
                    if score is not None and (in_scene or unsure or score >= cfg.anchor_sure):
                        hits.append(_Hit(first, last, form, score))
                        continue
                exact, labial, edit = _codes_agree(codes, form)
                # one edit apart is close only for a name of the scene: among thousands of
                # names, some made-up one is always an edit away
                if not (labial or (edit and in_scene)) or (edge and not exact):
                    continue
                need = _need(cfg, scene=in_scene, unsure=unsure, exact=exact, zipf=zipf)
                if need is None:
                    continue
                if edge or (n == 1 and window[0].zipf >= cfg.common_zipf):
                    need = max(need, cfg.edge_threshold)
                score = max(
                    _jw(joined, form.joined),
                    _jw(key, form.key),
                    _jw(joined.replace("b", "v"), form.joined.replace("b", "v")),
                )
                if score >= need:
                    hits.append(_Hit(first, last, form, score))
    return _choose(text, tokens, hits, cfg)


def _choose(
    text: str, tokens: list[Token], hits: list[_Hit], cfg: CorrectionConfig
) -> list[Correction]:
    """Best hit per span, longest first; two entities about equally good change nothing."""
    hits.sort(key=lambda h: (h.first - h.last, -h.score))
    taken = [False] * len(tokens)
    out: list[Correction] = []
    for hit in hits:
        if any(taken[hit.first : hit.last + 1]):
            continue
        rivals = [
            h
            for h in hits
            if (h.first, h.last) == (hit.first, hit.last)
            and h.form.canonical != hit.form.canonical
            and hit.score - h.score <= cfg.ambiguity_margin
        ]
        if rivals:
            continue
        start, end = tokens[hit.first].start, tokens[hit.last].end
        original = text[start:end]
        if original == hit.form.surface:
            continue
        for k in range(hit.first, hit.last + 1):
            taken[k] = True
        out.append(
            Correction(
                original=original,
                replacement=hit.form.surface,
                start=start,
                end=end,
                score=round(hit.score, 4),
                method="context",
                entity=hit.form.canonical,
            )
        )
    out.sort(key=lambda c: c.start)
    return out
