"""Discord voice receive as packets: opus frames per SSRC, decoded per speaker, into the loop.

A voice receiver (`discord-ext-voice-recv`, or ours once DAVE is decrypted) hands over RTP
packets: an SSRC, a sequence number, an opus payload. Who an SSRC is comes separately, in
the gateway's SPEAKING event, and may arrive after that speaker's first packets. This module
turns that into what `VoiceReceiveSource.write(user, pcm)` takes:

- one opus decoder per SSRC (opus decoding carries state from frame to frame);
- packets from an SSRC nobody is mapped to yet are held (up to `hold_packets`) and decoded
  when the mapping arrives, so the first word is not lost;
- a gap in the sequence numbers is a lost packet: the decoder conceals it (opus PLC), so the
  speaker's timeline keeps its length; a packet older than the last one decoded came too
  late and is dropped (no jitter buffer: a 20 ms reorder is rarer than its cost in delay);
- Discord sends nothing while a user is silent, but the VAD ends an utterance on silence, so
  `tick(now)` writes silence for each speaker whose packets stopped, up to `fill_s`.

Decoding needs libopus: discord.py's `opus` module loads the system's, and where there is
none, the copy PyAV's wheel ships (faster-whisper depends on PyAV), see `ensure_opus`.
"""

from __future__ import annotations

import ctypes.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from realtime.voice.dave import FrameDecryptor, PassThrough

FRAME_S = 0.02
STEREO_FRAME_BYTES = 960 * 2 * 2  # 20 ms of 48 kHz stereo 16-bit PCM


class OpusMissing(RuntimeError):
    """No libopus could be loaded: voice receive cannot decode."""


def ensure_opus() -> None:
    """Load libopus into discord.py: the system's, else the one inside PyAV's wheel."""
    import discord.opus

    if discord.opus.is_loaded():
        return
    candidates: list[str] = []
    if found := ctypes.util.find_library("opus"):
        candidates.append(found)
    try:
        import av

        libs = Path(av.__file__).resolve().parent.parent / "av.libs"
        candidates += sorted(str(p) for p in libs.glob("libopus*.so*"))
    except ImportError:
        pass
    for candidate in candidates:
        try:
            discord.opus.load_opus(candidate)
            return
        except OSError:
            continue
    raise OpusMissing("voice receive needs libopus (the system's, or PyAV's wheel)")


class PcmWriter(Protocol):
    """`VoiceReceiveSource.write`'s shape: 48 kHz stereo 16-bit PCM for one user."""

    def write(self, user: Any, data: Any) -> None: ...


@dataclass(frozen=True, slots=True)
class OpusPacket:
    ssrc: int
    sequence: int  # RTP's 16-bit counter
    payload: bytes


@dataclass(frozen=True, slots=True)
class Speaker:
    """Who an SSRC is, as the SPEAKING event says (the shape `VoiceReceiveSource` reads)."""

    id: str
    display_name: str


@dataclass
class ReceiveStats:
    decoded: int = 0
    concealed: int = 0  # lost packets the decoder filled in
    late: int = 0  # older than the last decoded packet: dropped
    held: int = 0  # arrived before their SSRC was mapped, decoded later
    unmapped_dropped: int = 0
    silence_frames: int = 0
    undecryptable: int = 0  # the end-to-end layer (DAVE) refused: dropped like a lost one


@dataclass
class _Stream:
    decoder: Any
    last_sequence: int | None = None
    last_at_s: float | None = None  # arrival of the last packet, or of the last fill
    filled_s: float = 0.0
    held: list[OpusPacket] = field(default_factory=list)


MAX_CONCEALED = 5  # a longer gap is the speaker's silence, not loss
FILL_AFTER_S = 3 * FRAME_S  # packets this late are silence (a jittered one is not)


class PacketReceiver:
    """Packets in (any thread, one at a time), per-user PCM out to `writer`."""

    def __init__(self, writer: PcmWriter, *, hold_packets: int = 50, fill_s: float = 1.0,
                 decryptor: FrameDecryptor | None = None) -> None:
        ensure_opus()
        self.writer = writer
        self.decryptor = decryptor or PassThrough()  # DAVE's place: `dave.py`
        self.hold_packets = hold_packets
        self.fill_s = fill_s
        self.users: dict[int, Speaker] = {}
        self.stats = ReceiveStats()
        self._streams: dict[int, _Stream] = {}

    def speaking(self, ssrc: int, user: Speaker) -> None:
        """The SPEAKING event: `ssrc` is `user`; packets held for it are decoded now."""
        self.users[ssrc] = user
        stream = self._stream(ssrc)
        held, stream.held = stream.held, []
        for packet in held:
            self.stats.held += 1
            self._decode(stream, user, packet)

    def packet(self, packet: OpusPacket, at_s: float) -> None:
        """One packet arrived at `at_s` (seconds on any monotonic clock)."""
        stream = self._stream(packet.ssrc)
        user = self.users.get(packet.ssrc)
        if user is None:
            if len(stream.held) < self.hold_packets:
                stream.held.append(packet)
            else:
                self.stats.unmapped_dropped += 1
            return
        if self._decode(stream, user, packet):
            stream.last_at_s, stream.filled_s = at_s, 0.0

    def tick(self, now_s: float) -> None:
        """Silence for each speaker whose packets stopped, 20 ms frames up to `now_s`."""
        silence = bytes(STEREO_FRAME_BYTES)
        for ssrc, stream in self._streams.items():
            user = self.users.get(ssrc)
            if user is None or stream.last_at_s is None:
                continue
            while now_s - stream.last_at_s >= FILL_AFTER_S and stream.filled_s < self.fill_s:
                stream.last_at_s += FRAME_S
                stream.filled_s += FRAME_S
                self.stats.silence_frames += 1
                self.writer.write(user, silence)

    def _stream(self, ssrc: int) -> _Stream:
        if ssrc not in self._streams:
            import discord.opus

            self._streams[ssrc] = _Stream(discord.opus.Decoder())
        return self._streams[ssrc]

    def _decode(self, stream: _Stream, user: Speaker, packet: OpusPacket) -> bool:
        step = None
        if stream.last_sequence is not None:
            step = (packet.sequence - stream.last_sequence) % 65_536
            if step == 0 or step > 32_768:  # a duplicate, or behind the last one
                self.stats.late += 1
                return False
        # the end-to-end layer, per user: after the mapping, before the decoder; a frame it
        # refuses is a lost one (the next packet's gap conceals it)
        payload = self.decryptor.decrypt(user.id, packet.payload)
        if payload is None:
            self.stats.undecryptable += 1
            return False
        if step is not None and step - 1 <= MAX_CONCEALED:  # fill's frames are not lost
            for _ in range(step - 1 - round(stream.filled_s / FRAME_S)):
                self.stats.concealed += 1
                self.writer.write(user, stream.decoder.decode(None))
        stream.last_sequence = packet.sequence
        self.stats.decoded += 1
        self.writer.write(user, stream.decoder.decode(payload))
        return True
