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

-- Relation policies: people and projects on a 90-day half-life of the wall
-- clock (soft exclusion below 0.10, as a relation store would), chatter on
-- a delayed linear curve of active hours that deletes and drops orphans.
INSERT INTO mem_edge_policies (relation_type, model, params, clock, threshold, action, orphans) VALUES
    ('works_on',       'half_life', '{"half_life": "90d"}',             'wall',         0.10, 'exclude', 'keep'),
    ('mentioned_with', 'linear',    '{"rate": 0.01, "hold": "24h"}',    'active_hours', NULL, 'delete',  'delete');
INSERT INTO mem_blocks (id, category, confidence, last_reinforced_hours, content) VALUES
    ('alex',          'knowledge', 0.7, 470, 'Alex, backend lead.'),
    ('project-alpha', 'knowledge', 0.7, 470, 'Project Alpha: the sync engine.'),
    ('project-beta',  'knowledge', 0.6, 470, 'Project Beta: paused in spring.'),
    ('meme-of-day',   'knowledge', 0.3, 470, 'The rubber-duck meme.');
INSERT INTO mem_edges (from_id, to_id, weight, relation_type, origin, last_active_hours, last_observed_at, note) VALUES
    ('alex', 'project-alpha', 1.0, 'works_on', 'observed', 480, CAST(strftime('%s', 'now') AS INTEGER) - 30 * 86400,
     'observed a month ago: 0.79, live'),
    ('alex', 'project-beta',  1.0, 'works_on', 'observed', 480, CAST(strftime('%s', 'now') AS INTEGER) - 400 * 86400,
     'silent for 400 days: 0.046, excluded but kept'),
    ('goal-ship', 'meme-of-day', 1.0, 'mentioned_with', 'observed', 300, NULL,
     'linear: 24 h hold, then 0.01/h: dead at 424 h, its end is orphaned');

-- Facts of several segments, last accessed days ago on the wall clock.
INSERT INTO mem_facts (id, segment, access_count, last_accessed_at, content) VALUES
    ('f-name',    'identity',   3, CAST(strftime('%s', 'now') AS INTEGER) - 400 * 86400, 'The user is called Sam.'),
    ('f-tabs',    'preference', 5, CAST(strftime('%s', 'now') AS INTEGER) -   2 * 86400, 'Prefers tabs over spaces.'),
    ('f-old-lib', 'knowledge',  0, CAST(strftime('%s', 'now') AS INTEGER) - 120 * 86400, 'Used left-pad in 2016.'),
    ('f-meeting', 'context',    0, CAST(strftime('%s', 'now') AS INTEGER) -  10 * 86400, 'Meeting moved to Thursday.'),
    ('f-typo',    'context',    0, CAST(strftime('%s', 'now') AS INTEGER) -  30 * 86400, 'Typo in the March report.'),
    ('f-parking', 'context',    0, CAST(strftime('%s', 'now') AS INTEGER) -  60 * 86400, 'Parked on level 3.');
INSERT INTO mem_facts (id, segment, status, access_count, last_accessed_at, content) VALUES
    ('f-rule', 'correction', 'confirmed', 1, CAST(strftime('%s', 'now') AS INTEGER) - 365 * 86400, 'Never push on Fridays.');
