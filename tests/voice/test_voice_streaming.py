"""Streaming speech to text without a model: the agreement rule on plain words, and the
`Listener` driven frame by frame with a scripted recogniser that hears only whole words inside
the window it is given and guesses wrong at a window's ragged end, as Whisper does."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from glyphoxa_pipelines.providers.speech import Transcript, TranscriptWord
from glyphoxa_pipelines.providers.speech.whisper_window import looks_like_a_loop
from realtime.voice.interfaces import AudioFrame
from realtime.voice.listening import Listener, ListenSettings
from realtime.voice.streaming_stt import StreamingTranscript, agreed_prefix, clean_boundary
from realtime.voice.vad import EnergyVad


def w(text: str, start: float, end: float, p: float = 0.9) -> TranscriptWord:
    return TranscriptWord(text, start, end, p)


def test_agreed_prefix_stops_at_a_change_and_at_the_unstable_end() -> None:
    before = [w("Tell", 0.0, 0.3), w("me", 0.3, 0.5), w("about", 0.5, 0.9), w("sun", 0.9, 1.1)]
    now = [w("tell", 0.0, 0.3), w("me,", 0.3, 0.5), w("about", 0.5, 0.9), w("Sunblade", 0.9, 1.4)]
    assert agreed_prefix(before, now, stable_until_s=2.0) == 3  # case and commas do not count
    assert agreed_prefix(before, now, stable_until_s=0.6) == 2  # "about" ends too late
    assert agreed_prefix([], now, stable_until_s=2.0) == 0


def test_stream_commits_agreed_words_and_cuts_between_words() -> None:
    stream = StreamingTranscript(16_000, guard_s=0.4)
    audio = np.zeros(16_000 * 3, dtype=np.float32)
    first = Transcript("Tell me abut", (w("Tell", 0.1, 0.4), w("me", 0.5, 0.7),
                                        w("abut", 0.8, 1.0)))
    stream.update(first, 0.0, 1.0)
    assert stream.committed == [] and stream.so_far() == "Tell me abut"
    second = Transcript("Tell me about the", (w("Tell", 0.1, 0.4), w("me", 0.5, 0.7),
                                              w("about", 0.9, 1.2), w("the", 1.5, 1.9)))
    stream.update(second, 0.0, 2.0)
    assert [x.text for x in stream.committed] == ["Tell", "me"]
    assert stream.cut_s == 0.8  # halfway between "me" (0.7) and "about" (0.9)
    window, offset = stream.window(audio)
    assert offset == 0.8 and len(window) == len(audio) - 12_800
    # the tail is heard on the window's clock and put back on the utterance's
    final = stream.final(Transcript("about the Sunblade", (
        w("about", 0.1, 0.4, 0.4), w("the", 0.7, 0.9), w("Sunblade", 1.0, 1.6))), offset)
    assert final.text == "Tell me about the Sunblade"
    assert final.words[2].start_s == 0.9 and final.word_confidences[2] == 0.4


def test_cuts_only_where_words_are_apart() -> None:
    run_on = [w("Tell", 0.1, 0.4), w("me", 0.45, 0.7), w("about", 0.75, 1.2)]
    assert clean_boundary(run_on, 3, 2.0) == 3  # before the window's quiet end
    assert clean_boundary(run_on, 2, 2.0) == 0  # "me" runs into "about": no clean cut
    said = [w("Well,", 0.1, 0.4), w("tell", 0.45, 0.7), w("me", 0.75, 1.2)]
    assert clean_boundary(said, 2, 2.0) == 1  # after the comma


def test_a_decode_that_loops_is_refused() -> None:
    assert looks_like_a_loop("and then " * 30, 40, 60)
    assert looks_like_a_loop("Tell me about it", 60, 60)  # hit the token cap
    assert not looks_like_a_loop("Tell me about the Sunblade, Thaldrin.", 9, 60)


RATE = 1_000  # a toy rate: each sample's value says where in the stream it lies
WORDS = ["Thaldrin", "tell", "me", "about", "the", "Sunblade"]
LEAD_S, WORD_S = 0.3, 0.5


def speech_stream(tail_silence_s: float = 1.0) -> np.ndarray:
    n_speech = int(len(WORDS) * WORD_S * RATE)
    lead = np.zeros(int(LEAD_S * RATE), dtype=np.float32)
    index = np.arange(len(lead), len(lead) + n_speech)
    loud = (0.2 + index * 1e-5).astype(np.float32)
    return np.concatenate([lead, loud, np.zeros(int(tail_silence_s * RATE), np.float32)])


class ScriptedRecognizer:
    """Hears the words lying wholly inside the window; the last one, when it ends close to
    the window's end, comes out wrong (a half-heard word)."""

    def __init__(self) -> None:
        self.windows: list[tuple[float, float]] = []
        self.contexts: list[str] = []

    async def __call__(self, samples: np.ndarray, rate: int, context: str,
                       partial: bool = False) -> Transcript:
        self.contexts.append(context)
        loud = np.flatnonzero(samples)
        if len(loud) == 0:
            return Transcript("")
        first = int(loud[0])
        start = (round((float(samples[first]) - 0.2) / 1e-5) - first) / rate
        end = start + len(samples) / rate
        self.windows.append((round(start, 3), round(end, 3)))
        heard = []
        for k, text in enumerate(WORDS):
            ws, we = LEAD_S + k * WORD_S + 0.05, LEAD_S + k * WORD_S + 0.3  # pauses between
            if ws >= start - 0.01 and we <= end:
                guess = "uh" if we > end - 0.15 else text
                heard.append(TranscriptWord(guess, round(ws - start, 3), round(we - start, 3),
                                            0.9))
        return Transcript(" ".join(x.text for x in heard), tuple(heard))


