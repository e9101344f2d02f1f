-- The three memory layers (L1 session log, L2 semantic index, L3 knowledge graph) plus the
-- derived per-session products (summaries, recaps). Every table carries campaign_id: no query
-- ever needs to cross campaigns, and a future Citus distribution key is already in place.

CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE campaigns (
    id                      text PRIMARY KEY CHECK (id ~ '^[a-z0-9][a-z0-9_-]*$'),
    name                    text NOT NULL,
    description             text NOT NULL DEFAULT '',
    system                  text NOT NULL DEFAULT '',
    -- Facts extracted with a confidence below this go to the DM review queue.
    review_threshold        real NOT NULL DEFAULT 0.7 CHECK (review_threshold BETWEEN 0 AND 1),
    -- The embedding model queries use; switched only once a re-embedding is complete.
    active_embedding_model  text NOT NULL DEFAULT 'all-MiniLM-L6-v2',
    settings                jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at              timestamptz NOT NULL DEFAULT now(),
    updated_at              timestamptz NOT NULL DEFAULT now()
);

-- Session ids are global slugs (they are Dagster partition keys), so no commas.
CREATE TABLE sessions (
    id           text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9][A-Za-z0-9_.:-]*$'),
    campaign_id  text NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    title        text NOT NULL DEFAULT '',
    status       text NOT NULL DEFAULT 'live' CHECK (status IN ('live', 'ended')),
    started_at   timestamptz NOT NULL DEFAULT now(),
    ended_at     timestamptz,
    -- Scene state the DM sets: {"location": entity id, "present": [entity ids], "quests": [...]}.
    scene        jsonb NOT NULL DEFAULT '{}'::jsonb,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (campaign_id, id)
);
CREATE INDEX sessions_campaign_started ON sessions (campaign_id, started_at DESC);

-- L1: every utterance. raw_text is immutable (trigger below); text is the best correction.
CREATE TABLE session_entries (
    id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    campaign_id       text NOT NULL,
    session_id        text NOT NULL,
    idempotency_key   text NOT NULL,
    speaker_id        text NOT NULL DEFAULT '',
    speaker_name      text NOT NULL DEFAULT '',
    speaker_role      text NOT NULL DEFAULT 'player'
                      CHECK (speaker_role IN ('dm', 'player', 'npc', 'system')),
    raw_text          text NOT NULL,
    text              text NOT NULL,
    npc_id            text,
    spoken_at         timestamptz NOT NULL DEFAULT now(),
    duration_s        real NOT NULL DEFAULT 0 CHECK (duration_s >= 0),
    word_confidences  real[],
    -- Corrections applied to raw_text to give text: [{original, replacement, start, end, score, method}].
    corrections       jsonb NOT NULL DEFAULT '[]'::jsonb,
    corrector_version text,
    created_at        timestamptz NOT NULL DEFAULT now(),
    tsv               tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
    FOREIGN KEY (campaign_id, session_id) REFERENCES sessions (campaign_id, id) ON DELETE CASCADE,
    UNIQUE (session_id, idempotency_key)
);
CREATE INDEX session_entries_recent ON session_entries (session_id, spoken_at DESC);
CREATE INDEX session_entries_campaign_time ON session_entries (campaign_id, spoken_at);
CREATE INDEX session_entries_tsv ON session_entries USING gin (tsv);

CREATE FUNCTION glyphoxa_raw_text_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.raw_text IS DISTINCT FROM OLD.raw_text THEN
        RAISE EXCEPTION 'session_entries.raw_text is immutable (entry %)', OLD.id
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER session_entries_raw_text_immutable
    BEFORE UPDATE OF raw_text ON session_entries
    FOR EACH ROW EXECUTE FUNCTION glyphoxa_raw_text_immutable();

