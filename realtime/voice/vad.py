"""Voice activity detection: where an utterance starts and where it ends.

An energy detector, not a model: table speech into a push-to-talk or per-user Discord stream
is close-miked, so frame loudness against an adaptive noise floor separates it well, costs
microseconds per frame and needs no weights. (faster-whisper ships Silero's ONNX weights; a
`Vad` over them fits the same `feed` shape if a noisy room needs it.)

The end of an utterance is `end_silence_ms` of quiet after the last loud frame: that hangover
is the floor of the loop's reaction time, and short enough pauses inside a sentence (commas,
breaths) must not split it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from realtime.voice.interfaces import AudioFrame


@dataclass(frozen=True, slots=True)
class Utterance:
    """One speaker's finished stretch of speech (with `pre_roll_ms` before its onset)."""

    samples: np.ndarray
    sample_rate: int
    speaker_id: str
    speaker_name: str
    start_s: float  # offsets into the speaker's stream
    end_s: float
    voiced_ms: float = 0.0  # loud time inside it: equal at two moments = nothing said between

    @property
    def seconds(self) -> float:
        return len(self.samples) / self.sample_rate


def frame_db(samples: np.ndarray) -> float:
    """RMS loudness in dBFS (-100 for digital silence)."""
    if len(samples) == 0:
        return -100.0
    rms = float(np.sqrt(np.mean(np.square(samples, dtype=np.float64))))
    return 20.0 * np.log10(rms) if rms > 1e-5 else -100.0


@dataclass
class EnergyVad:
    """Per-speaker detector: `feed` frames in order, get an `Utterance` when one ends."""

    threshold_db: float = -45.0  # never speech below this, whatever the floor
    margin_db: float = 12.0  # speech is this much louder than the noise floor
    start_ms: int = 60  # loud this long to start (a click or a cough is shorter)
    end_silence_ms: int = 500
    pre_roll_ms: int = 200
    min_speech_ms: int = 200
    noise_floor_db: float = -70.0
    _buffer: list[np.ndarray] = field(default_factory=list, repr=False)
    _pending: list[np.ndarray] = field(default_factory=list, repr=False)
    _loud_ms: float = 0.0
    _quiet_ms: float = 0.0
    _voiced_ms: float = 0.0
    _active: bool = False
    _stream_s: float = 0.0
    _start_s: float = 0.0

    @property
    def active(self) -> bool:
        return self._active

    @property
    def quiet_ms(self) -> float:
        """Quiet since the open utterance's last loud frame (the end is `end_silence_ms`)."""
        return self._quiet_ms if self._active else 0.0

    @property
    def voiced_ms(self) -> float:
        """Loud time in the open utterance so far."""
        return self._voiced_ms if self._active else 0.0

    def speech_so_far(self) -> np.ndarray:
        """The open utterance's audio (empty when none is open): what partials transcribe."""
        if not self._buffer:
            return np.zeros(0, dtype=np.float32)
        return np.concatenate(self._buffer)

    def feed(self, frame: AudioFrame) -> Utterance | None:
        ms = 1000.0 * len(frame.samples) / frame.sample_rate
        db = frame_db(frame.samples)
        loud = db > max(self.threshold_db, self.noise_floor_db + self.margin_db)
        if not loud:
            # the floor follows quiet frames slowly, so a long utterance cannot raise it
            self.noise_floor_db += 0.05 * (db - self.noise_floor_db)
        self._stream_s += ms / 1000
        if not self._active:
            return self._idle(frame, ms, loud)
        self._buffer.append(frame.samples)
        if loud:
            self._quiet_ms = 0.0
            self._voiced_ms += ms
            return None
        self._quiet_ms += ms
        if self._quiet_ms < self.end_silence_ms:
            return None
        return self._close(frame)

    def _idle(self, frame: AudioFrame, ms: float, loud: bool) -> None:
        self._pending.append(frame.samples)
        keep = max(1, int(self.pre_roll_ms / ms) + int(self.start_ms / ms) + 1)
        del self._pending[:-keep]
        self._loud_ms = self._loud_ms + ms if loud else 0.0
        if self._loud_ms >= self.start_ms:
            self._active = True
            self._buffer = list(self._pending)
            self._pending = []
            self._voiced_ms = self._loud_ms
            self._quiet_ms = 0.0
            self._start_s = max(0.0, self._stream_s - len(self._buffer) * ms / 1000)
        return None

    def _close(self, frame: AudioFrame) -> Utterance | None:
        samples = self.speech_so_far()
        voiced = self._voiced_ms
        self._active = False
        self._buffer = []
        self._loud_ms = 0.0
        if voiced < self.min_speech_ms:
            return None
        return Utterance(samples, frame.sample_rate, frame.speaker_id, frame.speaker_name,
                         self._start_s, self._stream_s, voiced)
