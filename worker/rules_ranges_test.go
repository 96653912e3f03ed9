package worker_test

import "testing"

// A block's numbers out of their range make it invalid, with the reason
// said: a negative reinforcement count is negative (not "integer"), and a
// confidence outside [0, 1] is named with its value. The sweep skips such
// a block (composite_score takes only shares in [0, 1]) and goes on.
func TestBlockProblemsSayWhatIsWrong(t *testing.T) {
	db, _ := newMemory(t, `
		INSERT INTO mem_blocks (id, category, confidence, reinforcement_count, last_reinforced_hours) VALUES
			('neg', 'knowledge', 0.5, -5, 100), ('over', 'knowledge', 1.5, 0, 100), ('under', 'knowledge', -0.25, 0, 100),
			('ok', 'knowledge', 1, 0, 100), ('zero', 'knowledge', 0, 0, 100);`)
	r := sweepAt(t, db, 100)
	got := map[string]string{}
	for _, s := range r.InvalidRows.Sample {
		got[s.ID] = s.Problem
	}
	want := map[string]string{
		"neg":   "reinforcement_count is negative",
		"over":  "confidence is 1.5 (want 0 to 1)",
		"under": "confidence is -0.25 (want 0 to 1)",
	}
	if r.InvalidRows.Count != int64(len(want)) {
		t.Errorf("invalid rows %d, want %d: %+v", r.InvalidRows.Count, len(want), r.InvalidRows.Sample)
	}
	for id, problem := range want {
		if got[id] != problem {
			t.Errorf("block %s: problem %q, want %q", id, got[id], problem)
		}
	}
	// The valid blocks are ranked and reinforced as ever.
	if r.Reinforced != 2 {
		t.Errorf("reinforced %d, want the 2 valid blocks", r.Reinforced)
	}
}
