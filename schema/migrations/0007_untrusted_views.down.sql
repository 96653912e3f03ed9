DROP VIEW mem_block_tiers;
CREATE VIEW mem_block_tiers AS
SELECT b.id,
       b.status,
       decay_tier((SELECT json_group_array(CAST(t.tag AS TEXT)) FROM mem_block_tags t WHERE t.block_id = b.id),
                  CAST(b.category AS TEXT)) AS tier
FROM mem_blocks b;
