package worker_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/internal/rqcluster"
	"github.com/memdecay/memdecay/schema"
	"github.com/memdecay/memdecay/worker"
	"github.com/memdecay/memdecay/worker/mapping"
)

// An app's notes and links, and the change to its schema its own migration
// makes on a connection that never loaded memdecay.
const (
	alterAppSchema = `
		CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, extra TEXT, kind TEXT, state TEXT DEFAULT 'active', last_used_at TEXT);
		CREATE TABLE links (id INTEGER PRIMARY KEY, src INTEGER NOT NULL REFERENCES notes (id), dst INTEGER NOT NULL REFERENCES notes (id),
			kind TEXT NOT NULL, strength REAL, touched_at TEXT);
		CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT);
		INSERT INTO notes (id, body, kind, last_used_at) VALUES (1, 'a', 'note', '2026-11-01T10:00:00+02:00'),
			(2, 'b', 'note', '2026-11-02T10:00:00+02:00'), (3, 'c', 'goal', '2026-11-03T10:00:00+02:00');
		INSERT INTO links (src, dst, kind, strength, touched_at) VALUES (1, 2, 'cites', 0.9, '2026-11-01T10:00:00+02:00'),
			(2, 3, 'cites', 0.8, '2026-11-02T10:00:00+02:00'), (1, 3, 'about', 0.7, '2026-11-03T10:00:00+02:00')`
	alterAppMapping = `
[nodes]
table = "notes"
key = "id"
last_used = "last_used_at"
last_used_clock = "iso8601"
category = "kind"
status = "state"
status_active = ["active"]
status_archived = "archived"

[edges]
table = "links"
key = "id"
from = "src"
to = "dst"
directed = true
kind = "kind"
weight = "strength"
last_active = "touched_at"
last_active_clock = "iso8601"
`
	alterAppMigration = `
ALTER TABLE notes RENAME COLUMN body TO text;
ALTER TABLE notes DROP COLUMN extra;
ALTER TABLE settings RENAME TO app_settings;
SELECT 'migrated';
`
)

// readerViewsStep is the schema step that took the readers' views out of
// the file.
const readerViewsStep = 18

// TestRqliteAppMigrationsWithoutTheExtension: a cluster holding a
// database of the release before (its readers' views stored in the file)
// migrates up through rqlite; then the readers' views answer on every node
// (rqlited loads memdecay: the extension serves them), and the nodes'
// file takes the app's own ALTER TABLE on a connection without memdecay,
// which the release before's file refused.
func TestRqliteAppMigrationsWithoutTheExtension(t *testing.T) {
	ctx := context.Background()
	db, path := newMemory(t, alterAppSchema)
	m, err := mapping.Parse("notes.toml", []byte(alterAppMapping))
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.DeclareMapping(ctx, db, m, "notes.toml", time.Now()); err != nil {
		t.Fatal(err)
	}
	// Down past the readers' views step (18) and every step since.
	latest, err := schema.Latest()
	if err != nil {
		t.Fatal(err)
	}
	for v := latest; v >= readerViewsStep; v-- {
		if _, err := schema.Down(db.SQL, schema.DownOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	// The cluster loads the file as it is (startCluster would refuse
	// its version).
	cl := startClusterFrom(t, rqcluster.Options{Nodes: 2}, path, false)
	leader, err := cl.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := plainShellOn(t, backupOf(t, leader.URL), alterAppMigration); err == nil || !strings.Contains(out, "no such function") {
		t.Fatalf("the release before's file should refuse the app's migration without memdecay; got %v\n%s", err, out)
	}
	cluster := nodeDB(t, leader)
	if _, err := schema.Up(cluster.SQL); err != nil {
		t.Fatalf("migrate up through rqlite: %v", err)
	}
	if err := worker.StoreReaderViews(ctx, cluster); err != nil {
		t.Fatalf("storing the readers' views through rqlite: %v", err)
	}
	for _, n := range cl.Nodes() {
		node := nodeDB(t, n)
		deadline := time.Now().Add(10 * time.Second)
		for {
			var count int
			var ends string
			err := node.SQL.QueryRowContext(ctx, `SELECT count(*), coalesce(group_concat(e, ' '), '')
				FROM (SELECT end_a || '>' || end_b AS e FROM mem_edges_effective ORDER BY 1)`).Scan(&count, &ends)
			if err == nil && count == 3 && ends == "1>2 1>3 2>3" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %s: mem_edges_effective: %d edges %q, %v", n.ID, count, ends, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if out, err := plainShellOn(t, backupOf(t, cl.Nodes()[1].URL), alterAppMigration); err != nil || !strings.Contains(out, "migrated") {
		t.Fatalf("the app's migration without memdecay on the node's file: %v\n%s", err, out)
	}
}

// backupOf is a file holding node url's own database (its backup).
func backupOf(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/db/backup?noleader")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("backup of %s: %s %v", url, resp.Status, err)
	}
	path := filepath.Join(t.TempDir(), "node.db")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// plainShellOn runs script in the sqlite3 shell on path without memdecay,
// stopping at the first error.
func plainShellOn(t *testing.T, path, script string) (string, error) {
	t.Helper()
	cmd := exec.Command("sqlite3", "-bail", path)
	cmd.Stdin = strings.NewReader(script)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
