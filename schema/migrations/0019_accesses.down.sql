-- The reads recorded for memworker tune go.
DROP TABLE mem_accesses;
