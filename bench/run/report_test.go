package main

import (
	"strings"
	"testing"
)

// TestFileTable: the file table shows, per scenario and peer, the run that
// left the largest file, in MB, and its growth (bold for memworker).
func TestFileTable(t *testing.T) {
	const mib = 1 << 20
	res := &Results{
		Peers: []Peer{{Key: "plain", Name: "plain SQL"}, {Key: "worker", Name: "memworker", Worker: true}},
		Scenarios: []ScenarioResult{{Name: "first sweep", Runs: map[string][]Outcome{
			"plain":  {{FileBefore: 10 * mib, FileAfter: 10 * mib}},
			"worker": {{FileBefore: 10 * mib, FileAfter: 12 * mib}, {FileBefore: 10 * mib, FileAfter: 14 * mib}, {FileBefore: 10 * mib, FileAfter: 13 * mib}},
		}}},
	}
	var b strings.Builder
	res.fileTable(&b)
	for _, row := range []string{
		"| scenario | peer | file before (MB) | file after (MB) | after ÷ before |",
		"| first sweep | plain SQL | 10 | 10 | 1.00× |",
		"| first sweep | memworker | 10 | 14 | **1.40×** |",
	} {
		if !strings.Contains(b.String(), row+"\n") {
			t.Errorf("no row %q in\n%s", row, b.String())
		}
	}
}
