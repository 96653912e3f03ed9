-- The edges due soon: a copy of the due times in mem_edge_due that fall at
-- or before a horizon (mem_config's due_soon: an active hour and a unix
-- time, some way past the clock of the sweep that built the list). An
-- incremental sweep whose clock the horizon covers finds the edges due
-- now here, in a few pages, instead of in a pass over every due row; one
-- past it builds the list again from that pass. Every sweep that writes a
-- due row keeps the list: a refreshed edge's entry follows its due row, a
-- removed edge's goes. A full sweep forgets the list and its horizon before
-- it rewrites the due rows, and builds them again once they are written.
-- With no horizon the list is not read.
CREATE TABLE mem_edge_soon (
    from_id   TEXT NOT NULL,
    to_id     TEXT NOT NULL,
    due_hours REAL, -- as in mem_edge_due
    due_wall  REAL, -- as in mem_edge_due
    PRIMARY KEY (from_id, to_id)
) WITHOUT ROWID;
