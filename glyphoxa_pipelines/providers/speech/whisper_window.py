"""Decoding a short utterance with Whisper's encoder run on the audio, not on 30 seconds.

Why: faster-whisper pads every window to Whisper's 30 s (3,000 mel frames) before the
encoder, and for tiny.en on a CPU that encoder pass is most of the work: a 4 s utterance
pays for 30 s of attention. The encoder's positions are sinusoidal, so it runs on fewer
frames as well (whisper.cpp's `audio_ctx` does the same); what breaks is the decoder's sense
of where the audio ends when the speech runs right up to the last frame: with no silence after
it, tiny.en loops on its last words. Padded silence after the speech gives it that end back;
how much is a trade between the decode's cost and its word error rate (tiny.en was trained
on 30 s windows), chosen on the STT corpus's tune half (`LIVE_ENCODER_PAD_S`). Two guards
keep a loop from ever being the answer: the decoder may emit only so many tokens per second
of audio, and a transcript that hits that cap or compresses like a repetition
(faster-whisper's own 2.4 ratio) is refused (`None`) so the caller decodes the standard 30 s
window instead.

The word probabilities come from the same cross-attention alignment faster-whisper uses for
`word_timestamps`, so `Transcript.words` keeps its shape and its meaning.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from glyphoxa_pipelines.providers.speech.transcript import Transcript, join_words

FULL_FRAMES = 3_000  # Whisper's 30 s window in 10 ms mel frames
FRAMES_PER_S = 100
TOKENS_PER_S = 10  # fast speech is ~4 tokens/s; more than this is the decoder looping
MIN_TOKENS = 12
LOOP_COMPRESSION = 2.4  # faster-whisper's compression_ratio_threshold


QUIET_BELOW_PEAK_DB = 35.0  # a 10 ms frame this far under the loudest one is quiet
KEEP_QUIET_S = 0.1  # of the trailing quiet, this much stays (the word's release)


def without_trailing_quiet(audio: np.ndarray, rate: int = 16_000) -> np.ndarray:
    """`audio` with the quiet after its last loud 10 ms frame cut (but `KEEP_QUIET_S`).

    Why: a final reaches the decoder with the quiet the VAD waited for (200-500 ms) at its
    end, and the padding, which is sized by the audio's length, then pays for it twice over;
    the padding is the silence the decoder needs after the speech, so the quiet adds only
    encoder frames. Loud is relative to the utterance's own peak, so a noisy line keeps its
    noise floor out of the measure."""
    frame = rate // 100
    whole = len(audio) // frame
    if whole < 2:
        return audio
    rms = np.sqrt(np.mean(np.square(audio[:whole * frame].reshape(whole, frame),
                                    dtype=np.float64), axis=1))
    loud = np.flatnonzero(rms >= rms.max() * 10 ** (-QUIET_BELOW_PEAK_DB / 20))
    if rms.max() <= 0 or len(loud) == 0:
        return audio
    end = (int(loud[-1]) + 1) * frame + int(KEEP_QUIET_S * rate)
    return audio[:end] if end < len(audio) else audio


def looks_like_a_loop(text: str, tokens: int, cap: int) -> bool:
    """True when a decode hit its token cap or repeats itself like a loop."""
    raw = text.encode("utf-8")
    ratio = len(raw) / max(1, len(zlib.compress(raw))) if raw else 0.0
    return tokens >= cap or ratio > LOOP_COMPRESSION


def decode_short(
    model: Any,
    audio: np.ndarray,
    *,
    pad_s: float,
    hotwords: str | None,
    language: str = "en",
) -> Transcript | None:
    """`audio` (16 kHz mono) decoded greedily with the encoder on it plus `pad_s` of silence.

    `model` is a loaded `faster_whisper.WhisperModel`. `None` when the audio and its padding
    do not fit one window, or when the decode looks like a loop: the caller then falls back
    to the standard window.
    """
    import ctranslate2
    from faster_whisper.audio import pad_or_trim
    from faster_whisper.tokenizer import Tokenizer
    from faster_whisper.transcribe import get_suppressed_tokens

    features = model.feature_extractor(audio)
    frames = int(features.shape[-1])
    window = frames + int(round(pad_s * FRAMES_PER_S))
    if frames == 0 or window > FULL_FRAMES:
        return None
    encoded = model.model.encode(ctranslate2.StorageView.from_array(
        np.ascontiguousarray(pad_or_trim(features, window)[None])))
    tokenizer = Tokenizer(model.hf_tokenizer, model.model.is_multilingual,
                          task="transcribe", language=language)
    prompt = model.get_prompt(tokenizer, [], without_timestamps=True, hotwords=hotwords)
    cap = MIN_TOKENS + int(TOKENS_PER_S * frames / FRAMES_PER_S)
    result = model.model.generate(
        encoded, [prompt], beam_size=1, max_length=min(model.max_length, len(prompt) + cap),
        suppress_blank=True, suppress_tokens=get_suppressed_tokens(tokenizer, [-1]),
    )[0]
    tokens = [t for t in result.sequences_ids[0] if t < tokenizer.eot]
    if looks_like_a_loop(tokenizer.decode(tokens).strip(), len(tokens), cap):
        return None
    if not tokens:
        return Transcript("")
    [aligned] = model.find_alignment(tokenizer, [tokens], encoded, frames)
    return join_words([(w["word"], float(w["start"]), float(w["end"]), float(w["probability"]))
                       for w in aligned])
