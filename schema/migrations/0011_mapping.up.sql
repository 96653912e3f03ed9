-- The mapping: which tables of the database play the memory's roles (nodes,
-- edges, facts) and which columns play each part, declared with memworker
-- map use PRESET or map load FILE (docs/mapping.md). One row, the mapping
-- as JSON; none means the preset mem, memworker's own mem_ tables. It lives
-- in the database, so every worker, a fleet and an rqlite cluster read the
-- same one.
CREATE TABLE mem_mapping (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    spec        TEXT NOT NULL CHECK (json_valid(spec)),
    source      TEXT NOT NULL,
    declared_at INTEGER NOT NULL
);
