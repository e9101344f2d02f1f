"""Stage 1b: names stage 1 would not risk, accepted because the context vouches for them.

Stage 1 judges a window on its spelling alone, so it must be strict: a capitalized or English
word is as likely a name it does not know, or just the word. Real Whisper output breaks those
rules in a few recurring ways ("Clara to" for "Clarota", "Liar" for "Lyra", "Thessa born" for
"Thessa Morn"), and two facts a live session has tell such mishearings from ordinary speech:

- the scene: a name said in the turns just before, the speaker's own, or the party's is far
  more likely than any of the other thousands of names, so it needs less resemblance
  (`scene.py` keeps it);
- Whisper's word probability: a word it was unsure of was likely not what it wrote, while an
  ordinary word it was sure of was said.

Every acceptance needs Double Metaphone agreement (the same code up to the consonant pairs
Whisper trades, B/V and M/N, or for a scene name one edit apart) and at least one of the two
signals; ordinary English words need both. A multi-word name with one of its own rare words
heard exactly ("Thessa"), or with a word that is a known name on its own ("Machina"), is
anchored by it, and the other word needs only to sound close. Correctly heard names stay as
they are, and words stage 1 changed are never touched again.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz.distance import JaroWinkler, Levenshtein

from glyphoxa_pipelines.correction.confusions import fold, fold_letters
from glyphoxa_pipelines.correction.english_readings import english_readings
from glyphoxa_pipelines.correction.heard_span import line_words
from glyphoxa_pipelines.correction.models import Correction, CorrectionConfig
from glyphoxa_pipelines.correction.name_index import (
    NameForm,
    NameIndex,
    english_zipf,
    phonetic_codes,
    spelling_key,
)
from glyphoxa_pipelines.correction.phonetic import Scan, Token
from glyphoxa_pipelines.correction.scene_forms import NO_SCENE, scene_forms
from glyphoxa_pipelines.correction.window_codes import (
    cut_short_names,
    sharing_names,
    window_codes,
    window_facts,
)
from glyphoxa_pipelines.correction.window_scoring import sounds_like
from glyphoxa_pipelines.correction.written_forms import (
    across_comma,
    onset_heard_as_the,
    rest_heard_apart,
    split_over_ordinary_name,
)

_jw = JaroWinkler.similarity


@dataclass(frozen=True, slots=True)
class _Hit:
    first: int
    last: int
    form: NameForm
    score: float


def token_confidences(
    text: str, tokens: Sequence[Token], word_confidences: Sequence[float] | None
) -> list[float]:
    """Whisper's probability of the whitespace word holding each token (1.0 when unknown)."""
    return confidences_at(text, [t.start for t in tokens], word_confidences)


def _unsure_tokens(
    text: str, scan: Scan, word_confidences: Sequence[float] | None, unsure_at: float
) -> list[bool]:
    """Whether Whisper's probability of the whitespace word holding each token is under
    `unsure_at` (1.0 when unknown), through the word index the scan kept for each token:
    compared once per word, read per token."""
    if not word_confidences or len(text.split()) != len(word_confidences):
        # no confidences, or those of another text: no signal
        return [unsure_at > 1.0] * len(scan.starts)
    doubted = [float(p) < unsure_at for p in word_confidences]
    return [doubted[k] for k in scan.chunk]


def confidences_at(
    text: str, starts: Sequence[int], word_confidences: Sequence[float] | None
) -> list[float]:
    """Whisper's probability of the whitespace word holding each offset (1.0 when unknown).
    The words' ends are the guards' (`line_words`, kept for the last few lines), not a new
    split of the line per call: the possessive reading asks once per "'s"."""
    if not word_confidences:
        return [1.0] * len(starts)
    ends = line_words(text)[2]
    if len(ends) != len(word_confidences):
        return [1.0] * len(starts)  # confidences of another text: no signal rather than a wrong one
    out, k = [], 0
    for start in starts:
        while k + 1 < len(ends) and ends[k] <= start:
            k += 1
        out.append(float(word_confidences[k]))
    return out