-- L2: chunks of corrected transcript. Ids are deterministic ("<session>#<seq>") so
-- re-chunking a session upserts instead of piling up.
CREATE TABLE chunks (
    id               text PRIMARY KEY,
    campaign_id      text NOT NULL,
    session_id       text NOT NULL,
    seq              integer NOT NULL,
    text             text NOT NULL,
    speakers         text[] NOT NULL DEFAULT '{}',
    entity_ids       text[] NOT NULL DEFAULT '{}',
    topic            text NOT NULL DEFAULT '',
    first_entry_id   bigint,
    last_entry_id    bigint,
    start_at         timestamptz,
    end_at           timestamptz,
    token_count      integer NOT NULL DEFAULT 0,
    chunker_version  text NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL DEFAULT now(),
    tsv              tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
    FOREIGN KEY (campaign_id, session_id) REFERENCES sessions (campaign_id, id) ON DELETE CASCADE,
    UNIQUE (session_id, seq)
);
CREATE INDEX chunks_campaign_session ON chunks (campaign_id, session_id, seq);
CREATE INDEX chunks_tsv ON chunks USING gin (tsv);
CREATE INDEX chunks_entities ON chunks USING gin (entity_ids);
CREATE INDEX chunks_speakers ON chunks USING gin (speakers);

-- Known embedding models; each gets its own partial HNSW index (see db/embedding_indexes).
CREATE TABLE embedding_models (
    name        text PRIMARY KEY,
    dimension   integer NOT NULL CHECK (dimension BETWEEN 1 AND 16000),
    created_at  timestamptz NOT NULL DEFAULT now()
);
INSERT INTO embedding_models (name, dimension) VALUES ('all-MiniLM-L6-v2', 384);

-- Untyped vector column so several models (dimensions) coexist; each model's partial index
-- casts to its own dimension.
CREATE TABLE chunk_embeddings (
    chunk_id     text NOT NULL REFERENCES chunks (id) ON DELETE CASCADE,
    model        text NOT NULL REFERENCES embedding_models (name),
    campaign_id  text NOT NULL,
    session_id   text NOT NULL,
    embedding    vector NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (chunk_id, model)
);
CREATE INDEX chunk_embeddings_campaign_model ON chunk_embeddings (campaign_id, model, session_id);
CREATE INDEX chunk_embeddings_hnsw_all_minilm_l6_v2
    ON chunk_embeddings USING hnsw ((embedding::vector(384)) vector_cosine_ops)
    WHERE model = 'all-MiniLM-L6-v2';

-- L3: entities. Ids are campaign-scoped slugs.
CREATE TABLE entities (
    campaign_id        text NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    id                 text NOT NULL,
    type               text NOT NULL CHECK (type ~ '^[a-z][a-z_]*$'),
    name               text NOT NULL CHECK (length(btrim(name)) > 0),
    aliases            text[] NOT NULL DEFAULT '{}',
    attributes         jsonb NOT NULL DEFAULT '{}'::jsonb,
    provenance         text NOT NULL DEFAULT 'dm' CHECK (provenance IN ('dm', 'import', 'extracted')),
    session_id         text,
    extractor_version  text,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (campaign_id, id)
);
CREATE INDEX entities_type ON entities (campaign_id, type);
CREATE INDEX entities_name_trgm ON entities USING gin (lower(name) gin_trgm_ops);
CREATE INDEX entities_attributes ON entities USING gin (attributes jsonb_path_ops);
CREATE INDEX entities_session ON entities (campaign_id, session_id) WHERE session_id IS NOT NULL;

-- NPC profiles live apart from entity attributes: attributes are visible to every NPC,
-- a profile (and its secret knowledge) only to that NPC.
CREATE TABLE npc_profiles (
    campaign_id       text NOT NULL,
    entity_id         text NOT NULL,
    personality       text NOT NULL DEFAULT '',
    speaking_style    text NOT NULL DEFAULT '',
    emotional_state   text NOT NULL DEFAULT '',
    behavior_rules    jsonb NOT NULL DEFAULT '[]'::jsonb,
    secret_knowledge  jsonb NOT NULL DEFAULT '[]'::jsonb,
    voice             jsonb NOT NULL DEFAULT '{}'::jsonb,
    updated_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (campaign_id, entity_id),
    FOREIGN KEY (campaign_id, entity_id) REFERENCES entities (campaign_id, id) ON DELETE CASCADE
);

