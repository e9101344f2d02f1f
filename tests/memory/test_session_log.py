"""L1 session log against the real embedded PostgreSQL."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from glyphoxa_pipelines.db import Database
from glyphoxa_pipelines.memory import InvalidInputError, NewEntry, NotFoundError, SessionStore

T0 = datetime(2026, 3, 1, 19, 0, tzinfo=UTC)


def _entry(i: int, text: str, **kw: object) -> NewEntry:
    return NewEntry(f"k{i}", text, spoken_at=T0 + timedelta(seconds=30 * i), **kw)  # type: ignore[arg-type]


def test_start_list_end_sessions_newest_first(db: Database, campaign_id: str) -> None:
    store = SessionStore(db)
    for n in range(3):
        store.start_session(campaign_id, f"{campaign_id}-s{n}", started_at=T0 + timedelta(days=n))
    listed = store.list_sessions(campaign_id, limit=2)
    assert [s.id for s in listed] == [f"{campaign_id}-s2", f"{campaign_id}-s1"]
    ended = store.end_session(f"{campaign_id}-s0")
    assert ended.status == "ended" and ended.ended_at is not None
    assert [s.id for s in store.list_sessions(campaign_id, status="ended")] == [f"{campaign_id}-s0"]
    assert store.list_sessions("no-such-campaign") == []


def test_start_session_is_idempotent_and_refuses_unknown_campaign(
    db: Database, campaign_id: str
) -> None:
    store = SessionStore(db)
    a = store.start_session(campaign_id, f"{campaign_id}-x", title="first")
    b = store.start_session(campaign_id, f"{campaign_id}-x", title="second")
    assert a.id == b.id and b.title == "first"
    with pytest.raises(NotFoundError, match="unknown campaign"):
        store.start_session("nope", "nope-1")
    with pytest.raises(InvalidInputError, match="comma"):
        store.start_session(campaign_id, "a,b")
    with pytest.raises(NotFoundError):
        store.end_session("no-such-session")


def test_write_entry_is_idempotent_and_keeps_raw_text(db: Database, campaign_id: str) -> None:
    store = SessionStore(db)
    sid = store.start_session(campaign_id).id
    first = store.write_entry(
        sid, NewEntry("utt-1", "Eldrinax lives here", raw_text="elder nacks lives here")
    )
    again = store.write_entry(sid, NewEntry("utt-1", "something else entirely"))
    assert again.id == first.id
    assert again.text == "Eldrinax lives here" and again.raw_text == "elder nacks lives here"
    assert store.entry_count(sid) == 1
    with pytest.raises(NotFoundError, match="unknown session"):
        store.write_entry("missing-session", NewEntry("k", "hello"))


def test_raw_text_is_immutable_in_the_database(db: Database, campaign_id: str) -> None:
    store = SessionStore(db)
    sid = store.start_session(campaign_id).id
    e = store.write_entry(sid, NewEntry("k", "hello there"))
    with db.connection() as conn, pytest.raises(psycopg.errors.CheckViolation):
        conn.execute("UPDATE session_entries SET raw_text = 'x' WHERE id = %s", (e.id,))
    store.update_corrections([(e.id, "hello, there", [{"method": "test"}], "v1")])
    stored = store.get_entries(sid)[0]
    assert stored.raw_text == "hello there" and stored.text == "hello, there"
    assert stored.corrector_version == "v1"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (NewEntry("k", ""), "text is empty"),
        (NewEntry("k", "   \n"), "text is empty"),
        (NewEntry("k", "x" * 200_001), "limit is 200000"),
        (NewEntry("k", "ok", speaker_role="wizard"), "speaker_role"),  # type: ignore[arg-type]
        (NewEntry("k", "ok", duration_s=-1), "negative"),
        (NewEntry("k", "ok", word_confidences=[1.5]), r"\[0, 1\]"),
        (NewEntry("", "ok"), "idempotency_key"),
    ],
)
def test_bad_entries_are_refused_with_a_clear_error(
    db: Database, campaign_id: str, entry: NewEntry, message: str
) -> None:
    store = SessionStore(db)
    sid = store.start_session(campaign_id).id
    with pytest.raises(InvalidInputError, match=message):
        store.write_entry(sid, entry)
    with pytest.raises(InvalidInputError, match=message):
        store.write_entries(sid, [NewEntry("good", "fine"), entry])
    assert store.entry_count(sid) == 0  # nothing written, not even the good one


def test_huge_but_allowed_text_round_trips(db: Database, campaign_id: str) -> None:
    store = SessionStore(db)
    sid = store.start_session(campaign_id).id
    text = " ".join(["word"] * 10_000)
    assert store.write_entry(sid, NewEntry("big", text)).text == text


def test_concurrent_writers_store_each_key_once(database_url: str, campaign_id: str) -> None:
    dbs = [Database(database_url, max_size=2).open() for _ in range(4)]
    try:
        sid = SessionStore(dbs[0]).start_session(campaign_id).id
        errors: list[BaseException] = []

        def writer(d: Database) -> None:
            store = SessionStore(d)
            try:
                for i in range(50):
                    store.write_entry(sid, NewEntry(f"key-{i}", f"utterance {i}"))
                store.write_entries(sid, [NewEntry(f"bulk-{i}", f"bulk {i}") for i in range(50)])
            except BaseException as exc:  # surfaced below
                errors.append(exc)

        threads = [threading.Thread(target=writer, args=(d,)) for d in dbs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert SessionStore(dbs[0]).entry_count(sid) == 100
    finally:
        for d in dbs:
            d.close()


def test_get_recent_returns_the_last_minutes_oldest_first(db: Database, campaign_id: str) -> None:
    store = SessionStore(db)
    sid = store.start_session(campaign_id).id
    store.write_entries(sid, [_entry(i, f"line {i}") for i in range(20)])  # 30 s apart, 9.5 min
    recent = store.get_recent(sid, timedelta(minutes=5))
    assert [e.text for e in recent] == [f"line {i}" for i in range(9, 20)]
    assert [e.text for e in store.get_recent(sid, 300, limit=3)] == [
        "line 17",
        "line 18",
        "line 19",
    ]
    anchored = store.get_recent(sid, 60, now=T0 + timedelta(seconds=90))
    assert [e.text for e in anchored] == ["line 1", "line 2", "line 3"]
    empty = store.start_session(campaign_id).id
    assert store.get_recent(empty, 300) == []


def test_full_text_search_ranks_filters_and_scopes(db: Database, campaign_id: str) -> None:
    store = SessionStore(db)
    s1 = store.start_session(campaign_id).id
    s2 = store.start_session(campaign_id).id
    store.write_entries(
        s1,
        [
            _entry(0, "The dragon burned the village", speaker_name="Matt"),
            _entry(1, "We should ask the blacksmith about the hammer", speaker_name="Sam"),
            _entry(2, "Dragons! Dragons everywhere, the dragon is back", speaker_name="Matt"),
        ],
    )
    store.write_entries(s2, [_entry(10, "A quiet dragon sleeps under the hill")])
    hits = store.search(campaign_id, "dragons")
    assert len(hits) == 3
    assert hits[0].text.startswith("Dragons!")  # most occurrences ranks first
    assert all(h.rank is not None and h.rank > 0 for h in hits)
    assert [h.session_id for h in store.search(campaign_id, "dragon", session_id=s2)] == [s2]
    assert [h.speaker_name for h in store.search(campaign_id, "dragon", speaker="Matt")] == [
        "Matt",
        "Matt",
    ]
    after = store.search(campaign_id, "dragon", after=T0 + timedelta(seconds=45))
    assert {h.idempotency_key for h in after} == {"k2", "k10"}
    assert store.search(campaign_id, "dragon", limit=1)[0].text.startswith("Dragons!")
    assert store.search(campaign_id, "unicorn") == []
    assert store.search(campaign_id, "   ") == []
    assert store.search("other-campaign", "dragon") == []