@lru_cache(maxsize=65_536)
def _codes_agree(codes: tuple[str, ...], name_codes: tuple[str, ...]) -> tuple[bool, bool, bool]:
    """(same code, same up to confusable consonants, within one edit up to them) of a window's
    codes and a name's. Kept per pair of codes: codes are shared by many spellings, and the
    same ones meet the scene's names utterance after utterance."""
    if any(code in name_codes for code in codes):
        return True, True, True
    folds = edit = False
    for code in codes:
        folded = fold(code)
        for other in name_codes:
            distance = Levenshtein.distance(folded, fold(other))
            folds = folds or distance == 0
            edit = edit or (distance <= 1 and min(len(code), len(other)) >= 3)
    return False, folds, edit


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
    words: tuple[str, ...], zipfs: list[float], form: NameForm, cfg: CorrectionConfig
) -> float | None:
    """Score of a window with as many words as a multi-word name, one rare word heard exactly."""
    anchor = any(
        w == nw and z < cfg.common_zipf for w, nw, z in zip(words, form.words, zipfs, strict=True)
    )
    if not anchor or words == form.words:
        return None
    total = 0.0
    for k, (w, nw) in enumerate(zip(words, form.words, strict=True)):
        if w == nw:
            total += 1.0
            continue
        sim = _jw(w, nw)
        folded = {fold(c) for c in form.word_codes[k]}
        overlap = any(fold(c) in folded for c in phonetic_codes(w))
        if sim < cfg.anchor_threshold and not (overlap and sim >= cfg.phonetic_threshold):
            return None
        total += sim
    return total / len(words)


def _sounded(
    words: tuple[str, ...], zipfs: list[float], form: NameForm, cfg: CorrectionConfig
) -> float | None:
    """Mean closeness of a window heard word by word as other words of a multi-word name's
    sounds ("box machinist" for "Vox Machina"): each word's code agrees with the name word's,
    B/V and M/N folded, or runs on past it (a syllable added: "machinist"), and each is spelled
    close. None when some word does not, when all were heard right, or when every word is an
    ordinary one ("the box machine": ordinary words say what they say)."""
    if words == form.words or min(zipfs) >= cfg.common_zipf:
        return None
    total = 0.0
    for k, word in enumerate(words):
        name_word = form.words[k]
        if word == name_word:
            total += 1.0
            continue
        sim = sounds_like(word, name_word, cfg.anchor_threshold)
        if sim < 0.0:
            return None
        total += sim
    return total / len(words)


def _named_anchor_hits(
    scan: Scan,
    first: int,
    last: int,
    anchors: list[int],
    index: NameIndex,
    cfg: CorrectionConfig,
    vouched: frozenset[str] | None,
) -> list[_Hit]:
    """Multi-word names a window holding a name heard right ("Machina") may be, the name kept
    in place and the other words sounding close ("Box Machina" for "Vox Machina"). `vouched`
    is None when Whisper was unsure of the window, else the scene's names: as for any anchor,
    a match needs one signal unless it is close on its own."""
    n = last - first + 1
    words, zipfs = tuple(scan.norms[first : last + 1]), scan.zipfs[first : last + 1]
    out = []
    seen: set[int] = set()
    edge_sizes = index.edge_sizes
    for word in (words[0], words[-1]):
        if n not in edge_sizes.get(word, ()):
            continue  # no name of `n` words begins or ends with it: no `by_edge` key to build
        for form in index.by_edge[(n, "w:" + word)]:
            if id(form) in seen or form.common:
                continue
            seen.add(id(form))
            if any(words[k - first] != form.words[k - first] for k in anchors):
                continue  # a name heard right is never rewritten
            score = _anchored(words, zipfs, form, cfg)
            if score is None:
                continue
            if vouched is None or form.canonical in vouched or score >= cfg.anchor_sure:
                out.append(_Hit(first, last, form, score))
    return out


def _word_states(
    scan: Scan, index: NameIndex, settled: Iterable[tuple[int, int]], changed: Iterable[Correction]
) -> tuple[list[bool], list[bool]]:
    """(blocked, named) per word. Blocked words are never part of a window: stage 1 changed
    them, or they are no plain words (handles, numbers), or they lie in a longer name heard
    right. Named words are names heard right on their own ("Machina"): they stay as they are,
    but may anchor a longer name ("Box Machina" for "Vox Machina")."""
    by_joined = index.by_joined
    blocked = [not plain for plain in scan.plain]
    named = [norm in by_joined for norm in scan.norms]
    # the words inside a span, found by bisection: spans are few, words many
    starts = scan.starts
    for start, end in settled:
        for k in range(bisect_left(starts, start), bisect_left(starts, end)):
            if not named[k]:
                blocked[k] = True
    for c in changed:
        for k in range(bisect_left(starts, c.start), bisect_left(starts, c.end)):
            blocked[k] = True
    return blocked, named


