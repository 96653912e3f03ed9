-- No sweep reads mem_edges by relation_type (policies are joined to the
-- edges a sweep evaluates, not looked up by type), yet every edge a sweep
-- removes also had to leave this index: 12 to 18 % of a first sweep's
-- removals and about a sixth of the file at 1M edges. An app that filters
-- its own queries by relation type makes its own index (docs/schema.md).
DROP INDEX IF EXISTS mem_edges_relation;
