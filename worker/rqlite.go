package worker

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/memdecay/memdecay/worker/internal/nodeurl"
	"github.com/memdecay/memdecay/worker/internal/rqlite"
)

// A database on rqlite: opened through the database/sql driver of
// internal/rqlite (requests, transactions as one request, deadlines,
// retries, backup), swept by rqstore.go.

// IsRqliteURL reports whether --db names an rqlite node rather than a file.
func IsRqliteURL(db string) bool { return nodeurl.Is(db) }

// ErrNoExtension: a node answers without memdecay's functions.
var ErrNoExtension = errors.New("the rqlite node has not loaded memdecay")

// OpenRqlite connects to the rqlite cluster of the node at rawURL (any node:
// requests follow the leader) and checks that it answers with memdecay's
// functions. Basic auth comes from the URL or from MEMWORKER_RQLITE_USER and
// MEMWORKER_RQLITE_PASSWORD. A URL it cannot use (parseNodeURL) is refused
// with ErrBadURL before anything is sent.
func OpenRqlite(ctx context.Context, rawURL string) (*DB, error) {
	u, err := parseNodeURL(rawURL)
	if err != nil {
		return nil, err
	}
	if u.User == nil {
		if user := os.Getenv("MEMWORKER_RQLITE_USER"); user != "" {
			u.User = url.UserPassword(user, os.Getenv("MEMWORKER_RQLITE_PASSWORD"))
		}
	}
	name := redactURL(rawURL)
	db, err := sql.Open(rqlite.DriverName, u.String())
	if err != nil {
		return nil, err
	}
	var probe float64
	err = db.QueryRowContext(ctx, `SELECT effective_weight(1.0, 0.0, 0.0)`).Scan(&probe)
	if err != nil {
		db.Close()
		if strings.Contains(err.Error(), "no such function") {
			return nil, fmt.Errorf("%s: %w (%v): start every node with -extensions-path pointing at memdecay.so (nothing was changed)",
				name, ErrNoExtension, err)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &DB{SQL: db, Path: name, Rqlite: true, url: u.String()}, nil
}

// backup copies the rqlite database of db (read at the leader) into the
// file path.
func backup(ctx context.Context, db *DB, path string) error { return rqlite.Backup(ctx, db.url, path) }

// dryRunCopy runs a dry run against a copy of the cluster's database
// (rqlite's backup, read at the leader): on a replica even the working
// tables would be writes, and a dry run changes no byte.
func dryRunCopy(ctx context.Context, db *DB, opt SweepOptions) (*Report, error) {
	dir, err := os.MkdirTemp("", "memworker-dry-run-")
	if err != nil {
		return nil, fmt.Errorf("sweep --dry-run: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "copy.db")
	if err := backup(ctx, db, path); err != nil {
		return nil, fmt.Errorf("sweep --dry-run: copying %s: %w", db.Path, err)
	}
	copied, err := OpenMemory(path, true)
	if err != nil {
		return nil, fmt.Errorf("sweep --dry-run: %w", err)
	}
	defer copied.Close()
	return Sweep(ctx, copied, opt)
}