class StreamClock:
    """The time a paced source would show: the audio fed so far. The frames go in faster than
    real time, so a wall clock would make a pass that a busy machine slowed look as long as
    the whole utterance, and the listener would rightly skip the passes after it."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def listen(settings: ListenSettings) -> tuple[list, list[str], ScriptedRecognizer]:
    recognizer = ScriptedRecognizer()
    partials: list[str] = []

    async def on_partial(text: str) -> None:
        partials.append(text)

    clock = StreamClock()
    listener = Listener(EnergyVad(), recognizer, on_partial, settings, clock=clock)
    audio, step = speech_stream(), RATE // 50
    heard = []
    for i in range(0, len(audio), step):
        clock.now += step / RATE
        utterance = listener.feed(AudioFrame(audio[i:i + step], RATE, "ana"))
        await asyncio.sleep(0)  # the passes run between frames, as with a paced source
        if utterance is not None:
            heard.append(await listener.final(utterance))
    return heard, partials, recognizer


async def test_streaming_leaves_only_the_tail_and_uses_the_early_final() -> None:
    [heard], partials, recognizer = await listen(ListenSettings(partial_every_s=0.5, partial_growth=1.0))
    assert heard.transcript.text == " ".join(WORDS)
    assert heard.early  # only silence followed the early decode: it was the final
    assert heard.partials >= 4 and partials[-1].startswith("Thaldrin tell me")
    # passes after the first began past the utterance's start: committed audio is not re-heard
    assert max(start for start, _ in recognizer.windows) > 1.5
    assert heard.tail_s < 1.5  # of a 3 s utterance
    # a window after a cut is decoded with the words committed before it as its context
    assert recognizer.contexts[-1].startswith("Thaldrin tell me")


async def test_the_early_final_starts_pre_fetch_before_the_vad_closes() -> None:
    recognizer = ScriptedRecognizer()
    partials: list[tuple[str, bool]] = []
    clock = StreamClock()
    listener = Listener(EnergyVad(), recognizer, lambda text: _note(partials, text, listener),
                        ListenSettings(partial_every_s=0.5), clock=clock)
    audio, step = speech_stream(), RATE // 50
    for i in range(0, len(audio), step):
        clock.now += step / RATE
        if listener.feed(AudioFrame(audio[i:i + step], RATE, "ana")) is not None:
            break
        await asyncio.sleep(0)
    # the whole final text went to pre-fetch while the utterance was still open
    assert (" ".join(WORDS), True) in partials


async def _note(partials: list[tuple[str, bool]], text: str, listener: Listener) -> None:
    partials.append((text, listener.vad.active))


async def test_whole_mode_transcribes_the_utterance_once_it_ends() -> None:
    [heard], _partials, recognizer = await listen(
        ListenSettings(partial_every_s=0.5, streaming=False))
    assert heard.transcript.text == " ".join(WORDS)
    assert not heard.early and heard.tail_s > 3.0
    assert all(start <= LEAD_S for start, _ in recognizer.windows)
    assert set(recognizer.contexts) == {""}


def test_a_recogniser_without_word_timings_still_streams_text() -> None:
    stream = StreamingTranscript(16_000)
    stream.update(Transcript("where is the"), 0.0, 1.0)
    stream.update(Transcript("where is the Sunblade"), 0.0, 2.0)
    assert stream.committed == [] and stream.so_far() == "where is the Sunblade"
    assert stream.final(Transcript("where is the Sunblade kept"), 0.0).text == \
        "where is the Sunblade kept"


async def test_partial_passes_grow_apart() -> None:
    """Each pass waits twice as long as the one before it: on a 3 s utterance passes every
    0.5 s begin at 0.5, 1.0, 1.5, ... s of speech; growing, at 0.5, 1.5 and 3.5 s."""
    _heard, _partials, fixed = await listen(ListenSettings(partial_every_s=0.5,
                                                           partial_growth=1.0))
    _heard, _partials, growing = await listen(ListenSettings(partial_every_s=0.5))
    fixed_passes = [end for _, end in fixed.windows[:-1]]  # the last window is the final's
    growing_passes = [end for _, end in growing.windows[:-1]]
    assert len(growing_passes) < len(fixed_passes)
    gaps = [b - a for a, b in zip(growing_passes, growing_passes[1:], strict=False)]
    assert gaps and all(g > 0.9 for g in gaps)


def test_a_window_from_before_the_cut_does_not_commit_words_twice() -> None:
    stream = StreamingTranscript(16_000, guard_s=0.4)
    said = (w("Tell", 0.1, 0.4), w("me", 0.5, 0.7), w("about", 0.9, 1.2), w("the", 1.5, 1.9))
    stream.update(Transcript("Tell me about", said[:3]), 0.0, 1.3)
    stream.update(Transcript("Tell me about the", said), 0.0, 2.4)
    assert [x.text for x in stream.committed] == ["Tell", "me", "about"]
    # a pass scheduled before that cut moved hears from 0 s again: nothing is committed twice
    stream.update(Transcript("Tell me about the", said), 0.0, 2.4)
    assert [x.text for x in stream.committed] == ["Tell", "me", "about", "the"]


async def test_an_early_final_dropped_at_a_pause_is_used_as_a_pass() -> None:
    """A 220 ms pause after "me" starts an early final; the speaker goes on, so it is not
    the final, but what it heard is agreed with the pass before it: "Thaldrin" is committed
    and the final decodes only the audio after it."""
    recognizer = ScriptedRecognizer()
    # one pass at 1 s, the next not before 5 s: only the dropped early final can agree with it
    clock = StreamClock()
    listener = Listener(EnergyVad(), recognizer, _ignore,
                        ListenSettings(partial_every_s=1.0, partial_growth=4.0,
                                       early_final_ms=200.0, early_as_pass=True), clock=clock)
    audio = speech_stream()
    audio[int(1.62 * RATE):int(1.84 * RATE)] = 0.0
    step = RATE // 50
    heard = []
    for i in range(0, len(audio), step):
        clock.now += step / RATE
        utterance = listener.feed(AudioFrame(audio[i:i + step], RATE, "ana"))
        await asyncio.sleep(0)
        if utterance is not None:
            heard.append(await listener.final(utterance))
    [final] = heard
    assert final.transcript.text == " ".join(WORDS)
    assert recognizer.windows[-1][0] > 0.5  # the final's window starts after "Thaldrin"
    assert final.tail_s < 3.0


async def _ignore(text: str) -> None:
    return None


def test_bad_pass_settings_are_refused_by_name() -> None:
    from realtime.voice.loop import VoiceConfig

    with pytest.raises(ValueError, match="partial_growth"):
        ListenSettings(partial_growth=0.5)
    with pytest.raises(ValueError, match="partial_growth"):
        ListenSettings(partial_growth=float("nan"))
    with pytest.raises(ValueError, match="partial_hotword_tokens"):
        VoiceConfig("s", "npc", partial_hotword_tokens=-1)
