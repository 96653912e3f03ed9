CREATE INDEX IF NOT EXISTS mem_edges_relation ON mem_edges (relation_type);
