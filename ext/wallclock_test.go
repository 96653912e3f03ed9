package main

import (
	"strings"
	"testing"
)

// The wall-clock functions join the tables the shell and Python run.
func init() {
	everyFunction = append(everyFunction,
		exprCase{`unix_seconds('2026-01-05T12:00:00.25+02:00')`, 1767607200.25},
		exprCase{`unix_seconds('2026-01-05 10:00:00')`, 1767607200.0},
		exprCase{`unix_seconds('1767607200')`, 1767607200.0},
		exprCase{`unix_seconds(NULL)`, nil},
		exprCase{`try_unix_seconds('2026-01-05')`, 1767571200.0},
		exprCase{`try_unix_seconds(1767607200)`, 1767607200.0},
		exprCase{`try_unix_seconds('next week')`, nil},
		exprCase{`try_unix_seconds(x'00')`, nil},
	)
	someErrors = append(someErrors,
		errorCase{`unix_seconds('next week')`, "unix_seconds", `value is not unix seconds or an ISO-8601 time such as '2026-01-05T10:00:00Z': "next week"`},
		errorCase{`unix_seconds(x'00')`, "unix_seconds", "value is a blob, not a time"},
	)
}

// TestWallClockViewsInShell: in the sqlite3 shell, with the extension
// loaded and PRAGMA trusted_schema=OFF, the views read text wall-clock
// columns as the same instants in unix seconds and leave out a row whose
// time is no time, instead of failing for every reader.
func TestWallClockViewsInShell(t *testing.T) {
	path, db := migratedFile(t)
	// The wall clock is 2026-01-15 00:00:00 UTC; 1767571200 is ten days
	// before it.
	_, err := db.Exec(`
		UPDATE mem_config SET value = 1768435200 WHERE key = 'wall_clock';
		INSERT INTO mem_facts (id, segment, last_accessed_at, created_at) VALUES
			('unix', 'context', 1767571200, 1), ('iso', 'context', '2026-01-05T02:00:00+02:00', 'whenever'),
			('created', 'context', NULL, '2026-01-05'), ('bad', 'context', 'last week', 1),
			('bad-created', 'context', NULL, '2026-02-30');
		INSERT INTO mem_blocks (id, category) VALUES ('a', 'knowledge'), ('b', 'knowledge'), ('c', 'knowledge'), ('d', 'knowledge');
		INSERT INTO mem_edge_policies (relation_type, model, params, clock, threshold, action)
			VALUES ('seen', 'half_life', '{"half_life": "10d"}', 'wall', 0.4, 'exclude');
		INSERT INTO mem_edges (from_id, to_id, weight, relation_type, last_observed_at) VALUES
			('a', 'b', 1, 'seen', 1767571200), ('a', 'c', 1, 'seen', '2026-01-05 00:00:00.000'), ('a', 'd', 1, 'seen', 'soon');`)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	r := runShell(t, path, `.bail on
PRAGMA trusted_schema = OFF;
SELECT id, printf('%.6f', score), action FROM mem_facts_scored ORDER BY id;
SELECT to_id, printf('%.6f', effective_weight), state FROM mem_edges_effective ORDER BY to_id;
SELECT count(*) FROM mem_edges_live;
`)
	checkSurvived(t, r)
	// Ten days at importance 0.4, decay rate 0.08: 0.4 × exp(−ln2/15.75 ×
	// 0.8 × 1.08 × 10) = 0.273479; a 10-day half-life at 10 days: 0.5.
	want := "created|0.273479|keep\niso|0.273479|keep\nunix|0.273479|keep\n" +
		"b|0.500000|live\nc|0.500000|live\n2\n"
	if r.exitCode != 0 || r.stdout != want {
		t.Errorf("views on text wall clocks:\n%s\nstderr: %s\nwant:\n%s", r.stdout, strings.TrimSpace(r.stderr), want)
	}
}
