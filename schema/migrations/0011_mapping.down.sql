DROP TABLE mem_mapping;
