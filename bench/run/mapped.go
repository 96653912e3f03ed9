package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The mapped peer: memworker sweeping the same rows kept in an app's own
// tables (app_nodes, app_tags, app_links: integer link ids, the ends as
// columns, an index on each end), through a declared mapping, in place.
// Its copy is converted before the first timed run (not timed); the
// scenario's writes go to the app's tables.

// appTables converts a copy of the generated graph into app-shaped tables
// holding the same rows, in the same key order, and empties memworker's.
var appTables = []string{
	`CREATE TABLE app_nodes (id TEXT PRIMARY KEY, content TEXT, category TEXT, status TEXT, archive_reason TEXT,
		confidence REAL, reinforcement_count INTEGER NOT NULL DEFAULT 0, last_reinforced_hours REAL, created_at)`,
	`INSERT INTO app_nodes SELECT id, content, category, status, archive_reason, confidence, reinforcement_count,
		last_reinforced_hours, created_at FROM mem_blocks ORDER BY id`,
	`CREATE TABLE app_tags (block_id TEXT NOT NULL, tag TEXT NOT NULL, PRIMARY KEY (block_id, tag))`,
	`INSERT INTO app_tags SELECT block_id, tag FROM mem_block_tags ORDER BY block_id, tag`,
	`CREATE TABLE app_links (id INTEGER PRIMARY KEY, from_id TEXT NOT NULL, to_id TEXT NOT NULL, weight REAL,
		reinforcement_count INTEGER NOT NULL DEFAULT 0, relation_type TEXT, origin TEXT, last_active_hours REAL,
		last_observed_at, pinned INTEGER NOT NULL DEFAULT 0, note TEXT, created_at)`,
	`INSERT INTO app_links (from_id, to_id, weight, reinforcement_count, relation_type, origin, last_active_hours,
		last_observed_at, pinned, note, created_at)
	 SELECT from_id, to_id, weight, reinforcement_count, relation_type, origin, last_active_hours,
		last_observed_at, pinned, note, created_at FROM mem_edges ORDER BY from_id, to_id`,
	`CREATE INDEX app_links_from ON app_links (from_id)`,
	`CREATE INDEX app_links_to ON app_links (to_id)`,
	`DELETE FROM mem_edges`, `DELETE FROM mem_block_tags`, `DELETE FROM mem_blocks`,
	`DELETE FROM mem_dirty_edges`, `DELETE FROM mem_dirty_blocks`, `DELETE FROM mem_dirty_facts`,
	`DELETE FROM mem_edge_due`, `DELETE FROM mem_block_state`,
}

// appMapping is the mapping of appTables.
const appMapping = `[nodes]
table = "app_nodes"
key = "id"
last_used = "last_reinforced_hours"
category = "category"
tags = { table = "app_tags", node = "block_id", tag = "tag" }
status = "status"
status_active = ["active"]
status_archived = "archived"
archive_reason = "archive_reason"
confidence = "confidence"
reinforcement_count = "reinforcement_count"

[edges]
table = "app_links"
key = "id"
from = "from_id"
to = "to_id"
kind = "relation_type"
weight = "weight"
reinforcement_count = "reinforcement_count"
origin = "origin"
pinned = "pinned"
last_active = "last_active_hours"
last_observed = "last_observed_at"
`

// appWrites are a scenario's writes as the app makes them to its own
// tables (the same columns under other table names).
var appWrites = strings.NewReplacer("mem_edges", "app_links", "mem_blocks", "app_nodes")

// edgeTable is where a copy keeps its edges: the app's table once the
// mapped peer converted it.
func edgeTable(ctx context.Context, db *sql.DB) (string, error) {
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'app_links'`).Scan(&n); err != nil {
		return "", err
	}
	if n > 0 {
		return "app_links", nil
	}
	return "mem_edges", nil
}

// mappedPeer is memworker sweeping the app's tables of a converted copy.
func mappedPeer(o Options, work string) Peer {
	sweep := Peer{Key: "mapped", Name: "memworker mapped", Worker: true, cmd: func(ctx context.Context, db string) (*exec.Cmd, error) {
		return exec.CommandContext(ctx, o.Worker, "sweep", "--db", db, "--json"), nil
	}}
	sweep.runWith = func(ctx context.Context, db string, writes []string) (Outcome, error) {
		if err := toAppTables(ctx, o, work, db); err != nil {
			return Outcome{}, fmt.Errorf("converting the copy to an app's tables: %w", err)
		}
		translated := make([]string, len(writes))
		for i, w := range writes {
			translated[i] = appWrites.Replace(w)
		}
		if err := execAll(ctx, db, translated); err != nil {
			return Outcome{}, fmt.Errorf("the app's writes: %w", err)
		}
		return sweep.Run(ctx, db)
	}
	return sweep
}

// toAppTables converts the copy db (unless it is already) and declares
// the mapping, then vacuums, so its file holds no pages of memworker's
// emptied tables.
func toAppTables(ctx context.Context, o Options, work, db string) error {
	conn, err := openDB(db, nil)
	if err != nil {
		return err
	}
	table, err := edgeTable(ctx, conn)
	conn.Close()
	if err != nil || table == "app_links" {
		return err
	}
	if err := execAll(ctx, db, appTables); err != nil {
		return err
	}
	file := filepath.Join(work, "app-mapping.toml")
	if err := os.WriteFile(file, []byte(appMapping), 0o644); err != nil {
		return err
	}
	if out, err := exec.CommandContext(ctx, o.Worker, "map", "load", "--db", db, file).CombinedOutput(); err != nil {
		return fmt.Errorf("memworker map load: %w\n%s", err, out)
	}
	conn, err = openDB(db, nil)
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = conn.ExecContext(ctx, `VACUUM`)
	return errors.Join(err, conn.Close())
}
