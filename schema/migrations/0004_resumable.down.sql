DROP TABLE IF EXISTS mem_sweep_plans;
ALTER TABLE mem_sweeps DROP COLUMN plan;
