from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from glyphoxa_pipelines.campaign.transcript_import import (
    TranscriptFormatError,
    detect_format,
    import_transcript,
    parse_transcript,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def test_jsonl_good_file() -> None:
    result = import_transcript(FIXTURES / "session.jsonl")
    assert result.format == "jsonl"
    assert [e.speaker_name for e in result.entries] == ["Dana", "Rook", "Dana", "Eldrinax"]
    assert [e.speaker_role for e in result.entries] == ["dm", "player", "dm", "npc"]
    assert [e.idempotency_key for e in result.entries] == [
        "import:1", "import:2", "import:4", "live:42"
    ]
    first, second = result.entries[0], result.entries[1]
    assert first.spoken_at == datetime(2026, 3, 1, 19, 0, tzinfo=UTC)
    assert first.duration_s == 3.5
    assert second.duration_s > 0  # filled in from the speaking rate
    assert result.entries[3].npc_id == "eldrinax"
    assert result.speakers == ["Dana", "Rook", "Eldrinax"]


@pytest.mark.parametrize(
    ("name", "line", "problem"),
    [("bad_missing_text.jsonl", 3, "'text'"), ("bad_json.jsonl", 2, "invalid JSON")],
)
def test_jsonl_bad_files_name_the_line(name: str, line: int, problem: str) -> None:
    with pytest.raises(TranscriptFormatError) as info:
        import_transcript(FIXTURES / name)
    assert info.value.line == line
    assert f"{name}:{line}:" in str(info.value)
    assert problem in str(info.value)


def test_plain_text_with_timestamps_and_continuations() -> None:
    start = datetime(2026, 3, 1, 19, 0, tzinfo=UTC)
    result = import_transcript(FIXTURES / "session.txt", start_at=start)
    assert result.format == "text"
    entries = result.entries
    assert [e.speaker_name for e in entries] == ["DM", "Rook", "DM", "Mira"]
    assert entries[0].speaker_role == "dm" and entries[1].speaker_role == "player"
    assert entries[1].text == "I knock on the gate, loudly, three times."
    assert (entries[2].spoken_at - start).total_seconds() == 15
    assert entries[3].spoken_at > entries[2].spoken_at  # synthesized after the last turn
    assert entries[0].idempotency_key == "import:2"


def test_plain_text_bad_file() -> None:
    with pytest.raises(TranscriptFormatError, match=r"bad\.txt:1: expected 'Speaker: text'"):
        import_transcript(FIXTURES / "bad.txt")


def test_srt_whisper_cues() -> None:
    start = datetime(2026, 3, 1, 19, 0, tzinfo=UTC)
    result = import_transcript(FIXTURES / "whisper.srt", start_at=start)
    assert result.format == "srt"
    assert [(e.speaker_name, e.text) for e in result.entries] == [
        ("DM", "You arrive at the gates of Thornwall."),
        ("Rook", "I knock on the gate."),
        ("Rook", "It creaks open."),  # no label: the previous speaker continues
    ]
    assert (result.entries[1].spoken_at - start).total_seconds() == 5.0
    assert result.entries[1].duration_s == 2.5


def test_srt_bad_timing_names_the_line() -> None:
    with pytest.raises(TranscriptFormatError) as info:
        import_transcript(FIXTURES / "bad_timing.srt")
    assert info.value.line == 6


def test_vtt_craig_voice_tags() -> None:
    result = import_transcript(FIXTURES / "craig.vtt")
    assert result.format == "vtt"
    assert [(e.speaker_name, e.text) for e in result.entries] == [
        ("Dana", "You arrive at the gates of Thornwall."),
        ("Rook", "I knock on the gate."),
        ("Mira", "Careful!"),
        ("Dana", "The gate opens."),
    ]
    keys = [e.idempotency_key for e in result.entries]
    assert len(set(keys)) == len(keys)
    assert result.entries[1].spoken_at < result.entries[2].spoken_at  # cue split in two


def test_vtt_speaker_prefix_cues_and_bad_header() -> None:
    result = import_transcript(FIXTURES / "speakers.vtt", dm_speakers={"Dana"})
    assert [e.speaker_role for e in result.entries] == ["dm", "player"]
    with pytest.raises(TranscriptFormatError, match="WEBVTT"):
        import_transcript(FIXTURES / "bad_header.vtt")


def test_crd3_small_file_gets_synthetic_times() -> None:
    result = import_transcript(FIXTURES / "crd3_small.json")
    assert result.format == "crd3"
    entries = result.entries
    assert entries[0].text == "You arrive at the gates of Thornwall."
    assert entries[0].speaker_role == "dm" and entries[1].speaker_role == "player"
    assert entries[2].speaker_name == "LAURA, SAM"
    times = [e.spoken_at for e in entries]
    assert times == sorted(times) and len(set(times)) == len(times)
    assert [e.idempotency_key for e in entries] == [f"import:turn:{n}" for n in range(4)]


def test_crd3_bad_file() -> None:
    with pytest.raises(TranscriptFormatError, match="turn #1"):
        import_transcript(FIXTURES / "bad_crd3.json")


def test_detection_and_determinism() -> None:
    expected = {
        "session.jsonl": "jsonl", "session.txt": "text", "whisper.srt": "srt",
        "craig.vtt": "vtt", "crd3_small.json": "crd3",
    }
    for name, fmt in expected.items():
        text = (FIXTURES / name).read_text()
        assert detect_format(text, name) == fmt
        assert detect_format(text) == fmt  # content alone is enough
    once = import_transcript(FIXTURES / "craig.vtt")
    twice = import_transcript(FIXTURES / "craig.vtt")
    assert once.entries == twice.entries


def test_empty_and_missing_files() -> None:
    with pytest.raises(TranscriptFormatError, match="no transcript entries"):
        parse_transcript("\n\n", source="empty.txt")
    with pytest.raises(TranscriptFormatError, match="file not found"):
        import_transcript(FIXTURES / "nope.jsonl")


def test_real_crd3_episode(crd3_episode) -> None:
    result = import_transcript(crd3_episode)
    assert result.format == "crd3"
    assert len(result.entries) > 2000
    hours = result.duration_s / 3600
    assert 2.5 < hours < 4.5  # a realistic speaking rate: about 3.5 hours of play
    dm = [e for e in result.entries if e.speaker_role == "dm"]
    assert dm and all(e.speaker_name == "MATT" for e in dm)
    entries = result.as_entries("cr", "c1e001")
    assert entries[0].id == 1 and entries[-1].session_id == "c1e001"


# -- re-importing an edited transcript (issue 11, item 4) -----------------------------------


def _entries(db: object, sid: str) -> list[tuple[str, str, str]]:
    with db.connection() as conn:  # type: ignore[attr-defined]
        return conn.execute(
            "SELECT idempotency_key, speaker_name, raw_text FROM session_entries "
            "WHERE session_id = %s ORDER BY id",
            (sid,),
        ).fetchall()


def test_edited_reimport_is_refused_or_replaced_whole(
    db: object, campaign_id: str, tmp_path: Path
) -> None:
    from glyphoxa_pipelines.campaign.session_import import TranscriptChangedError, import_session

    path = tmp_path / "night-one.txt"
    lines = ["DM: You enter the tavern.", "Rook: I order an ale.", "Mira: I watch the door.",
             "DM: A hooded figure sits down."]
    path.write_text("\n".join(lines) + "\n")
    first = import_session(db, campaign_id, path)
    sid = first.session.id
    original = _entries(db, sid)
    assert first.written == 4 and len(original) == 4

    assert import_session(db, campaign_id, path).written == 0  # same file: nothing new
    path.write_text("\n".join([*lines, "Rook: I wave."]) + "\n")  # only grown: appended
    grown = import_session(db, campaign_id, path)
    assert grown.written == 1 and _entries(db, sid)[:4] == original

    # An edited line and an inserted one: the stored version and the file disagree.
    edited = [lines[0], "Rook: I order a mead.", "Mira: Hmm.", *lines[2:], "Rook: I wave."]
    path.write_text("\n".join(edited) + "\n")
    before = _entries(db, sid)
    with pytest.raises(TranscriptChangedError) as info:
        import_session(db, campaign_id, path)
    message = str(info.value)
    assert "changed: line 2, line 3, line 4, line 5" in message and "--replace" in message
    assert _entries(db, sid) == before  # refused: nothing written, nothing lost

    result = import_session(db, campaign_id, path, replace=True)
    after = _entries(db, sid)
    assert result.replaced == 5 and result.written == 6
    assert [r[2] for r in after] == [ln.split(": ", 1)[1] for ln in edited]  # no mix, no dup
    assert result.session.status == "ended"
    assert import_session(db, campaign_id, path, replace=True).written == 0  # idempotent
    assert _entries(db, sid) == after
