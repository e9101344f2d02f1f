"""Where DAVE (Discord's end-to-end encryption for voice) is undone in the packet path.

Discord voice packets carry two layers. The transport layer (RTP encrypted with the voice
gateway's session key) is the receiver's business: `discord-ext-voice-recv` removes it
before a packet reaches `PacketReceiver`. Inside it, since DAVE, the opus frame itself is
encrypted per *sender* with keys from the channel's MLS group. So the hook sits in
`PacketReceiver._decode`: after the SSRC is mapped to a user (DAVE keys are per user id,
not per SSRC: a packet held until the SPEAKING event is decrypted once the mapping comes),
before the opus decoder (which must see every frame in order: a frame that cannot be
decrypted is dropped like a lost packet, and the next one's sequence gap is concealed).

Live set-up (not reachable here, so described, not exercised): the bot's voice connection
keeps a `davey.DaveSession(protocol_version, bot_user_id, channel_id)`, answers the voice
gateway's DAVE opcodes with it (external sender, proposals, commit / welcome), and hands the
session to `DaveSessionDecryptor`, which is passed as `PacketReceiver(..., decryptor=...)`.
Until the session is ready (and during protocol transitions), `set_passthrough_mode(True)`
lets unencrypted frames through. `PassThrough` is for a connection without DAVE (and tests).
"""

from __future__ import annotations

from typing import Any, Protocol


class FrameDecryptor(Protocol):
    """One opus frame from `user_id`, decrypted; None when it cannot be (it is dropped)."""

    def decrypt(self, user_id: str, frame: bytes) -> bytes | None: ...


class PassThrough:
    """No end-to-end layer: the frame is the opus frame."""

    def decrypt(self, user_id: str, frame: bytes) -> bytes | None:
        return frame


class DaveSessionDecryptor:
    """A `davey.DaveSession` (set up by the live voice connection) as a `FrameDecryptor`."""

    def __init__(self, session: Any) -> None:
        import davey

        self.session = session
        self._audio = davey.MediaType.audio
        self.failures = 0
        self.last_error = ""

    def decrypt(self, user_id: str, frame: bytes) -> bytes | None:
        try:
            return bytes(self.session.decrypt(int(user_id), self._audio, frame))
        except ValueError as exc:  # davey's error for a frame it has no key or tag for
            self.failures += 1
            self.last_error = str(exc)
            return None
