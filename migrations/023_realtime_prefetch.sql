-- Pre-fetch results shared by every realtime worker and host: a partial transcript sent to
-- one worker starts a fetch whose result the next hot context needs, and that hot context may
-- be served by another worker. Rows live about one turn (expires_at); losing them in a crash
-- only costs a pre-fetch, so the table is UNLOGGED (no WAL: the write costs what the
-- in-process cache cost plus one round trip, and nothing is shipped to standbys, which cannot
-- read unlogged tables: the service reads it on the primary). `pending` marks a fetch in
-- flight, so a hot context on another worker waits for it as it would on the fetching one.
-- Keyed by campaign first, as every table (Citus distribution key); the key text (a topic can
-- be a sentence) is indexed by its hash.
CREATE UNLOGGED TABLE realtime_prefetch (
    campaign_id  text NOT NULL,
    session_id   text NOT NULL,
    kind         text NOT NULL,
    key          text NOT NULL,
    key_hash     text GENERATED ALWAYS AS (md5(key)) STORED,
    viewer       text NOT NULL,
    surface      text NOT NULL DEFAULT '',
    memories     jsonb NOT NULL DEFAULT '[]',
    pending      boolean NOT NULL DEFAULT false,
    elapsed_ms   real NOT NULL DEFAULT 0,
    fetched_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    expires_at   timestamptz NOT NULL,
    PRIMARY KEY (campaign_id, session_id, kind, key_hash, viewer)
);
CREATE INDEX realtime_prefetch_expiry ON realtime_prefetch (campaign_id, expires_at);
