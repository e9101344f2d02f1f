"""Recorded voice receive: what a Discord voice connection delivered, as a file, and its replay.

A recording is JSON lines in arrival order, each with `t` (seconds from the start):
`{"t", "speaking": {"ssrc", "user_id", "name"}}` for a SPEAKING event and
`{"t", "ssrc", "seq", "opus"}` (payload base64) for a packet. Replaying one drives a
`PacketReceiver` exactly as the live receiver would, on a thread of its own as the live one
runs, with `tick` between packets, so the loop sees the same per-user frames and silences;
`realtime=False` replays as fast as the receiver takes it, for tests.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from realtime.voice.voice_receive import FRAME_S, OpusPacket, PacketReceiver, Speaker


@dataclass(frozen=True, slots=True)
class SpeakingEvent:
    ssrc: int
    user: Speaker


Event = tuple[float, SpeakingEvent | OpusPacket]


def write_recording(path: Path, events: Iterable[Event]) -> int:
    """Write `events` (already in arrival order); the number written."""
    count = 0
    with path.open("w", encoding="utf-8") as out:
        for t, event in events:
            if isinstance(event, SpeakingEvent):
                row: dict[str, object] = {"t": round(t, 4), "speaking": {
                    "ssrc": event.ssrc, "user_id": event.user.id,
                    "name": event.user.display_name}}
            else:
                row = {"t": round(t, 4), "ssrc": event.ssrc, "seq": event.sequence,
                       "opus": base64.b64encode(event.payload).decode("ascii")}
            out.write(json.dumps(row) + "\n")
            count += 1
    return count


def read_recording(path: Path) -> Iterator[Event]:
    """The events of a recording; a malformed line is an error naming its line number."""
    with path.open(encoding="utf-8") as rows:
        for number, line in enumerate(rows, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                t = float(row["t"])
                if "speaking" in row:
                    s = row["speaking"]
                    yield t, SpeakingEvent(int(s["ssrc"]), Speaker(str(s["user_id"]),
                                                                   str(s.get("name") or "")))
                else:
                    yield t, OpusPacket(int(row["ssrc"]), int(row["seq"]),
                                        base64.b64decode(row["opus"], validate=True))
            except (KeyError, TypeError, ValueError) as exc:
                raise ValueError(f"{path}:{number}: not a voice packet recording line "
                                 f"({exc})") from exc


def replay(path: Path, receiver: PacketReceiver, *, realtime: bool = False,
           tail_s: float = 1.0) -> None:
    """Drive `receiver` with the recording (blocking: run it on a thread), ticking the
    silence fill every 20 ms of recorded time and for `tail_s` after the last packet."""
    started = time.monotonic()
    clock = 0.0
    for t, event in read_recording(path):
        while clock + FRAME_S <= t:
            clock += FRAME_S
            receiver.tick(clock)
        if realtime:
            time.sleep(max(0.0, t - (time.monotonic() - started)))
        if isinstance(event, SpeakingEvent):
            receiver.speaking(event.ssrc, event.user)
        else:
            receiver.packet(event, t)
    end = clock + tail_s
    while clock < end:
        clock += FRAME_S
        receiver.tick(clock)
