-- Per-turn embeddings: one vector per session entry and model, embedded by the pipeline's
-- chunk_embeddings step as '<speaker name>: <text>'. Session search ranks the turns of the
-- chunk windows it retrieved by each turn's own cosine similarity to the query.
-- Untyped vector column (like chunk_embeddings) so several models coexist. No ANN index: rows
-- are only read by entry id (the turns of already-retrieved chunks), so inserts stay cheap.
CREATE TABLE entry_embeddings (
    entry_id     bigint NOT NULL REFERENCES session_entries (id) ON DELETE CASCADE,
    model        text NOT NULL REFERENCES embedding_models (name),
    campaign_id  text NOT NULL,
    session_id   text NOT NULL,
    embedding    vector NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (entry_id, model)
);
CREATE INDEX entry_embeddings_session_model ON entry_embeddings (session_id, model);

-- A stale vector must never describe new text: when an entry's text changes (the pipeline's
-- corrected_transcript step re-corrects it from raw_text), its embeddings are dropped and the
-- next chunk_embeddings run embeds the new text.
CREATE FUNCTION glyphoxa_drop_stale_entry_embeddings() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM entry_embeddings WHERE entry_id = NEW.id;
    RETURN NULL;
END $$;
CREATE TRIGGER session_entries_text_drops_embeddings
    AFTER UPDATE OF text ON session_entries
    FOR EACH ROW WHEN (NEW.text IS DISTINCT FROM OLD.text)
    EXECUTE FUNCTION glyphoxa_drop_stale_entry_embeddings();
