package main

// Sweeps at two clocks, as when cron sweeps with --now ahead of a daemon
// that sweeps at active_hours: a clock already swept, or behind the last
// sweep's, changes nothing (docs/sweep.md); a --now behind it is refused
// unless --force.

import (
	"strconv"
	"strings"
	"testing"
)

// memoryRows is what a sweep may change: every memory row, the events,
// and the sweep clock's settings (not the sweep records themselves).
func memoryRows(t *testing.T, path string) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT id, status, coalesce(archive_reason, ''), reinforcement_count, quote(last_reinforced_hours) FROM mem_blocks ORDER BY id`,
		`SELECT from_id, to_id, quote(weight), reinforcement_count, excluded FROM mem_edges ORDER BY 1, 2`,
		`SELECT id, status, access_count FROM mem_facts ORDER BY id`,
		`SELECT subject_kind, subject_id, action, count(*) FROM mem_events GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
		`SELECT key, value FROM mem_config WHERE key IN ('last_curate_at', 'edges_decayed_total', 'active_hours') ORDER BY key`,
	} {
		b.WriteString(strings.Join(queryRows(t, path, q), "\n") + "\n")
	}
	return b.String()
}

func TestSweepClocksOutOfOrder(t *testing.T) {
	path := demoDB(t)
	daemon, err := strconv.ParseFloat(queryOne(t, path, `SELECT value FROM mem_config WHERE key = 'active_hours'`), 64)
	if err != nil {
		t.Fatal(err)
	}
	behind, ahead := strconv.FormatFloat(daemon, 'f', -1, 64), strconv.FormatFloat(daemon+100, 'f', -1, 64)
	lastCurate := func() string { return queryOne(t, path, `SELECT value FROM mem_config WHERE key = 'last_curate_at'`) }

	// cron, ahead of the daemon's clock
	first := decodeJSON(t, ok(t, "sweep", "--db", path, "--now", ahead, "--json"))
	if num(t, first, "reinforced") == 0 {
		t.Fatalf("the first sweep at %s reinforced nothing: %v", ahead, first)
	}
	swept := memoryRows(t, path)

	// --now behind the last sweep: refused, naming both clocks, nothing changed
	before := fileHash(t, path)
	wantUsage(t, mw(t, "sweep", "--db", path, "--now", behind), behind, ahead, "last_curate_at", "--force")
	wantUsage(t, mw(t, "sweep", "--db", path, "--now", behind, "--dry-run"), behind, ahead)
	if fileHash(t, path) != before {
		t.Error("a refused sweep changed the file")
	}

	// the daemon at active_hours, behind the last sweep: repeats that sweep,
	// which changes nothing
	r := decodeJSON(t, ok(t, "sweep", "--db", path, "--json"))
	if got := num(t, r, "clock_hours"); got != daemon+100 {
		t.Errorf("a sweep at active_hours %s after one at %s ran at %v, want %s", behind, ahead, got, ahead)
	}
	if got := memoryRows(t, path); got != swept {
		t.Errorf("a sweep at active_hours behind the last sweep changed rows\nbefore:\n%s\nafter:\n%s", swept, got)
	}

	// cron again, at the clock already swept: nothing changes
	r = decodeJSON(t, ok(t, "sweep", "--db", path, "--now", ahead, "--json"))
	for _, k := range []string{"reinforced", "archived", "edges_pruned", "edges_decayed"} {
		if num(t, r, k) != 0 {
			t.Errorf("a second sweep at %s: %s = %v, want 0", ahead, k, num(t, r, k))
		}
	}
	if got := memoryRows(t, path); got != swept {
		t.Errorf("a second sweep at %s changed rows\nbefore:\n%s\nafter:\n%s", ahead, swept, got)
	}

	// --force: a sweep at the earlier clock as at a new one, reinforcing
	// again, and last_curate_at set back
	r = decodeJSON(t, ok(t, "sweep", "--db", path, "--now", behind, "--force", "--json"))
	if num(t, r, "clock_hours") != daemon || num(t, r, "reinforced") == 0 {
		t.Errorf("sweep --force at %s: clock %v, reinforced %v; want that clock and a reinforcement", behind, num(t, r, "clock_hours"), num(t, r, "reinforced"))
	}
	if got := lastCurate(); got != behind {
		t.Errorf("after sweep --force at %s, last_curate_at is %s", behind, got)
	}
	// and run takes --force too, for its --now
	if h := ok(t, "run", "--help"); !strings.Contains(h.stdout, "--force") {
		t.Error("run --help does not list --force")
	}
}