-- L3: typed directed relationships ("facts") with provenance, temporal validity, visibility
-- and review status. History is kept: a contradicted fact gets invalidated_at, never deleted.
CREATE TABLE relationships (
    id                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    campaign_id          text NOT NULL,
    source_id            text NOT NULL,
    target_id            text NOT NULL,
    rel_type             text NOT NULL CHECK (rel_type ~ '^[a-z][a-z0-9_]*$'),
    attributes           jsonb NOT NULL DEFAULT '{}'::jsonb,
    confidence           real NOT NULL DEFAULT 1.0 CHECK (confidence BETWEEN 0 AND 1),
    assertion            text NOT NULL DEFAULT 'stated' CHECK (assertion IN ('stated', 'inferred')),
    provenance           text NOT NULL DEFAULT 'dm' CHECK (provenance IN ('dm', 'import', 'extracted')),
    dm_confirmed         boolean NOT NULL DEFAULT false,
    status               text NOT NULL DEFAULT 'canon' CHECK (status IN ('canon', 'pending', 'rejected')),
    visibility           text NOT NULL DEFAULT 'public' CHECK (visibility IN ('public', 'secret')),
    known_by             text[] NOT NULL DEFAULT '{}',
    session_id           text,
    observed_at          timestamptz,
    evidence             text NOT NULL DEFAULT '',
    valid_from           timestamptz NOT NULL DEFAULT now(),
    invalidated_at       timestamptz,
    invalidated_by       bigint REFERENCES relationships (id) ON DELETE SET NULL,
    extractor_version    text,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (campaign_id, source_id) REFERENCES entities (campaign_id, id) ON DELETE CASCADE,
    FOREIGN KEY (campaign_id, target_id) REFERENCES entities (campaign_id, id) ON DELETE CASCADE
);
-- One current (not invalidated) fact per (source, type, target): add_relationship upserts it.
CREATE UNIQUE INDEX relationships_current
    ON relationships (campaign_id, source_id, rel_type, target_id) WHERE invalidated_at IS NULL;
CREATE INDEX relationships_out ON relationships (campaign_id, source_id) WHERE invalidated_at IS NULL;
CREATE INDEX relationships_in ON relationships (campaign_id, target_id) WHERE invalidated_at IS NULL;
CREATE INDEX relationships_session ON relationships (campaign_id, session_id) WHERE session_id IS NOT NULL;
CREATE INDEX relationships_review ON relationships (campaign_id) WHERE status = 'pending';

CREATE TABLE session_summaries (
    session_id   text PRIMARY KEY,
    campaign_id  text NOT NULL,
    summary      text NOT NULL,
    key_points   jsonb NOT NULL DEFAULT '[]'::jsonb,
    method       text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (campaign_id, session_id) REFERENCES sessions (campaign_id, id) ON DELETE CASCADE
);

CREATE TABLE recaps (
    session_id   text PRIMARY KEY,
    campaign_id  text NOT NULL,
    text         text NOT NULL,
    audio_path   text,
    method       text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (campaign_id, session_id) REFERENCES sessions (campaign_id, id) ON DELETE CASCADE
);

-- Campaign-level products of nightly consolidation ("story so far").
CREATE TABLE campaign_summaries (
    campaign_id  text PRIMARY KEY REFERENCES campaigns(id) ON DELETE CASCADE,
    story        text NOT NULL DEFAULT '',
    details      jsonb NOT NULL DEFAULT '{}'::jsonb,
    updated_at   timestamptz NOT NULL DEFAULT now()
);
