-- What the campaign file last said about each row it loaded, so a reload can tell the file's
-- changes from the DM's: a field is updated from the file only while it still holds the value
-- the file gave it (campaign/file_merge.py). NULL: the row is not the file's (DM-made,
-- extracted, or handed to the DM when the file dropped it after the DM had edited it).
ALTER TABLE entities ADD COLUMN file_values jsonb;
ALTER TABLE relationships ADD COLUMN file_values jsonb;
ALTER TABLE npc_profiles ADD COLUMN file_values jsonb;

-- Rows loaded before this migration: what they hold now is the best record of the file. The
-- loader always wrote facts as canon and DM-confirmed, so a fact rejected since then keeps
-- its rejection.
UPDATE entities SET file_values = jsonb_build_object(
        'type', type, 'name', name, 'aliases', to_jsonb(aliases), 'attributes', attributes)
    WHERE provenance = 'import';
UPDATE relationships SET file_values = jsonb_build_object(
        'attributes', attributes, 'confidence', to_jsonb(confidence), 'status', 'canon',
        'dm_confirmed', true, 'visibility', visibility, 'known_by', to_jsonb(known_by),
        'evidence', evidence)
    WHERE provenance = 'import';
UPDATE npc_profiles p SET file_values = jsonb_build_object(
        'personality', p.personality, 'speaking_style', p.speaking_style,
        'emotional_state', p.emotional_state, 'behavior_rules', p.behavior_rules,
        'secret_knowledge', p.secret_knowledge, 'voice', p.voice)
    FROM entities e
    WHERE e.campaign_id = p.campaign_id AND e.id = p.entity_id AND e.provenance = 'import';
