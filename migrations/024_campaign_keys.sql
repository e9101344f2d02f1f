-- Every primary key and unique constraint leads with campaign_id, and every foreign key
-- between campaign tables carries it on both sides: Citus, distributing these tables by
-- campaign_id, refuses any other (tests/scale/test_distribution_key.py reads the catalog).
-- The ids themselves do not change: identity columns still draw from one sequence, session
-- and chunk ids stay the slugs they were, so nothing the API, the archives or Dagster's
-- partition keys expose changes meaning. Session ids stay unique across campaigns (they are
-- partition keys); no constraint can say so without the distribution column, so the one
-- writer of sessions checks it under an advisory lock (memory/session_log.py).
-- Lookups by id alone remain (a fact id in a DM edit, a session id in every API path, the
-- chunk audience trigger's entry ids): plain indexes on the id keep them index scans.

-- Embedding rows were always written with their parent's campaign and session; make sure of
-- it before the composite foreign keys below validate it.
UPDATE chunk_embeddings ce SET campaign_id = c.campaign_id, session_id = c.session_id
    FROM chunks c
    WHERE c.id = ce.chunk_id
      AND (ce.campaign_id, ce.session_id) IS DISTINCT FROM (c.campaign_id, c.session_id);
UPDATE entry_embeddings ee SET campaign_id = e.campaign_id, session_id = e.session_id
    FROM session_entries e
    WHERE e.id = ee.entry_id
      AND (ee.campaign_id, ee.session_id) IS DISTINCT FROM (e.campaign_id, e.session_id);

-- Foreign keys go first: each depends on the unique index it references.
ALTER TABLE session_entries DROP CONSTRAINT session_entries_campaign_id_session_id_fkey;
ALTER TABLE chunks DROP CONSTRAINT chunks_campaign_id_session_id_fkey;
ALTER TABLE session_summaries DROP CONSTRAINT session_summaries_campaign_id_session_id_fkey;
ALTER TABLE recaps DROP CONSTRAINT recaps_campaign_id_session_id_fkey;
ALTER TABLE chunk_embeddings DROP CONSTRAINT chunk_embeddings_chunk_id_fkey;
ALTER TABLE entry_embeddings DROP CONSTRAINT entry_embeddings_entry_id_fkey;
ALTER TABLE relationships DROP CONSTRAINT relationships_invalidated_by_fkey;

-- sessions: (campaign_id, id) was already unique; it becomes the primary key.
ALTER TABLE sessions DROP CONSTRAINT sessions_pkey;
ALTER TABLE sessions DROP CONSTRAINT sessions_campaign_id_id_key;
ALTER TABLE sessions ADD PRIMARY KEY (campaign_id, id);
CREATE INDEX sessions_id ON sessions (id);

ALTER TABLE session_entries DROP CONSTRAINT session_entries_pkey;
ALTER TABLE session_entries ADD PRIMARY KEY (campaign_id, id);
CREATE INDEX session_entries_id ON session_entries (id);
ALTER TABLE session_entries DROP CONSTRAINT session_entries_session_id_idempotency_key_key;
ALTER TABLE session_entries ADD CONSTRAINT session_entries_idempotency_key
    UNIQUE (campaign_id, session_id, idempotency_key);

-- chunks: the new (campaign_id, session_id, seq) key is the index chunks_campaign_session was.
ALTER TABLE chunks DROP CONSTRAINT chunks_pkey;
ALTER TABLE chunks ADD PRIMARY KEY (campaign_id, id);
CREATE INDEX chunks_id ON chunks (id);
ALTER TABLE chunks DROP CONSTRAINT chunks_session_id_seq_key;
DROP INDEX chunks_campaign_session;
ALTER TABLE chunks ADD CONSTRAINT chunks_session_seq UNIQUE (campaign_id, session_id, seq);

-- Embeddings: every reader already names the campaign (k-NN, the pipeline's missing-embedding
-- checks once they join on it), so the composite keys serve them; no id-only index.
ALTER TABLE chunk_embeddings DROP CONSTRAINT chunk_embeddings_pkey;
ALTER TABLE chunk_embeddings ADD PRIMARY KEY (campaign_id, chunk_id, model);
ALTER TABLE entry_embeddings DROP CONSTRAINT entry_embeddings_pkey;
ALTER TABLE entry_embeddings ADD PRIMARY KEY (campaign_id, entry_id, model);

ALTER TABLE relationships DROP CONSTRAINT relationships_pkey;
ALTER TABLE relationships ADD PRIMARY KEY (campaign_id, id);
CREATE INDEX relationships_id ON relationships (id);

-- One row per session; read by session id alone (recaps, summaries), hence the plain index.
ALTER TABLE session_summaries DROP CONSTRAINT session_summaries_pkey;
ALTER TABLE session_summaries ADD PRIMARY KEY (campaign_id, session_id);
CREATE INDEX session_summaries_session ON session_summaries (session_id);
ALTER TABLE recaps DROP CONSTRAINT recaps_pkey;
ALTER TABLE recaps ADD PRIMARY KEY (campaign_id, session_id);
CREATE INDEX recaps_session ON recaps (session_id);

-- The foreign keys again, campaign_id on both sides. invalidated_by is nulled alone on delete
-- (a column list, PostgreSQL 15+): campaign_id is NOT NULL and stays.
ALTER TABLE session_entries ADD CONSTRAINT session_entries_campaign_id_session_id_fkey
    FOREIGN KEY (campaign_id, session_id) REFERENCES sessions (campaign_id, id) ON DELETE CASCADE;
ALTER TABLE chunks ADD CONSTRAINT chunks_campaign_id_session_id_fkey
    FOREIGN KEY (campaign_id, session_id) REFERENCES sessions (campaign_id, id) ON DELETE CASCADE;
ALTER TABLE session_summaries ADD CONSTRAINT session_summaries_campaign_id_session_id_fkey
    FOREIGN KEY (campaign_id, session_id) REFERENCES sessions (campaign_id, id) ON DELETE CASCADE;
ALTER TABLE recaps ADD CONSTRAINT recaps_campaign_id_session_id_fkey
    FOREIGN KEY (campaign_id, session_id) REFERENCES sessions (campaign_id, id) ON DELETE CASCADE;
ALTER TABLE chunk_embeddings ADD CONSTRAINT chunk_embeddings_chunk_fkey
    FOREIGN KEY (campaign_id, chunk_id) REFERENCES chunks (campaign_id, id) ON DELETE CASCADE;
ALTER TABLE entry_embeddings ADD CONSTRAINT entry_embeddings_entry_fkey
    FOREIGN KEY (campaign_id, entry_id) REFERENCES session_entries (campaign_id, id)
    ON DELETE CASCADE;
ALTER TABLE relationships ADD CONSTRAINT relationships_invalidated_by_fkey
    FOREIGN KEY (campaign_id, invalidated_by) REFERENCES relationships (campaign_id, id)
    ON DELETE SET NULL (invalidated_by);

-- A re-corrected entry drops its stale vectors through the new key (was: entry_id alone,
-- which no index leads with any more).
CREATE OR REPLACE FUNCTION glyphoxa_drop_stale_entry_embeddings() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM entry_embeddings WHERE campaign_id = NEW.campaign_id AND entry_id = NEW.id;
    RETURN NULL;
END $$;
