-- The edge curate rules of reference 000 in plain SQL, in their strongest
-- form, for the sqlite3 shell (SQLite's built-in exp(); no extension):
--
--     sqlite3 DB < bench/plain.sql
--
-- A temp table of each block's decay rate from its tags and category, then
-- one DELETE for the static prune and one for temporal decay, in one
-- transaction. Prints the edges pruned, decayed and left.
PRAGMA temp_store = MEMORY;
BEGIN IMMEDIATE;

CREATE TEMP TABLE cfg AS
SELECT (SELECT value FROM mem_config WHERE key = 'active_hours') AS now,
       (SELECT value FROM mem_config WHERE key = 'edge_prune_threshold') AS prune,
       (SELECT CASE WHEN d.value = 'auto' THEN p.value ELSE d.value END
        FROM mem_config d, mem_config p
        WHERE d.key = 'edge_decay_threshold' AND p.key = 'edge_prune_threshold') AS decay,
       (SELECT value FROM mem_config WHERE key = 'established_edge_threshold') AS established;

-- decay_tier(tags, category) and tier_lambda(tier): first match wins.
CREATE TEMP TABLE tier (id TEXT PRIMARY KEY, lambda REAL NOT NULL) WITHOUT ROWID;
INSERT INTO tier (id, lambda)
SELECT b.id,
       CASE WHEN EXISTS (SELECT 1 FROM mem_block_tags t WHERE t.block_id = b.id AND t.tag = 'self/constitutional') THEN 0.00001
            WHEN EXISTS (SELECT 1 FROM mem_block_tags t WHERE t.block_id = b.id
                         AND t.tag IN ('self/value', 'self/constraint', 'self/goal')) THEN 0.001
            WHEN b.category = 'mind' THEN 0.001
            WHEN b.category = 'observation' THEN 0.050
            ELSE 0.010 END
FROM mem_blocks b;

-- The rules (bench/bounded.sql reuses everything above this line).
-- Static prune: never useful.
DELETE FROM mem_edges
WHERE weight < (SELECT prune FROM cfg) AND reinforcement_count = 0 AND NOT pinned;
SELECT 'edges_pruned', changes();

-- Temporal decay: weight × exp(−λ_edge × elapsed) below the threshold, with
-- λ_edge = min(λ_from, λ_to) × 0.5, halved again once established.
DELETE FROM mem_edges
WHERE origin IS NOT 'agent' AND last_active_hours IS NOT NULL AND NOT pinned
  AND weight * exp(-(min(coalesce((SELECT lambda FROM tier WHERE id = from_id), 0.010),
                         coalesce((SELECT lambda FROM tier WHERE id = to_id), 0.010)) * 0.5
                     * CASE WHEN reinforcement_count >= (SELECT established FROM cfg) THEN 0.5 ELSE 1.0 END)
                   * max(0, (SELECT now FROM cfg) - last_active_hours))
      < (SELECT decay FROM cfg);
SELECT 'edges_decayed', changes();

SELECT 'total_edges_after', count(*) FROM mem_edges;
COMMIT;
