package worker_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/worker"
)

// invalidEdges makes n edges whose weight is text, from "a" to b00…b(n-1).
func invalidEdges(n int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES ('a', 'knowledge', 100)")
	for i := range n {
		fmt.Fprintf(&b, ", ('b%02d', 'knowledge', 100)", i)
	}
	b.WriteString(";\nINSERT INTO mem_edges (from_id, to_id, weight, last_active_hours) VALUES ")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "('a', 'b%02d', 'heavy', 100)", i)
	}
	return b.String() + ";"
}

// TestListInvalid: a report names InvalidSampleSize invalid rows and says
// how to list them all; ListInvalid lists every one, in the report's
// order, as the sweep's own rules find them now, and changes no byte of
// the file.
func TestListInvalid(t *testing.T) {
	ctx := context.Background()
	db, path := newMemory(t, invalidEdges(12)+`
		INSERT INTO mem_blocks (id, category, confidence, last_reinforced_hours) VALUES ('bad', 'knowledge', 'high', 100);`)
	r := sweepAt(t, db, 100)
	if r.InvalidRows.Count != 13 || len(r.InvalidRows.Sample) != worker.InvalidSampleSize {
		t.Fatalf("report: %d invalid rows, %d named; want 13, %d", r.InvalidRows.Count, len(r.InvalidRows.Sample), worker.InvalidSampleSize)
	}
	if !strings.Contains(r.Summary, "13 invalid rows skipped ("+worker.ListInvalidCommand+" lists them).") {
		t.Errorf("summary %q does not say how to list them all", r.Summary)
	}

	before := fileHashes(t, path)
	all, err := worker.ListInvalid(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	sameFiles(t, before, fileHashes(t, path))
	if len(all) != 13 {
		t.Fatalf("ListInvalid gave %d rows, want 13: %+v", len(all), all)
	}
	if !slices.Equal(all[:worker.InvalidSampleSize], r.InvalidRows.Sample) {
		t.Errorf("ListInvalid begins %+v, the report's sample is %+v", all[:worker.InvalidSampleSize], r.InvalidRows.Sample)
	}
	if all[0] != (worker.InvalidRow{Kind: "block", ID: "bad", Problem: "confidence is text"}) {
		t.Errorf("first row %+v", all[0])
	}
	if last := all[12]; last != (worker.InvalidRow{Kind: "edge", ID: `["a","b11"]`, Problem: "weight is text"}) {
		t.Errorf("last row %+v", last)
	}

	// Rows an app broke or mended since the last sweep count as they are now.
	mustExec(t, db, `UPDATE mem_edges SET weight = 0.5 WHERE to_id IN ('b00', 'b01')`)
	mustExec(t, db, `UPDATE mem_blocks SET reinforcement_count = -1 WHERE id = 'b05'`)
	all, err = worker.ListInvalid(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 12 || all[0] != (worker.InvalidRow{Kind: "block", ID: "b05", Problem: "reinforcement_count is negative"}) {
		t.Errorf("after the app's writes: %+v", all)
	}

	// No invalid row: an empty list, and a summary that mentions none.
	clean, _ := newMemory(t, knowledgeBlocks("x", "y"))
	if all, err := worker.ListInvalid(ctx, clean); err != nil || len(all) != 0 {
		t.Errorf("a clean memory: %+v, %v", all, err)
	}
	if s := sweepAt(t, clean, 1).Summary; strings.Contains(s, "invalid") {
		t.Errorf("clean summary %q", s)
	}
}
