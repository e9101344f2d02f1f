-- Spellings the knowledge step heard for a known entity ("Stillben" for Stilben). An alias is a
-- target of the name corrector, so a heard spelling becomes one only when the DM accepts it
-- (issue 16, the feedback loop made safe); until then it waits on the review page.
-- One row per (entity, spelling, session), the session's pipeline's own: a reprocess replaces
-- the session's rows. The DM's answer outlives reprocessing: an accepted spelling is on the
-- entity (an alias), a dismissed one is in spelling_dismissals and never suggested again.
CREATE TABLE spelling_suggestions (
    campaign_id  text NOT NULL,
    entity_id    text NOT NULL,
    spelling     text NOT NULL CHECK (length(btrim(spelling)) BETWEEN 1 AND 200),
    session_id   text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (campaign_id, entity_id, spelling, session_id),
    FOREIGN KEY (campaign_id, session_id) REFERENCES sessions (campaign_id, id) ON DELETE CASCADE,
    FOREIGN KEY (campaign_id, entity_id) REFERENCES entities (campaign_id, id)
        ON DELETE CASCADE
);
CREATE INDEX spelling_suggestions_session ON spelling_suggestions (campaign_id, session_id);

CREATE TABLE spelling_dismissals (
    campaign_id   text NOT NULL,
    entity_id     text NOT NULL,
    spelling_key  text NOT NULL CHECK (spelling_key = lower(btrim(spelling_key))
                                       AND spelling_key <> ''),
    dismissed_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (campaign_id, entity_id, spelling_key),
    FOREIGN KEY (campaign_id, entity_id) REFERENCES entities (campaign_id, id)
        ON DELETE CASCADE
);
