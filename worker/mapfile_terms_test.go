package worker_test

// A mapping file's terms (docs/mapping.md): its settings and relation
// policies are put in force in the transaction that declares it, and a
// sweep decays the app's links by them.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
	"github.com/memdecay/memdecay/worker/mapping"
)

// termsApp is the app of worker/mapping/testdata/terms.toml.
const termsApp = `
CREATE TABLE notes (id INTEGER PRIMARY KEY, state TEXT DEFAULT 'active', used_at INTEGER);
CREATE TABLE links (id INTEGER PRIMARY KEY, src INTEGER REFERENCES notes (id), dst INTEGER REFERENCES notes (id),
	kind TEXT NOT NULL, strength REAL, touched_at INTEGER, seen_at INTEGER, hidden INTEGER DEFAULT 0);
`

// termsRows are four fresh notes and their links: cites links last seen
// 190 and 170 days before reviewWall (on both sides of the policy's 180
// days), one never seen, and a relates link the policy does not name.
func termsRows() string {
	day := int64(24 * time.Hour / time.Second)
	wall := reviewWall.Unix()
	var b strings.Builder
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&b, "INSERT INTO notes (id, used_at) VALUES (%d, %d);\n", i, recent)
	}
	fmt.Fprintf(&b, `INSERT INTO links (id, src, dst, kind, strength, touched_at, seen_at) VALUES
		(1, 1, 2, 'cites', 1.0, %[1]d, %[2]d), (2, 2, 3, 'cites', 1.0, %[1]d, %[3]d),
		(3, 3, 4, 'cites', 1.0, %[1]d, NULL), (4, 1, 3, 'relates', 0.9, %[1]d, NULL);`, recent, wall-190*day, wall-170*day)
	return b.String()
}

// termsText is terms.toml with its block_prune_threshold set to value.
func termsText(t *testing.T, value string) string {
	t.Helper()
	b, err := os.ReadFile("mapping/testdata/terms.toml")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Replace(string(b), "block_prune_threshold = 0.05", "block_prune_threshold = "+value, 1)
}

func TestMapFileTermsDeclaredAndSwept(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "app.db")
	db := createMemory(t, path, termsApp+termsRows()+`
		INSERT INTO mem_edge_policies (relation_type, model, params, action) VALUES ('cites', 'linear', '{"rate": 0.5}', 'delete');
		INSERT INTO mem_edge_policies (relation_type, model, params) VALUES ('mentions', 'half_life', '{"half_life": "3d"}');`)
	m, err := mapping.Parse("terms.toml", []byte(termsText(t, "0.07")))
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.DeclareMapping(ctx, db, m, "terms.toml", reviewWall); err != nil {
		t.Fatalf("declare: %v", err)
	}
	db.Close()
	db = openAsWorker(t, path)

	values, err := worker.ConfigValues(ctx, db.SQL)
	if err != nil {
		t.Fatal(err)
	}
	if values["block_prune_threshold"] != "0.07" || values["curate_interval_hours"] != "48.0" {
		t.Errorf("mem_config: block_prune_threshold %s, curate_interval_hours %s; want 0.07 and 48.0 (2d in hours)",
			values["block_prune_threshold"], values["curate_interval_hours"])
	}
	if got := scalar[string](t, db, `SELECT group_concat(row, '; ') FROM (SELECT concat_ws(' ', relation_type, model, params, clock,
		coalesce(threshold, 'NULL'), action, orphans) AS row FROM mem_edge_policies ORDER BY relation_type)`); got !=
		`cites half_life {"half_life":"180d"} wall 0.5 exclude keep; mentions half_life {"half_life": "3d"} active_hours NULL delete keep` {
		t.Errorf("mem_edge_policies: %s\nwant the file's cites row in place of the one before, mentions left as it was", got)
	}

	reviewSweepOK(t, db, reviewWall)
	got := scalar[string](t, db, `SELECT group_concat(id || ':' || hidden, ' ') FROM (SELECT id, hidden FROM links ORDER BY id)`)
	if got != "1:1 2:0 3:0 4:0" {
		t.Errorf("links id:hidden %s; want 1:1 2:0 3:0 4:0 (only the cites link unseen for 190 days excluded, every row kept)", got)
	}
	// A second sweep at the same clock changes nothing.
	reviewSweepOK(t, db, reviewWall)
	if again := scalar[string](t, db, `SELECT group_concat(id || ':' || hidden, ' ') FROM (SELECT id, hidden FROM links ORDER BY id)`); again != got {
		t.Errorf("second sweep: %s, want %s", again, got)
	}
}

func reviewSweepOK(t *testing.T, db *worker.DB, w time.Time) {
	t.Helper()
	if _, err := reviewSweep(t, db, w); err != nil {
		t.Fatalf("sweep: %v", err)
	}
}

// A bad setting or policy, and a mapping that does not fit the schema,
// are refused naming the part, and nothing is written: not the mapping,
// not a setting, not a policy.
func TestMapFileTermsRefusedChangeNothing(t *testing.T) {
	ctx := context.Background()
	for name, c := range map[string]struct {
		schema string
		edit   func(*mapping.Mapping)
		want   string
	}{
		"setting out of range": {termsApp, func(m *mapping.Mapping) { m.Settings["block_prune_threshold"] = "2" },
			"settings.block_prune_threshold: 2 is out of range"},
		"unknown setting": {termsApp, func(m *mapping.Mapping) { m.Settings["prune"] = "0.1" }, "settings.prune: unknown key"},
		"bad policy": {termsApp, func(m *mapping.Mapping) { m.Policies[0].HalfLife = "180y" },
			`policies[0].half_life (kind "cites"): "180y" is not a duration`},
		"no column to mark exclusions in": {strings.Replace(termsApp, ", hidden INTEGER DEFAULT 0", "", 1), nil,
			"edges.excluded"},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "app.db")
			db := createMemory(t, path, c.schema)
			defer db.Close()
			m, err := mapping.Parse("terms.toml", []byte(termsText(t, "0.07")))
			if err != nil {
				t.Fatal(err)
			}
			if c.edit != nil {
				c.edit(m)
			}
			before := fileHashes(t, path)
			err = worker.DeclareMapping(ctx, db, m, "terms.toml", reviewWall)
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("declare: %v; want one line with %q", err, c.want)
			}
			sameFiles(t, before, fileHashes(t, path))
			if n := scalar[int64](t, db, `SELECT (SELECT count(*) FROM mem_edge_policies) + (SELECT count(*) FROM mem_mapping)`); n != 0 {
				t.Errorf("%d rows of mem_edge_policies and mem_mapping written", n)
			}
			if v := scalar[string](t, db, `SELECT CAST(value AS TEXT) FROM mem_config WHERE key = 'block_prune_threshold'`); v != "0.05" {
				t.Errorf("block_prune_threshold %s, want 0.05 as before", v)
			}
		})
	}
}
