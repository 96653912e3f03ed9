DELETE FROM mem_config WHERE key = 'rank_scale';
DROP INDEX mem_block_state_rank_bound;
ALTER TABLE mem_block_state DROP COLUMN rank_bound;
ALTER TABLE mem_block_state DROP COLUMN rank_anchor;
ALTER TABLE mem_block_state DROP COLUMN rank_confidence;
ALTER TABLE mem_block_state DROP COLUMN rank_count;
