-- The strengths logged and not yet folded leave the degrees first.
UPDATE mem_block_state SET degree = degree - l.strength
FROM (SELECT id, sum(strength) AS strength FROM mem_degree_log GROUP BY id) AS l
WHERE mem_block_state.id = l.id;
DROP TABLE mem_degree_log;
