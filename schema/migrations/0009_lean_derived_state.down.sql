-- Version 8 kept indexes on the blocks' degrees and the edges' due times.
CREATE INDEX mem_block_state_degree ON mem_block_state (degree);
CREATE INDEX mem_edge_due_hours ON mem_edge_due (due_hours) WHERE due_hours IS NOT NULL;
CREATE INDEX mem_edge_due_wall ON mem_edge_due (due_wall) WHERE due_wall IS NOT NULL;
