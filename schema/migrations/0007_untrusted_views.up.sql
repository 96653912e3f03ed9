-- The views under PRAGMA trusted_schema=OFF, where a view may call only
-- innocuous functions and SQLite's JSON functions are not: a block's tags
-- reach decay_tier as a comma-separated list (group_concat) instead of a
-- JSON array. Only tags made of lowercase letters and slashes are passed,
-- as every tag the tier rules name is: a tag with a comma or spaces in it
-- could otherwise be split or trimmed into one of them.
DROP VIEW mem_block_tiers;
CREATE VIEW mem_block_tiers AS
SELECT b.id,
       b.status,
       decay_tier(coalesce((SELECT group_concat(CAST(t.tag AS TEXT), ',') FROM mem_block_tags t
                            WHERE t.block_id = b.id AND NOT CAST(t.tag AS TEXT) GLOB '*[^a-z/]*'), ''),
                  CAST(b.category AS TEXT)) AS tier
FROM mem_blocks b;
