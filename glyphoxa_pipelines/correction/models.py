"""Plain result types of transcript correction.

Frozen dataclasses so results can be cached, compared in tests and stored as JSON (`as_dict`) in
the L1 `corrections` column without an ORM.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Method = Literal["normalized", "phonetic", "aligned", "fuzzy", "context", "llm"]


@dataclass(frozen=True, slots=True)
class Correction:
    """One replaced span.

    `start`/`end` are character offsets of `original` in the *raw* text (raw text is immutable,
    so offsets into it stay valid whatever later stages do). `entity` is the canonical name of
    the entity whose name or alias `replacement` is.
    """

    original: str
    replacement: str
    start: int
    end: int
    score: float
    method: Method
    entity: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class CorrectionResult:
    """Corrected text, the untouched raw text, and what changed (in raw-text order)."""

    text: str
    raw_text: str
    corrections: list[Correction] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.text != self.raw_text

    def as_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "raw_text": self.raw_text,
            "corrections": [c.as_dict() for c in self.corrections],
        }


@dataclass(frozen=True, slots=True)
class CorrectionConfig:
    """Thresholds of both stages; defaults follow the issue, the rest are safety margins.

    - `phonetic_threshold`: Jaro-Winkler needed when Double Metaphone codes agree.
    - `fuzzy_threshold`: Jaro-Winkler needed when no code agrees (also the bar for short names,
      single uncommon English words, single capitalized words and windows made only of
      ordinary words).
    - `common_zipf`: words at or above this wordfreq Zipf value are ordinary English and are
      never replaced on their own.
    - `rare_zipf`: only windows holding a word below it may match on spelling alone (fuzzy).
    - `english_zipf`: a word (or its stem) at least this frequent is real English, however rare:
      on its own it becomes a name only when capitalized mid-sentence, with a code match.
    - `english_name_threshold`: Jaro-Winkler needed (with a code match) to replace a single
      English word, which must also be capitalized like a name mid-sentence ("Clarita" for
      "Clarota"): such a word is as likely a name of its own ("Milli").
    - `listed_zipf`: a single word the English list holds at least this often ("duergars"),
      though below `english_zipf`, is replaced by a name only at `fuzzy_threshold`.
    - `split_threshold`: Jaro-Winkler needed (with a code match) when several English words
      become one name ("key leith" → "Keyleth").
    - `split_phonetic_threshold`: the lowest Jaro-Winkler accepted for a name heard as several
      words, whatever the code length ("elder nacks" → "Eldrinax" scores 0.85).
    - `split_code_length`, `split_pair_zipf`: several English words agreeing with a name in a
      Double Metaphone code at least this long need only `fuzzy_threshold`, not
      `split_threshold`, when their mean Zipf frequency is at most `split_pair_zipf` (under
      independence a pair of everyday words is a likely thing to say; a pair with a rare word
      like "tube rus" is not, and is more likely a name heard as words).
    - `fuzzy_min_length`: spelling-only matches (no code agreement) need words this long.
    - `function_zipf`: a word this frequent ("is", "on", "the") at the edge of a window is its
      own word, never the first or last piece of a name heard as several words.
    - `ambiguity_margin`: two different entities scoring within this of each other → no change.
    - `max_extra_words`: a name may be heard as at most this many extra words.
    - `low_confidence`, `llm_min_words`: stage 2 span selection.
    - Context stage (`context.py`): `unsure_confidence` is the Whisper word probability below
      which a word counts as unsure; `context_threshold` the Jaro-Winkler a window needs with
      neither help (less `unknown_bonus` for words no English list holds), lowered by
      `scene_bonus` for a name of the scene and by `unsure_bonus` for unsure words, raised by
      `near_code_penalty` when the codes are a letter (or B/V, M/N) apart; `edge_threshold` the
      floor for a single ordinary word or a function word at a window edge; `anchor_threshold`
      the closeness of the other words of a multi-word name anchored by one of its rare words,
      and `anchor_sure` the score at which such a match needs neither scene nor uncertainty;
      `context_max_words` the longest window; `tail_threshold` replaces `edge_threshold` for a
      name of the scene whose last sound Whisper wrote as a function word ("kill it" for
      Keyleth: the very code, every other word doubted); `sounded_threshold` the mean
      closeness of a scene's multi-word name heard word by word as other words of the same
      sounds ("box machinist" for "Vox Machina"); `short_threshold` the closeness of a doubted
      word that is no ordinary English to a one-word scene name whose code it has, the name's
      last sound aside ("Kila" for Keyleth); `titled_threshold` replaces `edge_threshold` for
      an ordinary word Whisper capitalized mid-sentence, as it writes names ("Okay, Tricked is
      very happy" for Trinket); `unplayed_code_length` the Double Metaphone code a lone
      doubted word must share with a name for the context stage to write it with no scene
      known ("Tabirias" for Tiberius, TPRS; not "mem" for Maem, MM: `names_out_of_play`).
    """

    phonetic_threshold: float = 0.70
    fuzzy_threshold: float = 0.85
    common_zipf: float = 3.0
    rare_zipf: float = 2.0
    function_zipf: float = 5.5
    split_threshold: float = 0.90
    split_phonetic_threshold: float = 0.80
    split_code_length: int = 4
    unplayed_code_length: int = 4
    split_pair_zipf: float = 4.0
    fuzzy_min_length: int = 6
    english_zipf: float = 1.5
    listed_zipf: float = 1.0
    english_name_threshold: float = 0.90
    short_length: int = 4
    min_code_length: int = 3
    ambiguity_margin: float = 0.03
    max_extra_words: int = 2
    min_length_ratio: float = 0.6
    max_length_ratio: float = 1.6
    low_confidence: float = 0.5
    llm_min_words: int = 3
    unsure_confidence: float = 0.7
    context_threshold: float = 0.92
    unknown_bonus: float = 0.04
    scene_bonus: float = 0.08
    unsure_bonus: float = 0.1
    near_code_penalty: float = 0.04
    edge_threshold: float = 0.9
    anchor_threshold: float = 0.75
    anchor_sure: float = 0.9
    context_max_words: int = 3
    tail_threshold: float = 0.78
    sounded_threshold: float = 0.8
    short_threshold: float = 0.72
    titled_threshold: float = 0.85
