-- The views as steps 5, 7 and 8 made them.
DROP VIEW mem_edges_live;
DROP VIEW mem_edges_decayed;
DROP VIEW mem_facts_scored;
DROP VIEW mem_edges_effective;
DROP VIEW mem_block_tiers;
DROP VIEW mem_clock;

CREATE VIEW mem_clock AS
SELECT (SELECT value FROM mem_config WHERE key = 'active_hours') AS active_hours,
       coalesce((SELECT CAST(value AS INTEGER) FROM mem_config WHERE key = 'wall_clock' AND value != ''),
                CAST(strftime('%s', 'now') AS INTEGER)) AS wall,
       (SELECT value FROM mem_config WHERE key = 'established_edge_threshold') AS established,
       (SELECT CASE WHEN d.value = 'auto' THEN p.value ELSE d.value END
        FROM mem_config d, mem_config p
        WHERE d.key = 'edge_decay_threshold' AND p.key = 'edge_prune_threshold') AS decay_threshold;

CREATE VIEW mem_block_tiers AS
SELECT b.id,
       b.status,
       decay_tier(coalesce((SELECT group_concat(CAST(t.tag AS TEXT), ',') FROM mem_block_tags t
                            WHERE t.block_id = b.id AND NOT CAST(t.tag AS TEXT) GLOB '*[^a-z/]*'), ''),
                  CAST(b.category AS TEXT)) AS tier
FROM mem_blocks b;

CREATE VIEW mem_edges_effective AS
WITH cfg AS (SELECT active_hours AS now, wall, established, decay_threshold FROM mem_clock),
tiered AS (
    SELECT e.*, ta.tier AS tier_from, tb.tier AS tier_to,
           lambda_edge(coalesce(ta.tier, 'standard'), coalesce(tb.tier, 'standard'), e.reinforcement_count, cfg.established) AS lambda,
           cfg.now, cfg.wall, cfg.decay_threshold
    FROM mem_edges e, cfg
    LEFT JOIN mem_block_tiers ta ON ta.id = e.from_id
    LEFT JOIN mem_block_tiers tb ON tb.id = e.to_id
    -- Rows the sweeps skip as invalid (a number that is not a finite
    -- number, a last_observed_at that is no time, pinned not 0 or 1) are
    -- left out here too, so one bad row never fails the view for every
    -- reader.
    WHERE typeof(e.weight) IN ('integer', 'real') AND e.weight >= 0 AND e.weight <= 1.7976931348623157e308
      AND typeof(e.reinforcement_count) IN ('integer', 'real') AND e.reinforcement_count >= 0
      AND e.reinforcement_count <= 1.7976931348623157e308
      AND (e.last_active_hours IS NULL OR (typeof(e.last_active_hours) IN ('integer', 'real')
                                           AND abs(e.last_active_hours) <= 1.7976931348623157e308))
      AND (e.last_observed_at IS NULL OR try_unix_seconds(e.last_observed_at) IS NOT NULL)
      AND typeof(e.pinned) = 'integer' AND e.pinned IN (0, 1)),
modelled AS (
    SELECT t.*,
           coalesce(p.clock, 'active_hours') AS clock,
           coalesce(p.model, 'tiered') AS model,
           CASE WHEN p.clock = 'wall' THEN (t.wall - try_unix_seconds(t.last_observed_at)) / 86400.0
                ELSE t.now - t.last_active_hours END AS elapsed,
           coalesce(p.threshold, t.decay_threshold) AS threshold,
           -- A linear curve dies at weight <= 0, whether its threshold is NULL or 0.
           coalesce(p.model IN ('linear', 'delayed_linear', 'multi_linear') AND coalesce(p.threshold, 0) = 0, 0) AS to_zero,
           policy_curve(p.model, p.params, p.clock) AS curve, p.action
    FROM tiered t LEFT JOIN mem_edge_policies p ON p.relation_type = t.relation_type),
weighed AS (
    SELECT m.*,
           CASE WHEN m.pinned OR m.elapsed IS NULL OR (m.curve IS NULL AND m.origin = 'agent') THEN m.weight
                WHEN m.curve IS NULL THEN effective_weight(m.weight, m.lambda, m.elapsed)
                ELSE curve_weight(m.curve, m.weight, m.elapsed) END AS effective_weight,
           CASE WHEN m.pinned OR m.elapsed IS NULL OR (m.curve IS NULL AND m.origin = 'agent') THEN NULL
                WHEN m.curve IS NULL THEN decay_horizon(m.weight, m.lambda, m.threshold) - max(0, m.elapsed)
                ELSE curve_horizon(m.curve, m.weight, CASE WHEN m.to_zero THEN 0 ELSE m.threshold END) - max(0, m.elapsed)
           END AS time_left
    FROM modelled m)
SELECT from_id, to_id, relation_type, origin, weight, reinforcement_count, pinned, excluded,
       tier_from, tier_to, model, clock,
       CASE WHEN curve IS NULL THEN lambda END AS lambda,
       max(0, elapsed) AS elapsed,
       CASE WHEN clock = 'active_hours' THEN max(0, elapsed) END AS elapsed_hours,
       effective_weight, threshold,
       max(0, time_left) AS time_left,
       CASE WHEN clock = 'active_hours' THEN max(0, time_left) END AS hours_left,
       CASE WHEN pinned OR elapsed IS NULL THEN 'live'
            WHEN to_zero AND effective_weight <= 0 THEN 'decayed'
            WHEN NOT to_zero AND effective_weight < threshold AND (curve IS NOT NULL OR origin IS NOT 'agent') THEN 'decayed'
            ELSE 'live' END AS state
FROM weighed;

CREATE VIEW mem_edges_live AS
SELECT * FROM mem_edges_effective WHERE state = 'live';

CREATE VIEW mem_edges_decayed AS
SELECT * FROM mem_edges_effective WHERE state = 'decayed';

CREATE VIEW mem_facts_scored AS
SELECT s.*,
       CASE WHEN s.status = 'archived' THEN 'archived'
            ELSE lifecycle_action(s.score, s.tier, s.status = 'confirmed') END AS action
FROM (SELECT d.*, tideline_score(d.importance, d.decay_rate, d.days_since_access, d.access_count, d.tier) AS score
      FROM (SELECT f.*, max(0, (c.wall - try_unix_seconds(coalesce(f.last_accessed_at, f.created_at))) / 86400.0) AS days_since_access
            FROM mem_facts f, mem_clock c
            WHERE typeof(f.importance) IN ('integer', 'real') AND f.importance BETWEEN 0 AND 1
              AND typeof(f.decay_rate) IN ('integer', 'real') AND f.decay_rate BETWEEN 0 AND 1.7976931348623157e308
              AND typeof(f.access_count) IN ('integer', 'real') AND f.access_count BETWEEN 0 AND 1.7976931348623157e308
              AND try_unix_seconds(coalesce(f.last_accessed_at, f.created_at)) IS NOT NULL
              AND f.tier IS NOT NULL) AS d) AS s;
