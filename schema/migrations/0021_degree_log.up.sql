-- The strength a sweep's removals take off their ends' degrees, logged as
-- they go and folded into mem_block_state once the sweep's removals are
-- done. Each of a sweep's bounded transactions used to rewrite most of
-- mem_block_state's leaves (a removed edge's ends are anywhere in it);
-- this table takes two rows per removal at its end instead, and the fold
-- writes each changed leaf once. A block's degree is its state's less its
-- rows here: there are none but while a sweep applies its plan, or after
-- one was cut off there (the next sweep folds them before it reads a
-- degree). Strengths are fixed point, so the fold's sums are exact and a
-- folded degree is the one a removal at a time leaves, to the bit.
CREATE TABLE mem_degree_log (
    id       TEXT NOT NULL, -- a block, an end of a removed edge
    strength REAL NOT NULL  -- the strength its degree loses
);
