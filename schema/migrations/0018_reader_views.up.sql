-- The readers' views leave the file's schema: SQLite re-checks every view
-- on ALTER TABLE, so a stored view that calls a memdecay function broke an
-- app's own migrations on every connection without the extension. The
-- extension serves each view under its name (an eponymous virtual table)
-- from its query here, on every connection that loads it. Generated from
-- worker/views.go: go test ./worker -run TestSchemaViewsAreViewsGo
-- -update-views.
DROP VIEW IF EXISTS mem_edges_live;
DROP VIEW IF EXISTS mem_edges_decayed;
DROP VIEW IF EXISTS mem_facts_scored;
DROP VIEW IF EXISTS mem_edges_effective;
DROP VIEW IF EXISTS mem_block_tiers;
DROP VIEW IF EXISTS mem_clock;

CREATE TABLE mem_reader_views (
    name TEXT PRIMARY KEY,
    sql  TEXT NOT NULL
);

INSERT INTO mem_reader_views (name, sql) VALUES ('mem_clock',
'SELECT (SELECT value FROM mem_config WHERE key = ''active_hours'') AS active_hours,
       coalesce((SELECT CAST(value AS INTEGER) FROM mem_config WHERE key = ''wall_clock'' AND value != ''''),
                CAST(strftime(''%s'', ''now'') AS INTEGER)) AS wall,
       (SELECT value FROM mem_config WHERE key = ''established_edge_threshold'') AS established,
       (SELECT CASE WHEN d.value = ''auto'' THEN p.value ELSE d.value END
        FROM mem_config d, mem_config p
        WHERE d.key = ''edge_decay_threshold'' AND p.key = ''edge_prune_threshold'') AS decay_threshold');

INSERT INTO mem_reader_views (name, sql) VALUES ('mem_block_tiers',
'SELECT b.id,
       b.status,
       decay_tier(coalesce((SELECT group_concat(CAST(t.tag AS TEXT), '','') FROM mem_block_tags t
                            WHERE t.block_id = b.id AND NOT CAST(t.tag AS TEXT) GLOB ''*[^a-z/]*''), ''''),
                  CAST(b.category AS TEXT)) AS tier
FROM mem_blocks b');

INSERT INTO mem_reader_views (name, sql) VALUES ('mem_edges_effective',
'WITH mem_clock AS (
SELECT (SELECT value FROM mem_config WHERE key = ''active_hours'') AS active_hours,
       coalesce((SELECT CAST(value AS INTEGER) FROM mem_config WHERE key = ''wall_clock'' AND value != ''''),
                CAST(strftime(''%s'', ''now'') AS INTEGER)) AS wall,
       (SELECT value FROM mem_config WHERE key = ''established_edge_threshold'') AS established,
       (SELECT CASE WHEN d.value = ''auto'' THEN p.value ELSE d.value END
        FROM mem_config d, mem_config p
        WHERE d.key = ''edge_decay_threshold'' AND p.key = ''edge_prune_threshold'') AS decay_threshold
),
mem_block_tiers AS (
SELECT b.id,
       b.status,
       decay_tier(coalesce((SELECT group_concat(CAST(t.tag AS TEXT), '','') FROM mem_block_tags t
                            WHERE t.block_id = b.id AND NOT CAST(t.tag AS TEXT) GLOB ''*[^a-z/]*''), ''''),
                  CAST(b.category AS TEXT)) AS tier
FROM mem_blocks b
),
mem_edges_effective AS (
WITH cfg AS (SELECT active_hours AS now, wall, established, decay_threshold FROM mem_clock),
tiered AS (
    SELECT e.*, ta.tier AS tier_from, tb.tier AS tier_to,
           lambda_edge(coalesce(ta.tier, ''standard''), coalesce(tb.tier, ''standard''), e.reinforcement_count, cfg.established) AS lambda,
           cfg.now, cfg.wall, cfg.decay_threshold
    FROM mem_edges e, cfg
    LEFT JOIN mem_block_tiers ta ON ta.id = e.from_id
    LEFT JOIN mem_block_tiers tb ON tb.id = e.to_id
    WHERE (CASE WHEN (+e.from_id < x'''' AND +e.to_id < x'''' AND +e.relation_type < x''''
	AND +e.weight >= 0 AND +e.weight <= 1.7976931348623157e308
	AND +e.reinforcement_count >= 0 AND +e.reinforcement_count <= 1.7976931348623157e308
	AND (e.last_active_hours IS NULL OR +e.last_active_hours BETWEEN -1.7976931348623157e308 AND 1.7976931348623157e308)
	AND (e.last_observed_at IS NULL OR +e.last_observed_at BETWEEN -1.7976931348623157e308 AND 1.7976931348623157e308)
	AND typeof(e.pinned) = ''integer'' AND +e.pinned IN (0, 1)) THEN 1 ELSE ((CASE WHEN typeof(e.from_id) = ''blob'' THEN ''from_id is blob '' || quote(e.from_id)
	WHEN typeof(e.to_id) = ''blob'' THEN ''to_id is blob '' || quote(e.to_id)
	WHEN typeof(e.relation_type) = ''blob'' THEN ''relation_type is blob '' || quote(e.relation_type)
	WHEN typeof(e.weight) NOT IN (''integer'', ''real'') THEN ''weight is '' || typeof(e.weight)
	WHEN e.weight < 0 THEN ''weight is negative''
	WHEN e.weight > 1.7976931348623157e308 THEN ''weight is not finite''
	WHEN typeof(e.reinforcement_count) NOT IN (''integer'', ''real'') THEN ''reinforcement_count is '' || typeof(e.reinforcement_count)
	WHEN e.reinforcement_count < 0 THEN ''reinforcement_count is negative''
	WHEN e.reinforcement_count > 1.7976931348623157e308 THEN ''reinforcement_count is not finite''
	WHEN e.last_active_hours IS NOT NULL AND typeof(e.last_active_hours) NOT IN (''integer'', ''real'')
	    THEN ''last_active_hours is '' || typeof(e.last_active_hours)
	WHEN NOT (e.last_active_hours BETWEEN -1.7976931348623157e308 AND 1.7976931348623157e308) THEN ''last_active_hours is not finite''
	WHEN e.last_observed_at IS NOT NULL AND (CASE WHEN typeof(e.last_observed_at) IN (''integer'', ''real'') THEN NOT (e.last_observed_at BETWEEN -1.7976931348623157e308 AND 1.7976931348623157e308)
	    ELSE try_unix_seconds(e.last_observed_at) IS NULL END)
	    THEN CASE typeof(e.last_observed_at)
	    WHEN ''text'' THEN ''last_observed_at is text '' || quote(substr(e.last_observed_at, 1, 40))
	        || CASE WHEN length(e.last_observed_at) > 40 THEN ''…'' ELSE '''' END || '', not unix seconds or an ISO-8601 time''
	    WHEN ''real'' THEN ''last_observed_at is not finite''
	    ELSE ''last_observed_at is '' || typeof(e.last_observed_at) END
	WHEN typeof(e.pinned) != ''integer'' OR e.pinned NOT IN (0, 1) THEN ''pinned is '' || quote(e.pinned) || '' (want 0 or 1)''
END) IS NULL) END)),
modelled AS (
    SELECT t.*,
           coalesce(p.clock, ''active_hours'') AS clock,
           coalesce(p.model, ''tiered'') AS model,
           CASE WHEN p.clock = ''wall'' THEN (t.wall - (CASE WHEN typeof(t.last_observed_at) IN (''integer'', ''real'') THEN t.last_observed_at ELSE try_unix_seconds(t.last_observed_at) END)) / 86400.0
                ELSE t.now - t.last_active_hours END AS elapsed,
           coalesce(p.threshold, t.decay_threshold) AS threshold,
           -- These curves die at weight <= 0, whether their threshold is NULL or 0.
           coalesce(p.model IN (''linear'', ''delayed_linear'', ''multi_linear'') AND coalesce(p.threshold, 0) = 0, 0) AS to_zero,
           policy_curve(p.model, p.params, p.clock) AS curve, p.action
    FROM tiered t LEFT JOIN mem_edge_policies p ON p.relation_type = t.relation_type),
weighed AS (
    SELECT m.*,
           CASE WHEN m.pinned OR m.elapsed IS NULL OR (m.curve IS NULL AND m.origin = ''agent'') THEN m.weight
                WHEN m.curve IS NULL THEN effective_weight(m.weight, m.lambda, m.elapsed)
                ELSE curve_weight(m.curve, m.weight, m.elapsed) END AS effective_weight,
           CASE WHEN m.pinned OR m.elapsed IS NULL OR (m.curve IS NULL AND m.origin = ''agent'') THEN NULL
                WHEN m.curve IS NULL THEN decay_horizon(m.weight, m.lambda, m.threshold) - max(0, m.elapsed)
                ELSE curve_horizon(m.curve, m.weight, CASE WHEN m.to_zero THEN 0 ELSE m.threshold END) - max(0, m.elapsed)
           END AS time_left
    FROM modelled m)
SELECT from_id, to_id, from_id AS end_a, to_id AS end_b, from_id AS key_raw, to_id AS key_raw2, relation_type, origin, weight, reinforcement_count, pinned, excluded,
       tier_from, tier_to, model, clock,
       CASE WHEN curve IS NULL THEN lambda END AS lambda,
       max(0, elapsed) AS elapsed,
       CASE WHEN clock = ''active_hours'' THEN max(0, elapsed) END AS elapsed_hours,
       effective_weight, threshold,
       max(0, time_left) AS time_left,
       CASE WHEN clock = ''active_hours'' THEN max(0, time_left) END AS hours_left,
       CASE WHEN pinned OR elapsed IS NULL THEN ''live''
            WHEN to_zero AND effective_weight <= 0 THEN ''decayed''
            WHEN NOT to_zero AND effective_weight < threshold AND (curve IS NOT NULL OR origin IS NOT ''agent'') THEN ''decayed''
            ELSE ''live'' END AS state
FROM weighed
)
SELECT * FROM mem_edges_effective');

INSERT INTO mem_reader_views (name, sql) VALUES ('mem_edges_live',
'WITH mem_clock AS (
SELECT (SELECT value FROM mem_config WHERE key = ''active_hours'') AS active_hours,
       coalesce((SELECT CAST(value AS INTEGER) FROM mem_config WHERE key = ''wall_clock'' AND value != ''''),
                CAST(strftime(''%s'', ''now'') AS INTEGER)) AS wall,
       (SELECT value FROM mem_config WHERE key = ''established_edge_threshold'') AS established,
       (SELECT CASE WHEN d.value = ''auto'' THEN p.value ELSE d.value END
        FROM mem_config d, mem_config p
        WHERE d.key = ''edge_decay_threshold'' AND p.key = ''edge_prune_threshold'') AS decay_threshold
),
mem_block_tiers AS (
SELECT b.id,
       b.status,
       decay_tier(coalesce((SELECT group_concat(CAST(t.tag AS TEXT), '','') FROM mem_block_tags t
                            WHERE t.block_id = b.id AND NOT CAST(t.tag AS TEXT) GLOB ''*[^a-z/]*''), ''''),
                  CAST(b.category AS TEXT)) AS tier
FROM mem_blocks b
),
mem_edges_effective AS (
WITH cfg AS (SELECT active_hours AS now, wall, established, decay_threshold FROM mem_clock),
tiered AS (
    SELECT e.*, ta.tier AS tier_from, tb.tier AS tier_to,
           lambda_edge(coalesce(ta.tier, ''standard''), coalesce(tb.tier, ''standard''), e.reinforcement_count, cfg.established) AS lambda,
           cfg.now, cfg.wall, cfg.decay_threshold
    FROM mem_edges e, cfg
    LEFT JOIN mem_block_tiers ta ON ta.id = e.from_id
    LEFT JOIN mem_block_tiers tb ON tb.id = e.to_id
    WHERE (CASE WHEN (+e.from_id < x'''' AND +e.to_id < x'''' AND +e.relation_type < x''''
	AND +e.weight >= 0 AND +e.weight <= 1.7976931348623157e308
	AND +e.reinforcement_count >= 0 AND +e.reinforcement_count <= 1.7976931348623157e308
	AND (e.last_active_hours IS NULL OR +e.last_active_hours BETWEEN -1.7976931348623157e308 AND 1.7976931348623157e308)
	AND (e.last_observed_at IS NULL OR +e.last_observed_at BETWEEN -1.7976931348623157e308 AND 1.7976931348623157e308)
	AND typeof(e.pinned) = ''integer'' AND +e.pinned IN (0, 1)) THEN 1 ELSE ((CASE WHEN typeof(e.from_id) = ''blob'' THEN ''from_id is blob '' || quote(e.from_id)
	WHEN typeof(e.to_id) = ''blob'' THEN ''to_id is blob '' || quote(e.to_id)
	WHEN typeof(e.relation_type) = ''blob'' THEN ''relation_type is blob '' || quote(e.relation_type)
	WHEN typeof(e.weight) NOT IN (''integer'', ''real'') THEN ''weight is '' || typeof(e.weight)
	WHEN e.weight < 0 THEN ''weight is negative''
	WHEN e.weight > 1.7976931348623157e308 THEN ''weight is not finite''
	WHEN typeof(e.reinforcement_count) NOT IN (''integer'', ''real'') THEN ''reinforcement_count is '' || typeof(e.reinforcement_count)
	WHEN e.reinforcement_count < 0 THEN ''reinforcement_count is negative''
	WHEN e.reinforcement_count > 1.7976931348623157e308 THEN ''reinforcement_count is not finite''
	WHEN e.last_active_hours IS NOT NULL AND typeof(e.last_active_hours) NOT IN (''integer'', ''real'')
	    THEN ''last_active_hours is '' || typeof(e.last_active_hours)
	WHEN NOT (e.last_active_hours BETWEEN -1.7976931348623157e308 AND 1.7976931348623157e308) THEN ''last_active_hours is not finite''
	WHEN e.last_observed_at IS NOT NULL AND (CASE WHEN typeof(e.last_observed_at) IN (''integer'', ''real'') THEN NOT (e.last_observed_at BETWEEN -1.7976931348623157e308 AND 1.7976931348623157e308)
	    ELSE try_unix_seconds(e.last_observed_at) IS NULL END)
	    THEN CASE typeof(e.last_observed_at)
	    WHEN ''text'' THEN ''last_observed_at is text '' || quote(substr(e.last_observed_at, 1, 40))
	        || CASE WHEN length(e.last_observed_at) > 40 THEN ''…'' ELSE '''' END || '', not unix seconds or an ISO-8601 time''
	    WHEN ''real'' THEN ''last_observed_at is not finite''
	    ELSE ''last_observed_at is '' || typeof(e.last_observed_at) END
	WHEN typeof(e.pinned) != ''integer'' OR e.pinned NOT IN (0, 1) THEN ''pinned is '' || quote(e.pinned) || '' (want 0 or 1)''
END) IS NULL) END)),
modelled AS (
    SELECT t.*,
           coalesce(p.clock, ''active_hours'') AS clock,
           coalesce(p.model, ''tiered'') AS model,
           CASE WHEN p.clock = ''wall'' THEN (t.wall - (CASE WHEN typeof(t.last_observed_at) IN (''integer'', ''real'') THEN t.last_observed_at ELSE try_unix_seconds(t.last_observed_at) END)) / 86400.0
                ELSE t.now - t.last_active_hours END AS elapsed,
           coalesce(p.threshold, t.decay_threshold) AS threshold,
           -- These curves die at weight <= 0, whether their threshold is NULL or 0.
           coalesce(p.model IN (''linear'', ''delayed_linear'', ''multi_linear'') AND coalesce(p.threshold, 0) = 0, 0) AS to_zero,
           policy_curve(p.model, p.params, p.clock) AS curve, p.action
    FROM tiered t LEFT JOIN mem_edge_policies p ON p.relation_type = t.relation_type),
weighed AS (
    SELECT m.*,
           CASE WHEN m.pinned OR m.elapsed IS NULL OR (m.curve IS NULL AND m.origin = ''agent'') THEN m.weight
                WHEN m.curve IS NULL THEN effective_weight(m.weight, m.lambda, m.elapsed)
                ELSE curve_weight(m.curve, m.weight, m.elapsed) END AS effective_weight,
           CASE WHEN m.pinned OR m.elapsed IS NULL OR (m.curve IS NULL AND m.origin = ''agent'') THEN NULL
                WHEN m.curve IS NULL THEN decay_horizon(m.weight, m.lambda, m.threshold) - max(0, m.elapsed)
                ELSE curve_horizon(m.curve, m.weight, CASE WHEN m.to_zero THEN 0 ELSE m.threshold END) - max(0, m.elapsed)
           END AS time_left
    FROM modelled m)
SELECT from_id, to_id, from_id AS end_a, to_id AS end_b, from_id AS key_raw, to_id AS key_raw2, relation_type, origin, weight, reinforcement_count, pinned, excluded,
       tier_from, tier_to, model, clock,
       CASE WHEN curve IS NULL THEN lambda END AS lambda,
       max(0, elapsed) AS elapsed,
       CASE WHEN clock = ''active_hours'' THEN max(0, elapsed) END AS elapsed_hours,
       effective_weight, threshold,
       max(0, time_left) AS time_left,
       CASE WHEN clock = ''active_hours'' THEN max(0, time_left) END AS hours_left,
       CASE WHEN pinned OR elapsed IS NULL THEN ''live''
            WHEN to_zero AND effective_weight <= 0 THEN ''decayed''
            WHEN NOT to_zero AND effective_weight < threshold AND (curve IS NOT NULL OR origin IS NOT ''agent'') THEN ''decayed''
            ELSE ''live'' END AS state
FROM weighed
)
SELECT * FROM mem_edges_effective WHERE state = ''live''');

INSERT INTO mem_reader_views (name, sql) VALUES ('mem_edges_decayed',
'WITH mem_clock AS (
SELECT (SELECT value FROM mem_config WHERE key = ''active_hours'') AS active_hours,
       coalesce((SELECT CAST(value AS INTEGER) FROM mem_config WHERE key = ''wall_clock'' AND value != ''''),
                CAST(strftime(''%s'', ''now'') AS INTEGER)) AS wall,
       (SELECT value FROM mem_config WHERE key = ''established_edge_threshold'') AS established,
       (SELECT CASE WHEN d.value = ''auto'' THEN p.value ELSE d.value END
        FROM mem_config d, mem_config p
        WHERE d.key = ''edge_decay_threshold'' AND p.key = ''edge_prune_threshold'') AS decay_threshold
),
mem_block_tiers AS (
SELECT b.id,
       b.status,
       decay_tier(coalesce((SELECT group_concat(CAST(t.tag AS TEXT), '','') FROM mem_block_tags t
                            WHERE t.block_id = b.id AND NOT CAST(t.tag AS TEXT) GLOB ''*[^a-z/]*''), ''''),
                  CAST(b.category AS TEXT)) AS tier
FROM mem_blocks b
),
mem_edges_effective AS (
WITH cfg AS (SELECT active_hours AS now, wall, established, decay_threshold FROM mem_clock),
tiered AS (
    SELECT e.*, ta.tier AS tier_from, tb.tier AS tier_to,
           lambda_edge(coalesce(ta.tier, ''standard''), coalesce(tb.tier, ''standard''), e.reinforcement_count, cfg.established) AS lambda,
           cfg.now, cfg.wall, cfg.decay_threshold
    FROM mem_edges e, cfg
    LEFT JOIN mem_block_tiers ta ON ta.id = e.from_id
    LEFT JOIN mem_block_tiers tb ON tb.id = e.to_id
    WHERE (CASE WHEN (+e.from_id < x'''' AND +e.to_id < x'''' AND +e.relation_type < x''''
	AND +e.weight >= 0 AND +e.weight <= 1.7976931348623157e308
	AND +e.reinforcement_count >= 0 AND +e.reinforcement_count <= 1.7976931348623157e308
	AND (e.last_active_hours IS NULL OR +e.last_active_hours BETWEEN -1.7976931348623157e308 AND 1.7976931348623157e308)
	AND (e.last_observed_at IS NULL OR +e.last_observed_at BETWEEN -1.7976931348623157e308 AND 1.7976931348623157e308)
	AND typeof(e.pinned) = ''integer'' AND +e.pinned IN (0, 1)) THEN 1 ELSE ((CASE WHEN typeof(e.from_id) = ''blob'' THEN ''from_id is blob '' || quote(e.from_id)
	WHEN typeof(e.to_id) = ''blob'' THEN ''to_id is blob '' || quote(e.to_id)
	WHEN typeof(e.relation_type) = ''blob'' THEN ''relation_type is blob '' || quote(e.relation_type)
	WHEN typeof(e.weight) NOT IN (''integer'', ''real'') THEN ''weight is '' || typeof(e.weight)
	WHEN e.weight < 0 THEN ''weight is negative''
	WHEN e.weight > 1.7976931348623157e308 THEN ''weight is not finite''
	WHEN typeof(e.reinforcement_count) NOT IN (''integer'', ''real'') THEN ''reinforcement_count is '' || typeof(e.reinforcement_count)
	WHEN e.reinforcement_count < 0 THEN ''reinforcement_count is negative''
	WHEN e.reinforcement_count > 1.7976931348623157e308 THEN ''reinforcement_count is not finite''
	WHEN e.last_active_hours IS NOT NULL AND typeof(e.last_active_hours) NOT IN (''integer'', ''real'')
	    THEN ''last_active_hours is '' || typeof(e.last_active_hours)
	WHEN NOT (e.last_active_hours BETWEEN -1.7976931348623157e308 AND 1.7976931348623157e308) THEN ''last_active_hours is not finite''
	WHEN e.last_observed_at IS NOT NULL AND (CASE WHEN typeof(e.last_observed_at) IN (''integer'', ''real'') THEN NOT (e.last_observed_at BETWEEN -1.7976931348623157e308 AND 1.7976931348623157e308)
	    ELSE try_unix_seconds(e.last_observed_at) IS NULL END)
	    THEN CASE typeof(e.last_observed_at)
	    WHEN ''text'' THEN ''last_observed_at is text '' || quote(substr(e.last_observed_at, 1, 40))
	        || CASE WHEN length(e.last_observed_at) > 40 THEN ''…'' ELSE '''' END || '', not unix seconds or an ISO-8601 time''
	    WHEN ''real'' THEN ''last_observed_at is not finite''
	    ELSE ''last_observed_at is '' || typeof(e.last_observed_at) END
	WHEN typeof(e.pinned) != ''integer'' OR e.pinned NOT IN (0, 1) THEN ''pinned is '' || quote(e.pinned) || '' (want 0 or 1)''
END) IS NULL) END)),
modelled AS (
    SELECT t.*,
           coalesce(p.clock, ''active_hours'') AS clock,
           coalesce(p.model, ''tiered'') AS model,
           CASE WHEN p.clock = ''wall'' THEN (t.wall - (CASE WHEN typeof(t.last_observed_at) IN (''integer'', ''real'') THEN t.last_observed_at ELSE try_unix_seconds(t.last_observed_at) END)) / 86400.0
                ELSE t.now - t.last_active_hours END AS elapsed,
           coalesce(p.threshold, t.decay_threshold) AS threshold,
           -- These curves die at weight <= 0, whether their threshold is NULL or 0.
           coalesce(p.model IN (''linear'', ''delayed_linear'', ''multi_linear'') AND coalesce(p.threshold, 0) = 0, 0) AS to_zero,
           policy_curve(p.model, p.params, p.clock) AS curve, p.action
    FROM tiered t LEFT JOIN mem_edge_policies p ON p.relation_type = t.relation_type),
weighed AS (
    SELECT m.*,
           CASE WHEN m.pinned OR m.elapsed IS NULL OR (m.curve IS NULL AND m.origin = ''agent'') THEN m.weight
                WHEN m.curve IS NULL THEN effective_weight(m.weight, m.lambda, m.elapsed)
                ELSE curve_weight(m.curve, m.weight, m.elapsed) END AS effective_weight,
           CASE WHEN m.pinned OR m.elapsed IS NULL OR (m.curve IS NULL AND m.origin = ''agent'') THEN NULL
                WHEN m.curve IS NULL THEN decay_horizon(m.weight, m.lambda, m.threshold) - max(0, m.elapsed)
                ELSE curve_horizon(m.curve, m.weight, CASE WHEN m.to_zero THEN 0 ELSE m.threshold END) - max(0, m.elapsed)
           END AS time_left
    FROM modelled m)
SELECT from_id, to_id, from_id AS end_a, to_id AS end_b, from_id AS key_raw, to_id AS key_raw2, relation_type, origin, weight, reinforcement_count, pinned, excluded,
       tier_from, tier_to, model, clock,
       CASE WHEN curve IS NULL THEN lambda END AS lambda,
       max(0, elapsed) AS elapsed,
       CASE WHEN clock = ''active_hours'' THEN max(0, elapsed) END AS elapsed_hours,
       effective_weight, threshold,
       max(0, time_left) AS time_left,
       CASE WHEN clock = ''active_hours'' THEN max(0, time_left) END AS hours_left,
       CASE WHEN pinned OR elapsed IS NULL THEN ''live''
            WHEN to_zero AND effective_weight <= 0 THEN ''decayed''
            WHEN NOT to_zero AND effective_weight < threshold AND (curve IS NOT NULL OR origin IS NOT ''agent'') THEN ''decayed''
            ELSE ''live'' END AS state
FROM weighed
)
SELECT * FROM mem_edges_effective WHERE state = ''decayed''');

INSERT INTO mem_reader_views (name, sql) VALUES ('mem_facts_scored',
'WITH mem_clock AS (
SELECT (SELECT value FROM mem_config WHERE key = ''active_hours'') AS active_hours,
       coalesce((SELECT CAST(value AS INTEGER) FROM mem_config WHERE key = ''wall_clock'' AND value != ''''),
                CAST(strftime(''%s'', ''now'') AS INTEGER)) AS wall,
       (SELECT value FROM mem_config WHERE key = ''established_edge_threshold'') AS established,
       (SELECT CASE WHEN d.value = ''auto'' THEN p.value ELSE d.value END
        FROM mem_config d, mem_config p
        WHERE d.key = ''edge_decay_threshold'' AND p.key = ''edge_prune_threshold'') AS decay_threshold
)
SELECT s.*,
       CASE WHEN s.status = ''archived'' THEN ''archived''
            ELSE lifecycle_action(s.score, s.tier, s.status = ''confirmed'') END AS action
FROM (SELECT d.*, tideline_score(d.importance, d.decay_rate, d.days_since_access, d.access_count, d.tier) AS score
      FROM (SELECT f.id, f.segment, f.tier, f.importance, f.decay_rate, f.access_count, f.last_accessed_at, f.status, f.content, f.created_at, max(0, (c.wall - (CASE WHEN typeof(coalesce(f.last_accessed_at, f.created_at)) IN (''integer'', ''real'') THEN coalesce(f.last_accessed_at, f.created_at) ELSE try_unix_seconds(coalesce(f.last_accessed_at, f.created_at)) END)) / 86400.0) AS days_since_access
            FROM main.mem_facts f, mem_clock c
            WHERE (CASE
	WHEN typeof(f.id) = ''blob'' THEN ''id is blob '' || quote(f.id)
	WHEN f.tier IS NULL THEN ''tier is NULL (unknown segment '' || quote(f.segment) || '')''
	WHEN typeof(f.importance) NOT IN (''integer'', ''real'') OR f.importance < 0 OR f.importance > 1
	    THEN ''importance is '' || typeof(f.importance) || '' '' || quote(f.importance)
	WHEN typeof(f.decay_rate) NOT IN (''integer'', ''real'') OR f.decay_rate < 0 THEN ''decay_rate is '' || quote(f.decay_rate)
	WHEN f.decay_rate > 1.7976931348623157e308 THEN ''decay_rate is not finite''
	WHEN typeof(f.access_count) NOT IN (''integer'', ''real'') OR f.access_count < 0 THEN ''access_count is '' || quote(f.access_count)
	WHEN f.access_count > 1.7976931348623157e308 THEN ''access_count is not finite''
	WHEN f.last_accessed_at IS NOT NULL AND (CASE WHEN typeof(f.last_accessed_at) IN (''integer'', ''real'') THEN NOT (f.last_accessed_at BETWEEN -1.7976931348623157e308 AND 1.7976931348623157e308)
	    ELSE try_unix_seconds(f.last_accessed_at) IS NULL END)
	    THEN CASE typeof(f.last_accessed_at)
	    WHEN ''text'' THEN ''last_accessed_at is text '' || quote(substr(f.last_accessed_at, 1, 40))
	        || CASE WHEN length(f.last_accessed_at) > 40 THEN ''…'' ELSE '''' END || '', not unix seconds or an ISO-8601 time''
	    WHEN ''real'' THEN ''last_accessed_at is not finite''
	    ELSE ''last_accessed_at is '' || typeof(f.last_accessed_at) END
	WHEN f.last_accessed_at IS NULL AND (CASE WHEN typeof(f.created_at) IN (''integer'', ''real'') THEN NOT (f.created_at BETWEEN -1.7976931348623157e308 AND 1.7976931348623157e308)
	    ELSE try_unix_seconds(f.created_at) IS NULL END)
	    THEN CASE typeof(f.created_at)
	    WHEN ''text'' THEN ''created_at is text '' || quote(substr(f.created_at, 1, 40))
	        || CASE WHEN length(f.created_at) > 40 THEN ''…'' ELSE '''' END || '', not unix seconds or an ISO-8601 time''
	    WHEN ''real'' THEN ''created_at is not finite''
	    ELSE ''created_at is '' || typeof(f.created_at) END
END) IS NULL) AS d) AS s');
