-- Derived state the sweep keeps without indexes that cost more than they
-- save. Each index below was written at random (its order is not the key
-- order the sweep writes in) on every removal, degree change or due time:
-- * mem_block_state_degree: its one reader, the bridge threshold, sorts
--   the blocks' degrees once per sweep instead;
-- * mem_edge_due_hours, mem_edge_due_wall: an incremental sweep finds the
--   edges whose due time has come in one pass over mem_edge_due, in key
--   order, the order it then reads the edges in.
DROP INDEX mem_block_state_degree;
DROP INDEX mem_edge_due_hours;
DROP INDEX mem_edge_due_wall;
