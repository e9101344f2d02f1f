-- NPC-scoped recall (issue 17): who witnessed each utterance and who was told of it
-- (glyphoxa_pipelines/memory/visibility.py holds the rule, memory/presence.py the writes).
-- witnesses NULL: no presence recorded (every row before this migration), a public line.
-- Both are read row by row after an index has found the rows (a session's recent lines, a
-- chunk's turns), so neither needs an index of its own.
ALTER TABLE session_entries
    ADD COLUMN witnesses text[],
    ADD COLUMN told text[] NOT NULL DEFAULT '{}';
ALTER TABLE session_entries ADD CONSTRAINT session_entries_presence_not_blank
    CHECK (array_position(witnesses, '') IS NULL AND array_position(told, '') IS NULL);
