package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// Ids an app wrote with a terminal escape, a line break and a bidi override.
const (
	escID  = "a\x1b[31m"
	lineID = "b\nforged line"
	bidiID = "c\u202e"
	relID  = "rel\x1b]0;title\x07"
	factID = "f\x1b[2J"
	liveID = "g\r"
	longID = "h\x1b[4m"
)

// hostileMemory is a memory whose ids, relation type and values carry
// control characters: every text output must show them escaped.
func hostileMemory(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.db")
	ok(t, "migrate", "up", "--db", path)
	exec1(t, path, `INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES (?, 'knowledge', 700), (?, 'knowledge', 700),
		(?, 'knowledge', 700), ('d', 'knowledge', 700)`, escID, lineID, bidiID)
	exec1(t, path, `UPDATE mem_blocks SET confidence = 'high' || char(27) WHERE id = ?`, bidiID)
	exec1(t, path, `INSERT INTO mem_edge_policies (relation_type, model, params, clock, action) VALUES (?, 'linear', '{"rate":0.01}', 'active_hours', 'delete')`, relID)
	// escID < lineID < bidiID < 'd' in byte order: from_id < to_id.
	exec1(t, path, `INSERT INTO mem_edges (from_id, to_id, weight, last_active_hours) VALUES (?, ?, 0.5, 0)`, escID, lineID)
	exec1(t, path, `INSERT INTO mem_edges (from_id, to_id, weight, last_active_hours) VALUES (?, ?, 'he' || char(27) || '[1mavy', 0)`, escID, bidiID)
	exec1(t, path, `INSERT INTO mem_edges (from_id, to_id, weight, relation_type, last_active_hours) VALUES (?, 'd', 1, ?, 0)`, escID, relID)
	exec1(t, path, `INSERT INTO mem_facts (id, segment, last_accessed_at, created_at) VALUES (?, 'context', 0, 0), (?, 'context', 1767225600, 1767225600),
		(?, 'knowledge', 0, 0)`, factID, liveID, longID)
	return path
}

// wantEscaped fails when text output holds a control or other unprintable
// character other than the line ends it is made of.
func wantEscaped(t *testing.T, what, out string) {
	t.Helper()
	for _, r := range out {
		if r != '\n' && !unicode.IsPrint(r) {
			t.Errorf("%s prints %q raw:\n%s", what, r, out)
			return
		}
	}
	if strings.Contains(out, "\nforged line") {
		t.Errorf("%s breaks a line inside an id:\n%s", what, out)
	}
}

// TestTextOutputEscapesIds: every text output that shows an id, a relation
// type or a value from the database shows one with control characters
// Go-quoted; JSON output escapes them as JSON does.
func TestTextOutputEscapesIds(t *testing.T) {
	path := hostileMemory(t)
	const wall = "1767225600" // 2026-01-01
	steps := [][]string{
		{"sweep", "--dry-run", "--now", "700", "--wall-now", wall},
		{"explain", "--edge", escID, bidiID},
		{"explain", "--edge", escID, "d"},
		{"sweep", "--now", "700", "--wall-now", wall},
		{"status"},
		{"decayed"},
		{"decayed", "--invalid"},
		{"explain", "--fact", liveID},
		{"fact", "recall", liveID},
		{"restore", "--edge", escID, lineID},
		{"restore", "--fact", factID},
		{"explain", "--fact", factID},
		{"explain", "--fact", longID}, // archived: its verdict names it
	}
	saw := map[string]bool{}
	for _, args := range steps {
		r := mwAt(t, goldenWall, append(args, "--db", path)...)
		if r.code != exitOK {
			t.Errorf("%v: %v", args, r)
		}
		wantEscaped(t, strings.Join(args[:1], " ")+" (stdout)", r.stdout)
		wantEscaped(t, strings.Join(args[:1], " ")+" (stderr)", r.stderr)
		for _, id := range []string{escID, lineID, bidiID, relID, factID, liveID} {
			if strings.Contains(r.stdout, strconv.Quote(id)) {
				saw[id] = true
			}
		}
	}
	for _, id := range []string{escID, lineID, bidiID, relID, factID, liveID} {
		if !saw[id] {
			t.Errorf("no text output showed %q", id)
		}
	}

	// A failure naming a hostile id escapes it too.
	r := mw(t, "explain", "--fact", "nowhere\x1b[5m", "--db", path)
	wantExit(t, r, exitFailure, "explain: fact")
	wantEscaped(t, "explain error", r.stderr)

	// JSON keeps the ids as they are, escaped as JSON.
	m := decodeJSON(t, ok(t, "explain", "--edge", escID, lineID, "--json", "--db", path))
	if m["from"] != escID || m["to"] != lineID {
		t.Errorf("explain --json ends %q, %q, want %q, %q", m["from"], m["to"], escID, lineID)
	}
}
