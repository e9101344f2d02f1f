"""Transcribing an utterance while it is spoken, so that its end leaves only a tail to decode.

Whisper is not a streaming model, so streaming is done over windows (LocalAgreement-2, as in
Macháček et al.'s whisper_streaming): every pass transcribes the audio not yet committed;
the words at the start of that pass that the previous pass also heard (same words, in order)
are committed, and the next pass begins after them. A word only counts as agreed once it
ends a guard interval before the window's end: the last syllables of a window are the ones
Whisper revises. At the end of the utterance only the uncommitted tail is decoded, and the
transcript is the committed words plus that tail.

The cut falls in the gap between the last committed word and the next one, so neither pass
hears half a word, and only where a pause or punctuation says the words are apart
(`clean_boundary`). Times are seconds from the utterance's first sample throughout.

Plain data and arithmetic: the loop runs the passes; this module only decides what a pass
means, so it is tested without a model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from glyphoxa_pipelines.providers.speech import Transcript, TranscriptWord

GUARD_S = 0.4  # a word ending closer than this to the window's end is not yet agreed on
PAUSE_S = 0.2  # a gap this long between two words is a safe place to cut
_NOT_WORD = re.compile(r"[^\w']+")


def normalized(word: str) -> str:
    """The word as two passes are compared: case and punctuation do not count."""
    return _NOT_WORD.sub("", word.lower())


def agreed_prefix(
    previous: Sequence[TranscriptWord], current: Sequence[TranscriptWord], *, stable_until_s: float,
) -> int:
    """How many leading words `current` shares with `previous`, in order, stopping at the
    first word of `current` that ends after `stable_until_s`."""
    count = 0
    for before, now in zip(previous, current, strict=False):
        if now.end_s > stable_until_s or normalized(before.text) != normalized(now.text):
            break
        count += 1
    return count


def clean_boundary(words: Sequence[TranscriptWord], agreed: int, window_end_s: float) -> int:
    """The longest agreed prefix that ends at a clean cut: after punctuation, or before a
    pause of `PAUSE_S`. Whisper's word times are off by a tenth of a second or two, so a cut
    between two words spoken together can clip the next one, which the tail then mishears;
    the agreed words after the last clean cut wait for the next pass."""
    for k in range(agreed, 0, -1):
        following = words[k].start_s if k < len(words) else window_end_s
        if words[k - 1].text[-1:] in ".,;:?!" or following - words[k - 1].end_s >= PAUSE_S:
            return k
    return 0


def shifted(words: Sequence[TranscriptWord], offset_s: float) -> list[TranscriptWord]:
    """Words of a window's transcript with times moved to the utterance's clock."""
    return [replace(w, start_s=round(w.start_s + offset_s, 3), end_s=round(w.end_s + offset_s, 3))
            for w in words]


@dataclass
class StreamingTranscript:
    """One utterance's committed words and where its uncommitted audio begins."""

    sample_rate: int
    guard_s: float = GUARD_S
    committed: list[TranscriptWord] = field(default_factory=list)
    cut_s: float = 0.0
    passes: int = 0
    _pending: list[TranscriptWord] = field(default_factory=list)
    _unaligned: str = ""  # the last pass's text when it came without word timings

    def window(self, audio: np.ndarray) -> tuple[np.ndarray, float]:
        """The audio a pass transcribes now (from the cut on) and its offset in seconds."""
        start = min(len(audio), int(round(self.cut_s * self.sample_rate)))
        return audio[start:], start / self.sample_rate

    def update(self, heard: Transcript, offset_s: float, window_end_s: float) -> None:
        """Fold in one pass over the window that began at `offset_s` and ended at
        `window_end_s`: commit what it agrees on with the pass before, move the cut."""
        self.passes += 1
        self._unaligned = heard.text if heard.text.strip() and not heard.words else ""
        # a window that began before the cut (scheduled before a pass moved it) re-hears
        # committed words: only what ends after the cut can be agreed on or be pending
        words = [w for w in shifted(heard.words, offset_s) if w.end_s > self.cut_s]
        agreed = clean_boundary(words, agreed_prefix(
            self._pending, words, stable_until_s=window_end_s - self.guard_s), window_end_s)
        if agreed:
            self.committed.extend(words[:agreed])
            last = words[agreed - 1].end_s
            following = words[agreed].start_s if agreed < len(words) else window_end_s
            self.cut_s = max(self.cut_s, (last + max(last, following)) / 2)
        self._pending = words[agreed:]

    def committed_text(self) -> str:
        """The committed words: the previous text for the next window's decode."""
        return " ".join(w.text for w in self.committed)

    def so_far(self) -> str:
        """Committed words and the latest pass's uncommitted ones: what a partial says."""
        return " ".join([*(w.text for w in (*self.committed, *self._pending)),
                         *([self._unaligned] if self._unaligned else [])])

    def final(self, tail: Transcript, offset_s: float) -> Transcript:
        """The utterance's transcript: the committed words, then the tail's. A recogniser
        without word timings (a remote endpoint) commits nothing, so its tail is the whole
        utterance and is returned as it came."""
        if not self.committed:
            return tail
        words = (*self.committed, *shifted(tail.words, offset_s))
        return Transcript(" ".join(w.text for w in words), tuple(words))
