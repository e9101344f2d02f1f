-- Tabletop imports (Foundry VTT, Roll20, CSV) wait here for the DM: the design says the DM
-- reviews and confirms imported entities before they enter the knowledge graph. A batch
-- keeps what was read (entities, facts and the DM-only notes, e.g. Roll20 gmnotes, which
-- never enter the graph) until the DM accepts it (whole or entity by entity) or discards it.
-- The id is a hash of the file's content, so importing the same file again changes nothing.
CREATE TABLE import_batches (
    campaign_id  text NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    id           text NOT NULL CHECK (id ~ '^[a-z0-9]+$'),
    format       text NOT NULL CHECK (format IN ('foundry', 'roll20', 'csv')),
    source       text NOT NULL,
    status       text NOT NULL DEFAULT 'pending'
                 CHECK (status IN ('pending', 'accepted', 'discarded')),
    entities     jsonb NOT NULL,
    facts        jsonb NOT NULL,
    accepted     text[] NOT NULL DEFAULT '{}',
    created_at   timestamptz NOT NULL DEFAULT now(),
    decided_at   timestamptz,
    PRIMARY KEY (campaign_id, id)
);
