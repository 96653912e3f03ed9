CREATE INDEX IF NOT EXISTS "mem_archive_mem_edges_subject" ON "mem_archive_mem_edges" (mem_subject);
CREATE INDEX IF NOT EXISTS "mem_archive_mem_blocks_subject" ON "mem_archive_mem_blocks" (mem_subject);
CREATE INDEX IF NOT EXISTS "mem_archive_mem_facts_subject" ON "mem_archive_mem_facts" (mem_subject);
