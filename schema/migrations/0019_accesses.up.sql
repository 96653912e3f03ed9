-- The reads memworker keeps for an app whose mapping sets
-- nodes.record_accesses: the change capture on the app's nodes appends
-- the node's key and the value its last_used took (on the nodes' own
-- clock, as the app wrote it) whenever the app moves it forward; a
-- sweep's own reinforcement is not a read. memworker tune learns the
-- tiers' half-lives from them; sweeps expire them with the events
-- (event_retention_days).
CREATE TABLE mem_accesses (
    seq  INTEGER PRIMARY KEY,
    node TEXT NOT NULL,
    at   ANY NOT NULL
);
CREATE INDEX mem_accesses_node ON mem_accesses (node, seq);
