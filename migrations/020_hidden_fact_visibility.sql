-- "Hidden from all until revealed": a third visibility for facts the DM keeps even from the
-- NPCs they name; only NPCs in known_by (those the DM revealed it to) see them
-- (glyphoxa_pipelines/memory/visibility.py holds the rule).
ALTER TABLE relationships DROP CONSTRAINT IF EXISTS relationships_visibility_check;
ALTER TABLE relationships ADD CONSTRAINT relationships_visibility_check
    CHECK (visibility IN ('public', 'secret', 'hidden'));
