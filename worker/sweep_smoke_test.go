package worker_test

import "testing"

// Reference 000 §3.3: the six worked examples as edges of one graph.
func TestWorkedExamples(t *testing.T) {
	db, _ := newMemory(t, `
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES
			('s1','knowledge',1000), ('s2','knowledge',1000), ('s3','knowledge',1000), ('s4','knowledge',1000),
			('p1','knowledge',1000), ('e1','observation',1000), ('e2','observation',1000);
		INSERT INTO mem_block_tags VALUES ('p1','self/constitutional');
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours) VALUES
			('s1','s2',0.5,1,0),    -- stale standard: 0.041 pruned
			('s2','s3',0.5,1,450),  -- recent: 0.390 survives
			('s1','s3',0.5,12,100), -- established: 0.184 survives
			('s3','s4',0.5,5,100),  -- non-established: 0.068 pruned
			('p1','s4',0.5,1,0),    -- permanent+standard: 0.499 survives
			('e1','e2',0.5,1,400);  -- ephemeral: 0.041 pruned
	`)
	r := sweepAt(t, db, 500)
	got := edgeSet(t, db)
	for _, k := range []string{"s2-s3", "s1-s3", "p1-s4"} {
		if !got[k] {
			t.Errorf("edge %s should survive", k)
		}
	}
	for _, k := range []string{"s1-s2", "s3-s4", "e1-e2"} {
		if got[k] {
			t.Errorf("edge %s should have decayed", k)
		}
	}
	if r.EdgesDecayed != 3 || r.TotalEdgesAfter != 3 {
		t.Errorf("report: %+v", r)
	}
	if n := scalar[int](t, db, "SELECT count(*) FROM mem_events WHERE action = 'decay'"); n != 3 {
		t.Errorf("decay events = %d, want 3", n)
	}
	t.Log(r.Summary)
}
