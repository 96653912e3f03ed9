package sweep

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/schema"
	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/settings"
	"github.com/memdecay/memdecay/worker/internal/store"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
)

// Every caller gets the sweep the CLI runs: the defaults live in the
// options, not in the CLI's flags.
func TestSweepOptionsDefaults(t *testing.T) {
	got := Options{}.withDefaults()
	if got.ChunkSize != store.DefaultChunkSize || got.SoloChunkSize != store.DefaultSoloChunkSize ||
		got.SoloHold != store.DefaultSoloHold || got.Pause != store.DefaultPause || got.Owner == "" {
		t.Errorf("defaults: %+v", got)
	}
	set := Options{ChunkSize: 7, SoloChunkSize: 9, SoloHold: 3, Pause: 2, Owner: "me"}
	if got := set.withDefaults(); got.ChunkSize != 7 || got.SoloChunkSize != 9 || got.SoloHold != 3 || got.Pause != 2 || got.Owner != "me" {
		t.Errorf("set options were changed: %+v", got)
	}
	for _, bad := range []Options{{ChunkSize: -1}, {SoloChunkSize: -1}, {SoloHold: -1}, {Pause: -1}} {
		err := bad.Validate()
		if err == nil || !strings.Contains(err.Error(), "invalid sweep option") || strings.Contains(err.Error(), "--") {
			t.Errorf("Validate(%+v) = %v, want an error naming the option, not a flag", bad, err)
		}
	}
}

// The fingerprint of the derived state names the schema it is kept in (the
// newest step that may change it) and the rules it is computed with.
func TestFingerprintNamesTheSchema(t *testing.T) {
	latest, err := schema.Latest()
	if err != nil {
		t.Fatal(err)
	}
	layout := schema.DerivedLayout(latest)
	var b strings.Builder
	writeFingerprint(&b, layout, settings.Config{}, nil, nil)
	if want := fmt.Sprintf("schema %d; rules %d;", layout, sweepsql.DerivedRules); !strings.HasPrefix(b.String(), want) {
		t.Errorf("fingerprint text %q, want it to begin %q", b.String(), want)
	}
}

// Sweep applies the defaults for every caller: alone on the file, a sweep
// asked for 1-row transactions grows them (SoloChunkSize), as the CLI's
// does, instead of committing once per row.
func TestSweepAppliesDefaults(t *testing.T) {
	ctx := context.Background()
	db, err := memdb.Open(t.TempDir()+"/m.db", memdb.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := schema.Up(db.SQL); err != nil {
		t.Fatal(err)
	}
	const edges = 200
	_, err = db.SQL.ExecContext(ctx, `
		WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO mem_blocks (id, category, last_reinforced_hours) SELECT printf('b%04d', i), 'knowledge', 100 FROM n;
	`, edges)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.SQL.ExecContext(ctx, `
		WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ? - 1)
		INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, last_active_hours)
		SELECT printf('b%04d', i), printf('b%04d', i + 1), 0.01, 0, 100 FROM n`, edges)
	if err != nil {
		t.Fatal(err)
	}
	now := 101.0
	txs := 0
	r, err := Sweep(ctx, db, WithChunk(Options{Now: &now, ChunkSize: 1}, func(step string, done, total int64) {
		if step == "plan_edges" && done < total {
			txs++
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	if r.EdgesPruned != edges {
		t.Fatalf("pruned %d edges, want %d", r.EdgesPruned, edges)
	}
	if txs >= edges/2 {
		t.Errorf("%d transactions for %d removals alone on the file: the solo defaults were not applied", txs, edges)
	}
}

// The views and a sweep without a wall time of its own read the wall clock
// from one place, mem_config's wall_clock, when it is set.
func TestWallClockOnePlace(t *testing.T) {
	ctx := context.Background()
	db, err := memdb.Open(t.TempDir()+"/m.db", memdb.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := schema.Up(db.SQL); err != nil {
		t.Fatal(err)
	}
	const pinned = 1767225600
	if err := settings.SetConfig(ctx, db.SQL, "wall_clock", fmt.Sprint(pinned)); err != nil {
		t.Fatal(err)
	}
	var wall int64
	if err := db.SQL.QueryRowContext(ctx, `SELECT wall FROM mem_clock`).Scan(&wall); err != nil || wall != pinned {
		t.Errorf("mem_clock wall %d (%v), want %d", wall, err, pinned)
	}
	r, err := Sweep(ctx, db, Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.WallTime != pinned {
		t.Errorf("sweep wall time %d, want the pinned %d", r.WallTime, pinned)
	}
	if err := settings.SetConfig(ctx, db.SQL, "wall_clock", ""); err != nil {
		t.Fatal(err)
	}
	if err := db.SQL.QueryRowContext(ctx, `SELECT wall FROM mem_clock`).Scan(&wall); err != nil || wall == pinned {
		t.Errorf("mem_clock wall %d (%v) after unpinning, want the machine's", wall, err)
	}
}
