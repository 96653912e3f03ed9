-- The mapping: which tables of the database play the memory's roles (nodes,
-- edges, facts) and which columns play each part, declared with memworker
-- map use PRESET or map load FILE (docs/mapping.md). One row, the mapping
-- as JSON; none means the preset mem, memworker's own mem_ tables. It lives
-- in the database, so every worker, a fleet and an rqlite cluster read the
-- same one. No json_valid() CHECK: with trusted_schema off (the sqlite3
-- shell's default) SQLite refuses a schema that calls a function not
-- innocuous, and memworker checks the JSON on every read.
CREATE TABLE mem_mapping (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    spec        TEXT NOT NULL,
    source      TEXT NOT NULL,
    declared_at INTEGER NOT NULL
);
