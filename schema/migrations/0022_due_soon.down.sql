DROP TABLE mem_edge_soon;
DELETE FROM mem_config WHERE key = 'due_soon';
