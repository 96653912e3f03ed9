-- Through a mapping, an edge's key is the app's key, not its two ends
-- (docs/mapping.md): its due row also keeps the ends its strength was
-- counted for, so the degrees can take it back from them when the edge
-- goes or moves. memworker's own edges leave them NULL (their key is
-- their ends), and the partial indexes hold none of their rows.
ALTER TABLE mem_edge_due ADD COLUMN end_a TEXT;
ALTER TABLE mem_edge_due ADD COLUMN end_b TEXT;
CREATE INDEX mem_edge_due_end_a ON mem_edge_due (end_a) WHERE end_a IS NOT NULL;
CREATE INDEX mem_edge_due_end_b ON mem_edge_due (end_b) WHERE end_b IS NOT NULL;
