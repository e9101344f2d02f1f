"""Who a speech-to-speech engine hears, and when a turn is over, on a channel of many speakers.

A speech-to-speech engine takes ONE input stream. A Discord voice channel gives one stream
per user, interleaved 20 ms frame by 20 ms frame; passed on as they come, two people talking
at once would reach the model as one garbled voice at double length. So the table speaks to
the NPC one at a time: the first speaker whose voice activity opens takes the *floor*; the
engine hears that speaker's audio (the VAD's pre-roll first, so the onset is not clipped)
until their utterance ends, and the end is the turn: the engine is asked to answer
(`commit`). Everyone else's audio in the meantime is not the NPC's to hear (it is table
talk, or it is lost: the same as a person listening to one speaker). Silence between turns
is not sent either: the engine's input holds only utterances.

Pure: frames in, what to send out; no engine, no clock, tested without either.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from realtime.voice.interfaces import AudioFrame
from realtime.voice.vad import EnergyVad


@dataclass(frozen=True, slots=True)
class FloorStep:
    """What one frame means for the engine: audio to send (in order), then whether the
    utterance holding the floor just ended (send, then commit)."""

    send: tuple[AudioFrame, ...] = ()
    commit: bool = False
    speaker_id: str | None = None  # the floor's holder, when `send` or `commit`


@dataclass
class Floor:
    """Per-speaker VADs and the one speaker the engine hears.

    The holder's first frames are held back until the utterance has `min_speech_ms` of
    voice (the VAD's own bar for an utterance): a click or a cough that opens the VAD and
    closes it again is never sent, so nothing is left in the engine's input to be answered
    as the next turn's start."""

    vad: Callable[[], EnergyVad] = EnergyVad
    holder: str | None = None
    _vads: dict[str, EnergyVad] = field(default_factory=dict)
    _held: list[AudioFrame] = field(default_factory=list)
    _confirmed: bool = False

    def feed(self, frame: AudioFrame) -> FloorStep:
        who = frame.speaker_id
        vad = self._vads.get(who)
        if vad is None:
            vad = self._vads[who] = self.vad()
        ended = vad.feed(frame)
        if self.holder is None and vad.active:
            # the floor is free and they are speaking: theirs, from the utterance's start
            # (pre-roll included; all of it, when they began while someone else held it)
            self.holder, self._confirmed = who, False
            self._held = [AudioFrame(vad.speech_so_far(), frame.sample_rate, who,
                                     frame.speaker_name)]
            return self._confirm(vad)
        if self.holder != who:
            return FloorStep()
        if ended is not None:  # the holder's utterance is over: that is the turn
            send = (*self._held, frame) if not self._confirmed else (frame,)
            self._release()
            return FloorStep(send, True, who)
        if not vad.active:  # closed too short to be speech: nothing was sent, nothing is
            self._release()
            return FloorStep()
        if self._confirmed:
            return FloorStep((frame,), False, who)
        self._held.append(frame)
        return self._confirm(vad)

    def _confirm(self, vad: EnergyVad) -> FloorStep:
        if self._confirmed or vad.voiced_ms < vad.min_speech_ms:
            return FloorStep()
        self._confirmed = True
        send, self._held = tuple(self._held), []
        return FloorStep(send, False, self.holder)

    def _release(self) -> None:
        self.holder, self._held, self._confirmed = None, [], False

    @property
    def open(self) -> bool:
        """A confirmed utterance holds the floor: its audio is sent but not yet committed."""
        return self.holder is not None and self._confirmed
