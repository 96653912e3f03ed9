-- No index of an archive's subjects. Each removal a sweep makes wrote a
-- random leaf of this index (nearly one in six of its random pages) and it
-- grew with every row the archive keeps (11 MB of a 251 MB file after a
-- first sweep at 1M edges); only a restore looked a subject up in it. An
-- archive is written in the order of its event ids, so a restore reads it
-- backwards from the newest row and stops at the subject's last removal,
-- and the sweep's own corrections read the rows of its chunk, at the end
-- of the archive. The archives a mapping made are listed in mem_archives:
-- memworker migrate drops their index too (schema/run.go).
DROP INDEX IF EXISTS "mem_archive_mem_edges_subject";
DROP INDEX IF EXISTS "mem_archive_mem_blocks_subject";
DROP INDEX IF EXISTS "mem_archive_mem_facts_subject";
