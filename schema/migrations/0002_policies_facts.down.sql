DROP VIEW IF EXISTS mem_facts_scored;
DROP VIEW IF EXISTS mem_edges_decayed;
DROP VIEW IF EXISTS mem_edges_live;
DROP VIEW IF EXISTS mem_edges_effective;
ALTER TABLE mem_edges DROP COLUMN excluded;

CREATE VIEW mem_edges_effective AS
SELECT e.from_id,
       e.to_id,
       e.relation_type,
       e.origin,
       e.weight,
       e.reinforcement_count,
       e.pinned,
       ta.tier AS tier_from,
       tb.tier AS tier_to,
       lambda_edge(coalesce(ta.tier, 'standard'), coalesce(tb.tier, 'standard'), e.reinforcement_count,
                   (SELECT value FROM mem_config WHERE key = 'established_edge_threshold')) AS lambda,
       max(0, (SELECT value FROM mem_config WHERE key = 'active_hours') - e.last_active_hours) AS elapsed_hours,
       CASE WHEN e.pinned OR e.origin = 'agent' OR e.last_active_hours IS NULL THEN e.weight
            ELSE effective_weight(e.weight,
                                  lambda_edge(coalesce(ta.tier, 'standard'), coalesce(tb.tier, 'standard'), e.reinforcement_count,
                                              (SELECT value FROM mem_config WHERE key = 'established_edge_threshold')),
                                  (SELECT value FROM mem_config WHERE key = 'active_hours') - e.last_active_hours)
       END AS effective_weight,
       CASE WHEN e.pinned OR e.origin = 'agent' OR e.last_active_hours IS NULL THEN NULL
            ELSE max(0, e.last_active_hours
                        + decay_horizon(e.weight,
                                        lambda_edge(coalesce(ta.tier, 'standard'), coalesce(tb.tier, 'standard'), e.reinforcement_count,
                                                    (SELECT value FROM mem_config WHERE key = 'established_edge_threshold')),
                                        (SELECT CASE WHEN d.value = 'auto' THEN p.value ELSE d.value END
                                         FROM mem_config d, mem_config p
                                         WHERE d.key = 'edge_decay_threshold' AND p.key = 'edge_prune_threshold'))
                        - (SELECT value FROM mem_config WHERE key = 'active_hours'))
       END AS hours_left
FROM mem_edges e
LEFT JOIN mem_block_tiers ta ON ta.id = e.from_id
LEFT JOIN mem_block_tiers tb ON tb.id = e.to_id
WHERE typeof(e.weight) IN ('integer', 'real');