def context_corrections(
    text: str,
    index: NameIndex,
    settled: Iterable[tuple[int, int]],
    word_confidences: Sequence[float] | None,
    scene: Iterable[str] | None,
    cfg: CorrectionConfig,
    *,
    scan: Scan | None = None,
    changed: Sequence[Correction] = (),
    ending_at: Collection[int] | None = None,
) -> list[Correction]:
    """Corrections the scene or Whisper's uncertainty vouch for, outside `settled` spans.

    `scan` is `Scan(text)` when the caller has it (stage 1 built one); `changed` are stage 1's
    corrections, whose words are never touched again (the other settled spans are names heard
    right, which may still anchor a longer name). `ending_at`: the caller wants only the
    corrections that end at one of these offsets (the possessive reading's second pass); the
    answer then holds all of them, and is empty when there are none.
    """
    if not text or not index:
        return []
    scene_key = scene if isinstance(scene, tuple) else tuple(scene or ())
    in_play = scene_forms(index, scene_key) if scene_key else NO_SCENE
    scene_canon, by_scene = in_play.canon, in_play.by_variant
    has_variants = bool(by_scene)  # once: its truth is a method call, asked per window code
    scene_lengths = in_play.variant_lengths
    anchor_words = in_play.anchor_words
    unsure_at = cfg.unsure_confidence
    if not scene_canon and (not word_confidences or min(word_confidences) >= unsure_at):
        return []  # neither signal: nothing to vouch for a change, and no words to scan
    scan = scan or Scan(text)
    count = len(scan.norms)
    if not count:
        return []
    unsure_of = _unsure_tokens(text, scan, word_confidences, unsure_at)
    if not scene_canon and not any(unsure_of):
        return []
    norms, joinable = scan.norms, scan.joinable
    # "Walk's", "relaxes": read as the ordinary words they inflect, not as made-up ones
    zipfs = english_readings(scan, index.by_joined, cfg)
    norm_tuple = tuple(norms)  # a window's words are then one slice, not a list made a tuple
    blocked, named = _word_states(scan, index, settled, changed)
    common_zipf, function_zipf = cfg.common_zipf, cfg.function_zipf
    anchor_at = cfg.anchor_threshold
    # a window's codes and what they bring, one look-up per window; the call for new ones
    windows_kept = window_codes(index).get
    multi_sizes, by_edge, edge_sizes = index.multi_sizes, index.by_edge, index.edge_sizes
    hits: list[_Hit] = []
    # a window with no doubted word and no word rarer than ordinary English is passed over
    # below: the words from which every window in reach is such are not walked at all
    # (a word is walked when one of the `width` words from it has a signal: one pass back
    # from the end, keeping the nearest such word)
    width = cfg.context_max_words
    walked = [False] * count
    nearest = count + width
    for k in range(count - 1, -1, -1):
        if unsure_of[k] or zipfs[k] < common_zipf:
            nearest = k
        walked[k] = nearest - k < width
    firsts: Iterable[int] = range(count)
    wanted: set[int] = set()  # with `ending_at`: the words a wanted correction ends with
    if ending_at is not None:
        # every window's hits lie within its words (`rest_heard_apart`'s aside, run whole
        # below), so a hit ending at a wanted word comes from a window starting at most
        # `width` - 1 words before it: only those starts are walked first
        wanted = {k for k, end in enumerate(scan.ends) if end in ending_at}
        firsts = sorted({f for k in wanted for f in range(max(0, k - width + 1), k + 1)})
    for first in firsts:
        if not walked[first]:
            continue
        joined = ""
        unsure = False
        all_common = True
        zipf = 0.0  # the most frequent word's, function words aside
        content = False  # the window holds a word that is no function word
        doubted = True  # Whisper was unsure of every word of the window but function words
        anchors: list[int] = []  # names heard right in the window: they can only anchor
        for last in range(first, min(count, first + width)):
            if blocked[last] or (last > first and not joinable[last]):
                if (
                    last == first + 1
                    and not blocked[last]
                    and unsure_of[first]
                    and unsure_of[last]
                    and scene_canon
                    and text[scan.ends[first] : scan.starts[last]] == ", "
                ):
                    hits.extend(
                        _Hit(*span)
                        for span in across_comma(norms, first, by_scene, scene_canon, cfg)
                    )
                break
            joined += norms[last]
            if named[last]:
                anchors.append(last)
            unsure = unsure or unsure_of[last]
            all_common = all_common and zipfs[last] >= common_zipf
            if zipfs[last] < function_zipf:
                if zipfs[last] > zipf:
                    zipf = zipfs[last]
                content = True
                doubted = doubted and unsure_of[last]
            if not unsure and all_common:
                continue  # confident ordinary words: no signal could vouch for a change
            n = last - first + 1
            if anchors:
                if (
                    n > 1
                    and n in multi_sizes
                    # some name of `n` words begins or ends with an edge word: else the
                    # look-ups `_named_anchor_hits` would make find nothing
                    and (
                        n in edge_sizes.get(norms[first], ())
                        or n in edge_sizes.get(norms[last], ())
                    )
                ):
                    vouched = None if unsure else scene_canon
                    hits.extend(_named_anchor_hits(scan, first, last, anchors, index, cfg, vouched))
                if n > 1 and content and doubted and not all_common:
                    hits.extend(
                        _Hit(*span)
                        for span in split_over_ordinary_name(
                            zipfs, first, last, anchors, joined, index, cfg
                        )
                    )
                continue
            edge = zipfs[first] >= function_zipf or zipfs[last] >= function_zipf
            # a function word at an edge ("Trink it") is judged by the edge rule, not here
            window_zipf = zipf if content else 9.0
            if (
                unsure
                or window_zipf < common_zipf
                or any(
                    zipfs[k] < common_zipf and norms[k] in anchor_words
                    for k in range(first, last + 1)
                )
            ):
                codes, code_facts = windows_kept(joined) or window_facts(index, joined)
            else:
                # Whisper sure of every word, and an ordinary content word in the window: no
                # code agreement can vouch for a name (`_need`), and a name found by code could
                # win only anchored by a rare word of its own heard exactly (`_anchored`),
                # which no word here is for the scene's names; only names sharing an edge word
                # can, and they are looked up below without the window's code
                codes, code_facts = (), ()
            forms: dict[int, NameForm] = {}
            for facts in code_facts:
                if unsure:
                    for form in facts.named:
                        forms[id(form)] = form
                size = facts.size  # its variants' lengths: folding keeps it, a deletion is one less
                if has_variants and (
                    size in scene_lengths or (size >= 4 and size - 1 in scene_lengths)
                ):
                    # the names sharing a variant, of which the scene must hold one
                    sharing = facts.sharing
                    if sharing is None:
                        sharing = facts.sharing = sharing_names(index, facts.code)
                    if scene_canon.isdisjoint(sharing):
                        continue
                    for form in in_play.forms_of_code(facts.code):
                        forms[id(form)] = form
            if n > 1 and n in multi_sizes:
                # the names of as many words that begin or end with an edge word: the word's
                # sizes (`edge_sizes`) say whether there are any before a key is built
                for word in (norms[first], norms[last]):
                    if n in edge_sizes.get(word, ()):
                        for form in by_edge[(n, "w:" + word)]:
                            forms[id(form)] = form
                if unsure and not all_common:
                    # the scene's names of as many words, heard as other words of their
                    # sounds: no look-up finds them, and only this rule may take them (not
                    # when every word is an ordinary one: `_sounded` refuses those)
                    head = norms[first]
                    for form in in_play.by_size.get(n, ()):
                        if id(form) in forms:
                            continue
                        name_head = form.words[0]
                        if head != name_head and sounds_like(head, name_head, anchor_at) < 0.0:
                            continue  # `_sounded` refuses at the first word: most names
                        words, window_zipfs = norm_tuple[first : last + 1], zipfs[first : last + 1]
                        score = _sounded(words, window_zipfs, form, cfg)
                        if score is not None and score >= cfg.sounded_threshold:
                            hits.append(_Hit(first, last, form, score))
            if (
                n == 1
                and (unsure or (scan.title[first] and not scan.initial[first]))
                and not edge
                and zipf < common_zipf
            ):
                # a word that is no ordinary English, with the code of a scene name cut short
                # of its last sound ("Kila", "Kiela" for Keyleth): Whisper doubted it, or
                # wrote it capitalized mid-sentence, as it writes the names it hears; the
                # scene's one-word forms by their cut codes are read only when it holds a name
                # cut short to the code (`cut_short`: most codes are no such cut)
                for facts in code_facts:
                    cut_short = facts.cut_short
                    if cut_short is None:
                        cut_short = facts.cut_short = cut_short_names(index, facts.code)
                    if not cut_short or scene_canon.isdisjoint(cut_short):
                        continue
                    for form in in_play.by_short.get(fold(facts.code), ()):
                        if id(form) not in forms:
                            score = _jw(fold_letters(spelling_key(joined)), fold_letters(form.key))
                            if score >= cfg.short_threshold:
                                hits.append(_Hit(first, last, form, score))
            if (
                n == 2
                and norms[first] == "the"
                and unsure_of[last]
                and in_play.voiced
                and english_zipf(norms[last]) < cfg.english_zipf
            ):
                hits.extend(
                    _Hit(*span)
                    for span in onset_heard_as_the(first, norms[last], in_play.voiced, cfg)
                )
            if not forms:
                continue
            key = ""  # the window's spelling key, worked out for the first form scored
            for form in forms.values():
                form_size = len(form.words)  # `n_words`, without the property's call
                if n > form_size + 1 or form.common:
                    continue
                in_scene = form.canonical in scene_canon
                if n == form_size and n > 1:
                    words, window_zipfs = norm_tuple[first : last + 1], zipfs[first : last + 1]
                    score = _anchored(words, window_zipfs, form, cfg)
                    if score is not None and (in_scene or unsure or score >= cfg.anchor_sure):
                        hits.append(_Hit(first, last, form, score))
                        continue
                    if in_scene and unsure:
                        score = _sounded(words, window_zipfs, form, cfg)
                        if score is not None and score >= cfg.sounded_threshold:
                            hits.append(_Hit(first, last, form, score))
                            continue
                name_codes = form.codes
                for code in codes:
                    if code in name_codes:  # the very code (every name found by code when
                        exact = folds = edit = True  # Whisper was unsure): no cache to ask
                        break
                else:
                    exact, folds, edit = _codes_agree(codes, name_codes)
                # a consonant pair traded or one edit apart is close only for a name of the
                # scene: among thousands of names, some made-up one is always that near
                # ("borrel" is not "Vrel", "brained" not "Vriand")
                if not (exact or (in_scene and (folds or edit))) or (edge and not exact):
                    continue
                if not (folds or unsure):
                    # a code one edit off, the name in play but Whisper sure of what it wrote:
                    # a word of its own ("Trings" of gnome blood is not Trinket)
                    continue
                need = _need(cfg, scene=in_scene, unsure=unsure, exact=exact, zipf=window_zipf)
                if need is None:
                    continue
                if edge and exact and in_scene and content and doubted and n > 1:
                    # the name's last sound written as a function word ("kill it", "drink it"
                    # for Keyleth, Trinket): the very code, a name in play, and Whisper unsure
                    # of what it wrote; said with confidence, "kill it" is kept
                    need = max(need, cfg.tail_threshold)
                elif (
                    n == 1
                    and not edge
                    and zipfs[first] >= common_zipf
                    and scan.title[first]
                    and not scan.initial[first]
                ):
                    # an ordinary word Whisper capitalized mid-sentence, as it writes names
                    # ("Okay, Tricked is very happy" for Trinket): a third signal
                    need = max(need, cfg.titled_threshold)
                elif edge or (n == 1 and zipfs[first] >= common_zipf):
                    need = max(need, cfg.edge_threshold)
                if not key:
                    key = spelling_key(joined)
                score = max(
                    _jw(joined, form.joined),
                    _jw(key, form.key),
                    _jw(fold_letters(key), fold_letters(form.key)),
                )
                if score >= need:
                    hits.append(_Hit(first, last, form, score))
    if any(named) and in_play.single:  # the scene's one-word forms are laid out when read
        # a one-word name heard as a name it begins with and a word ("Vex Alia" for Vex'ahlia)
        apart = rest_heard_apart(
            norms, zipfs, named, blocked, joinable, unsure_of, in_play.single, cfg
        )
        hits.extend(_Hit(*span) for span in apart)
    if ending_at is not None:
        if not any(hit.last in wanted for hit in hits):
            return []  # the whole walk's choice could hold no correction ending there
        # which of them is chosen depends on every overlapping hit: the whole walk (rare)
        return context_corrections(
            text, index, settled, word_confidences, scene, cfg, scan=scan, changed=changed
        )
    return _choose(text, scan, hits, cfg)


def _choose(text: str, scan: Scan, hits: list[_Hit], cfg: CorrectionConfig) -> list[Correction]:
    """Best hit per span, longest first; two entities about equally good change nothing."""
    hits.sort(key=lambda h: (h.first - h.last, -h.score))
    taken = [False] * len(scan.starts)
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
        start, end = scan.starts[hit.first], scan.ends[hit.last]
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
