package worker_test

import (
	"strconv"
	"testing"

	"github.com/memdecay/memdecay/worker"
)

// TestElfmemCurateAheadOfItsClock: elfmem curates mid-session and writes
// its last_curate_at ahead of its total_active_hours. A sweep at the
// hours it then reads is behind that curate: it reinforces nothing again
// and winds back neither elfmem's last_curate_at nor any block's
// last_reinforced_at.
func TestElfmemCurateAheadOfItsClock(t *testing.T) {
	s := elfmemShape
	db, _ := shapedMemory(t, s, restoreGraph(), s.base)
	sweepShape(t, s, db, s.base, worker.SweepOptions{})
	// elfmem's own curate, 30 hours ahead of the clock it reads next.
	ahead := s.base.after(30)
	mustExec(t, db, `UPDATE system_config SET value = ? WHERE key = 'last_curate_at'`, strconv.FormatFloat(ahead.hours, 'f', -1, 64))
	mustExec(t, db, `UPDATE blocks SET reinforcement_count = reinforcement_count + 1, last_reinforced_at = ? WHERE id IN ('0001', '0002')`, ahead.hours)
	before := dumpRows2(t, db, `SELECT id, reinforcement_count, last_reinforced_at, status FROM blocks ORDER BY id`)

	behind := s.base.after(10)
	s.setClock(t, db, behind)
	r := sweepShape(t, s, db, behind, worker.SweepOptions{})
	if r.Reinforced != 0 || r.ConstitutionalReinforced != 0 || r.Archived != 0 {
		t.Errorf("a sweep behind elfmem's own curate reinforced %d (%d constitutional) and archived %d: %s",
			r.Reinforced, r.ConstitutionalReinforced, r.Archived, r.Summary)
	}
	if got := scalar[string](t, db, `SELECT value FROM system_config WHERE key = 'last_curate_at'`); got != strconv.FormatFloat(ahead.hours, 'f', -1, 64) {
		t.Errorf("elfmem's last_curate_at is %s after the sweep, want %v", got, ahead.hours)
	}
	if after := dumpRows2(t, db, `SELECT id, reinforcement_count, last_reinforced_at, status FROM blocks ORDER BY id`); after != before {
		t.Errorf("the blocks changed:\n%s\nwere\n%s", after, before)
	}
}
