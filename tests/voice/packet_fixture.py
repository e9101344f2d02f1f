"""Make a recorded voice-receive file offline: piper speaks two players' lines, each encoded to
20 ms opus packets (discord.py's encoder, as Discord clients send them) under its own SSRC,
with what a real connection does to them: the second player's SPEAKING event arrives after
their first packets, one packet is lost, one arrives late, and nothing is sent while a
player is silent. Deterministic (piper without noise), so tests make it in a temporary folder
and no audio is committed.

    python -m tests.voice.packet_fixture OUT.jsonl
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from realtime.voice.audio import DISCORD_RATE
from realtime.voice.packet_recording import Event, SpeakingEvent, write_recording
from realtime.voice.voice_receive import (
    FRAME_S,
    STEREO_FRAME_BYTES,
    OpusPacket,
    Speaker,
    ensure_opus,
)


@dataclass(frozen=True)
class Line:
    ssrc: int
    user: Speaker
    text: str
    start_s: float


LINES = (
    Line(1111, Speaker("111", "Ana"), "Thaldrin, tell me what you know about the Sunblade.", 0.3),
    Line(2222, Speaker("222", "Bo"), "Thaldrin, do you still drink at the Gilded Tankard?", 6.0),
)
SPEAKING_LATE_PACKETS = 3  # Bo's SPEAKING event comes after this many of his packets
LOST = (1111, 40)  # (ssrc, packet index) never delivered
LATE = (2222, 60)  # this packet arrives after the one behind it


def opus_packets(pcm: bytes) -> list[bytes]:
    import discord.opus

    ensure_opus()
    encoder = discord.opus.Encoder()
    frames = [pcm[i:i + STEREO_FRAME_BYTES] for i in range(0, len(pcm), STEREO_FRAME_BYTES)]
    return [encoder.encode(f.ljust(STEREO_FRAME_BYTES, b"\0"), 960) for f in frames]


def events(tts: Any, lines: tuple[Line, ...] = LINES) -> list[Event]:
    from realtime.voice.audio import discord_pcm

    out: list[Event] = []
    for line in lines:
        audio = tts.synthesize(line.text)
        packets = opus_packets(discord_pcm(audio))
        speaking_at = line.start_s + (SPEAKING_LATE_PACKETS * FRAME_S
                                      if line.ssrc == LATE[0] else -0.05)
        out.append((speaking_at, SpeakingEvent(line.ssrc, line.user)))
        for i, payload in enumerate(packets):
            if (line.ssrc, i) == LOST:
                continue
            at = line.start_s + i * FRAME_S
            if (line.ssrc, i) == LATE:
                at += 1.5 * FRAME_S  # after packet i + 1
            out.append((at, OpusPacket(line.ssrc, (1000 + i) % 65_536, payload)))
    out.sort(key=lambda e: (e[0], isinstance(e[1], OpusPacket)))
    return out


def make(path: Path, tts: Any) -> int:
    return write_recording(path, events(tts))


def main() -> None:
    from glyphoxa_pipelines.providers.speech import TextToSpeech

    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m tests.voice.packet_fixture OUT.jsonl")
    count = make(Path(sys.argv[1]), TextToSpeech())
    seconds = max(line.start_s for line in LINES) + 5
    print(f"{count} events, ~{seconds:.0f} s at {DISCORD_RATE} Hz, {np.dtype('<i2')} PCM")


if __name__ == "__main__":
    main()
