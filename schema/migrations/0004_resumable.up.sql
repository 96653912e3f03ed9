-- Resumable sweeps: a sweep saves its plan before applying it, so the next
-- sweep at the same clock after a crash or kill finishes that very plan
-- (and so converges to the uninterrupted result) instead of re-planning on
-- a half-swept graph.
ALTER TABLE mem_sweeps ADD COLUMN plan TEXT; -- JSON: the planned report and queue marks, once every row is saved

CREATE TABLE mem_sweep_plans (
    sweep_id INTEGER NOT NULL,
    step     TEXT NOT NULL,     -- plan_blocks, plan_edges, plan_flags, plan_facts, plan_reinforce
    seq      INTEGER NOT NULL,
    row      TEXT NOT NULL,     -- the planned row as JSON
    PRIMARY KEY (sweep_id, step, seq)
) WITHOUT ROWID;
