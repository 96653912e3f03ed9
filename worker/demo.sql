-- The sample memory graph `memworker demo` loads at active hour 0..480 and
-- sweeps at hour 500. Every phase of the edge curate sweep has work in it.
INSERT INTO mem_blocks (id, category, confidence, reinforcement_count, last_reinforced_hours, content) VALUES
    ('core-values',  'mind',        0.95, 20, 480, 'Be honest about uncertainty.'),
    ('goal-ship',    'knowledge',   0.80,  6, 470, 'Ship the sync engine by Q3.'),
    ('py-async',     'knowledge',   0.70,  9, 460, 'asyncio tasks need a running loop.'),
    ('py-gil',       'knowledge',   0.60,  2, 420, 'The GIL serialises bytecode.'),
    ('db-index',     'knowledge',   0.75,  7, 450, 'Covering indexes avoid table lookups.'),
    ('db-wal',       'knowledge',   0.65,  3, 440, 'WAL lets readers run beside one writer.'),
    ('ds-pandas',    'knowledge',   0.55,  1, 300, 'groupby().agg() takes a dict.'),
    ('ds-plots',     'knowledge',   0.50,  0, 280, 'Use log scales for long tails.'),
    ('obs-standup',  'observation', 0.40,  0,  10, 'Standup moved to 9:30.'),
    ('obs-lunch',    'observation', 0.30,  0,  12, 'Lunch order: noodles.'),
    ('obs-hub',      'observation', 0.50,  1,  15, 'Incident review linked every subsystem.'),
    ('obs-pinned',   'observation', 0.50,  0,  20, 'Deploy runbook location.');
INSERT INTO mem_block_tags (block_id, tag) VALUES
    ('core-values', 'self/constitutional'),
    ('goal-ship', 'self/goal'),
    ('py-async', 'python'), ('py-gil', 'python'), ('db-index', 'databases'), ('db-wal', 'databases');
INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, origin, last_active_hours, pinned, note) VALUES
    ('db-index',   'ds-plots',    0.05,  0, 'similarity', 480, 0, 'never useful: static prune'),
    ('py-async',   'py-gil',      0.60,  3, 'similarity',  95, 0, 'stale for 405 h: temporal decay'),
    ('db-wal',     'py-gil',      0.45,  2, 'similarity', 150, 0, 'stale for 350 h: temporal decay'),
    ('db-index',   'db-wal',      0.70,  4, 'similarity', 460, 0, 'recently co-retrieved: survives'),
    ('db-index',   'py-async',    0.50, 12, 'outcome',    100, 0, 'established (12): decays at a quarter rate'),
    ('goal-ship',  'py-async',    0.85,  0, 'agent',        0, 0, 'agent-asserted: never decays'),
    ('ds-pandas',  'ds-plots',    0.60,  0, 'similarity', NULL, 0, 'no anchor: temporal decay skips it'),
    ('db-wal',     'ds-pandas',   'heavy', 0, 'similarity', 300, 0, 'a bad row: skipped and reported'),
    ('core-values','obs-pinned',  0.90,  0, 'agent',        0, 1, 'pinned: protects its block too'),
    ('obs-standup','py-gil',      0.40,  1, 'similarity',  20, 0, 'goes with its archived block'),
    ('ds-pandas',  'obs-lunch',   0.30,  0, 'similarity',  12, 0, 'goes with its archived block'),
    ('db-index',   'obs-hub',     0.90, 15, 'outcome',    470, 0, 'the hub is a bridge'),
    ('db-wal',     'obs-hub',     0.85, 14, 'outcome',    470, 0, 'the hub is a bridge'),
    ('obs-hub',    'py-async',    0.90, 16, 'outcome',    470, 0, 'the hub is a bridge'),
    ('goal-ship',  'obs-hub',     0.80, 12, 'outcome',    470, 0, 'the hub is a bridge');
UPDATE mem_config SET value = 480 WHERE key = 'active_hours';
