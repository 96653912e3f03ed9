package main

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestFactFeedbackAndRecall(t *testing.T) {
	path := demoDB(t)
	row := func() (importance float64, count int64, last int64) {
		t.Helper()
		parts := strings.Split(queryOne(t, path, "SELECT importance, access_count, last_accessed_at FROM mem_facts WHERE id = 'f-tabs'"), "|")
		importance, _ = strconv.ParseFloat(parts[0], 64)
		count, _ = strconv.ParseInt(parts[1], 10, 64)
		last, _ = strconv.ParseInt(parts[2], 10, 64)
		return
	}
	imp0, count0, last0 := row()
	if time.Now().Unix()-last0 < 86400 {
		t.Fatalf("fixture: f-tabs was accessed %d s ago; want days", time.Now().Unix()-last0)
	}

	r := ok(t, "fact", "feedback", "f-tabs", "up", "--db", path)
	if !strings.HasPrefix(r.stdout, "fact f-tabs: up;") || !strings.Contains(r.stdout, "decay clock reset") {
		t.Errorf("feedback up: %q", r.stdout)
	}
	imp1, count1, last1 := row()
	if diff := imp1 - imp0; diff < 0.0499 || diff > 0.0501 || count1 != count0+1 || time.Now().Unix()-last1 > 60 {
		t.Errorf("after up: importance %v→%v, count %d→%d, last access %d→%d", imp0, imp1, count0, count1, last0, last1)
	}

	m := decodeJSON(t, ok(t, "fact", "feedback", "f-tabs", "down", "--json", "--db", path))
	wantKeys(t, "feedback --json", m, "id", "importance_before", "importance_after", "access_count_after", "clock_reset")
	imp2, count2, last2 := row()
	if diff := imp1 - imp2; diff < 0.0999 || diff > 0.1001 || count2 != count1 || last2 != last1 || m["clock_reset"] != false {
		t.Errorf("after down: importance %v→%v, count %d→%d, last access %d→%d, %v", imp1, imp2, count1, count2, last1, last2, m)
	}

	r = ok(t, "fact", "recall", "f-tabs", "--db", path)
	if !strings.HasPrefix(r.stdout, "fact f-tabs: recall;") {
		t.Errorf("recall: %q", r.stdout)
	}
	imp3, count3, _ := row()
	if imp3 != imp2 || count3 != count2+1 {
		t.Errorf("after recall: importance %v→%v, count %d→%d", imp2, imp3, count2, count3)
	}
	events := queryOne(t, path, "SELECT count(*) FROM mem_events WHERE subject_kind = 'fact' AND subject_id = 'f-tabs' AND action IN ('feedback', 'recall')")
	if events != "3" {
		t.Errorf("%s feedback/recall events, want 3", events)
	}

	before := fileHash(t, path)
	for _, args := range [][]string{{"fact", "recall", "--auto", "f-tabs"}, {"fact", "recall", "f-tabs", "--auto"}} {
		r = ok(t, append(args, "--db", path)...)
		if !strings.Contains(r.stdout, "passive: nothing changed") {
			t.Errorf("auto-recall: %q", r.stdout)
		}
	}
	if fileHash(t, path) != before {
		t.Error("fact recall --auto changed the file")
	}
	if _, count4, _ := row(); count4 != count3 {
		t.Errorf("auto-recall bumped the access count %d→%d", count3, count4)
	}

	for _, args := range [][]string{
		{"fact", "feedback", "f-tabs", "sideways"},
		{"fact", "feedback", "f-tabs"},
		{"fact", "feedback", "f-tabs", "up", "extra"},
		{"fact", "recall"},
		{"fact", "recall", "a", "b"},
	} {
		wantUsage(t, mw(t, append(args, "--db", path)...), "memworker "+strings.Join(args[:2], " ")+" --help")
	}
	if fileHash(t, path) != before {
		t.Error("a rejected fact command changed the file")
	}
	wantExit(t, mw(t, "fact", "feedback", "no-such-fact", "up", "--db", path), exitFailure, "no such fact")
	wantExit(t, mw(t, "fact", "recall", "no-such-fact", "--db", path), exitFailure, "no such fact")
	wantExit(t, mw(t, "fact", "recall", "--auto", "no-such-fact", "--db", path), exitFailure, "no such fact")
	wantExit(t, mw(t, "fact", "recall", "f-typo", "--db", path), exitFailure, "archived", "restore --fact f-typo")
}
