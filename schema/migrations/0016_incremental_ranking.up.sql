-- The ranking for reinforcement, kept incremental (worker/rank.go): an
-- hourly sweep scores the blocks that changed and those that could reach
-- the top, not every block.
-- * rank_count, rank_confidence, rank_anchor: the block's ranking inputs
--   at its last refresh (reinforcement count with the constitutional
--   bonus, confidence, last reinforcement), so a refresh can tell whether
--   any went up;
-- * rank_bound: an upper bound of the block's composite score from then
--   on while none of its inputs nor its degree goes up (NULL: not known,
--   -1e308: not ranked, inactive or unusable), on the scales kept in
--   mem_config's rank_scale, less twice their epoch;
-- * an index of the blocks by bound.
ALTER TABLE mem_block_state ADD COLUMN rank_count REAL;
ALTER TABLE mem_block_state ADD COLUMN rank_confidence REAL;
ALTER TABLE mem_block_state ADD COLUMN rank_anchor REAL;
ALTER TABLE mem_block_state ADD COLUMN rank_bound REAL;
CREATE INDEX mem_block_state_rank_bound ON mem_block_state (rank_bound);
