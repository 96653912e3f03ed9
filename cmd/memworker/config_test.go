package main

import (
	"strings"
	"testing"

	"github.com/memdecay/memdecay/worker"
)

// specConfigKeys are the mem_config keys docs/schema.md names.
var specConfigKeys = []string{"active_hours", "edge_prune_threshold", "edge_decay_threshold",
	"established_edge_threshold", "block_prune_threshold", "curate_interval_hours", "reinforce_top_n",
	"max_decay_fraction", "block_archival", "last_curate_at", "edges_decayed_total", "event_retention_days"}

func TestConfig(t *testing.T) {
	path := demoDB(t)
	r := ok(t, "config", "get", "--db", path)
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	listed := map[string]bool{}
	for _, l := range lines {
		listed[strings.Fields(l)[0]] = true
	}
	for _, k := range specConfigKeys {
		if !listed[k] {
			t.Errorf("config get does not list %s:\n%s", k, r.stdout)
		}
	}
	for _, k := range worker.ConfigKeys {
		if !listed[k.Name()] {
			t.Errorf("config get does not list %s", k.Name())
		}
	}
	all := decodeJSON(t, ok(t, "config", "get", "--json", "--db", path))
	wantKeys(t, "config get --json", all, specConfigKeys...)

	if r := ok(t, "config", "get", "max_decay_fraction", "--db", path); strings.TrimSpace(r.stdout) != "1" && strings.TrimSpace(r.stdout) != "1.0" {
		t.Errorf("default max_decay_fraction: %q", r.stdout)
	}
	if r := ok(t, "config", "get", "block_archival", "--db", path); r.stdout != "auto\n" {
		t.Errorf("block_archival: %q", r.stdout)
	}
	if r := ok(t, "config", "set", "max_decay_fraction", "0.5", "--db", path); !strings.Contains(r.stdout, "max_decay_fraction = 0.5") {
		t.Errorf("config set: %q", r.stdout)
	}
	if r := ok(t, "config", "get", "max_decay_fraction", "--db", path); r.stdout != "0.5\n" {
		t.Errorf("max_decay_fraction after set: %q", r.stdout)
	}
	ok(t, "config", "set", "--db", path, "block_archival", "off")
	if r := ok(t, "config", "get", "block_archival", "--db", path); r.stdout != "off\n" {
		t.Errorf("block_archival after set: %q", r.stdout)
	}

	before := fileHash(t, path)
	wantUsage(t, mw(t, "config", "set", "max_decay_fraction", "2", "--db", path), "max_decay_fraction", "[0, 1]")
	wantUsage(t, mw(t, "config", "set", "max_decay_fraction", "-0.1", "--db", path), "[0, 1]")
	wantUsage(t, mw(t, "config", "set", "max_decay_fraction", "half", "--db", path), "not a number")
	wantUsage(t, mw(t, "config", "set", "block_archival", "sometimes", "--db", path), "auto, off")
	wantUsage(t, mw(t, "config", "set", "no_such_key", "1", "--db", path), "unknown key", "max_decay_fraction")
	wantUsage(t, mw(t, "config", "get", "no_such_key", "--db", path), "unknown key")
	wantUsage(t, mw(t, "config", "set", "max_decay_fraction", "--db", path), "KEY VALUE")
	wantUsage(t, mw(t, "config", "get", "a", "b", "--db", path), "config get")
	if fileHash(t, path) != before {
		t.Error("a rejected config set changed the file")
	}
	if r := ok(t, "config", "get", "max_decay_fraction", "--db", path); r.stdout != "0.5\n" {
		t.Errorf("max_decay_fraction after rejected sets: %q", r.stdout)
	}
}

func TestConfigGolden(t *testing.T) {
	tr := newTranscript(t)
	path := goldenDB(t, tr.dir, "m.db")
	tr.run("config", "get", "--db", path)
	tr.run("config", "get", "max_decay_fraction", "--db", path)
	tr.run("config", "get", "block_archival", "--db", path)
	tr.check("config")
}

// The active-hours clock moves back only with --force; a setting out of
// range is a usage error naming the key.
func TestConfigSetClockBack(t *testing.T) {
	path := demoDB(t)
	before := fileHash(t, path)
	wantUsage(t, mw(t, "config", "set", "active_hours", "1", "--db", path), "moving the clock back", "--force")
	wantUsage(t, mw(t, "config", "set", "edge_prune_threshold", "2", "--db", path), "edge_prune_threshold", "out of range")
	if fileHash(t, path) != before {
		t.Error("a refused setting changed the file")
	}
	ok(t, "config", "set", "--force", "active_hours", "1", "--db", path)
	if got := queryOne(t, path, "SELECT value FROM mem_config WHERE key = 'active_hours'"); got != "1" && got != "1.0" {
		t.Errorf("active_hours %s after a forced set, want 1", got)
	}
}
