DROP INDEX IF EXISTS mem_edge_due_end_a;
DROP INDEX IF EXISTS mem_edge_due_end_b;
ALTER TABLE mem_edge_due DROP COLUMN end_a;
ALTER TABLE mem_edge_due DROP COLUMN end_b;
