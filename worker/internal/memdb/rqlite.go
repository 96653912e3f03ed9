package memdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/memdecay/memdecay/worker/internal/nodeurl"
	"github.com/memdecay/memdecay/worker/internal/rqlite"
)

// SplitURLs splits a list of rqlite URLs (urlList), each a node's address
// when there are several; one is left for OpenRqlite to judge.
func SplitURLs(list string) ([]string, error) {
	urls := URLList(list)
	if len(urls) == 1 {
		return urls, nil
	}
	// Every URL is checked before any is swept, as one URL is: a mistake
	// in one is a usage mistake (ErrBadURL), not one failed database.
	for _, u := range urls {
		if _, err := parseNodeURL(u); err != nil {
			return nil, fmt.Errorf("%w (--db takes rqlite URLs separated by commas; files and URLs do not mix)", err)
		}
	}
	return urls, nil
}

// URLList splits a list of URLs at the commas that start another URL (a
// comma inside one, in a password say, stays with it), trimming blanks.
func URLList(list string) []string {
	var urls []string
	for _, part := range strings.Split(list, ",") {
		if u := strings.TrimSpace(part); IsRqliteURL(u) || len(urls) == 0 {
			urls = append(urls, u)
		} else {
			urls[len(urls)-1] += "," + part
		}
	}
	return urls
}

// DisplayName is a database argument as messages and logs show it: URLs
// with their passwords hidden.
func DisplayName(db string) string {
	if !IsRqliteURL(db) {
		return db
	}
	urls := URLList(db)
	for i, u := range urls {
		urls[i] = redactURL(u)
	}
	return strings.Join(urls, ",")
}

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

// Backup copies the rqlite database of db (read at the leader) into the
// file path.
func Backup(ctx context.Context, db *DB, path string) error { return rqlite.Backup(ctx, db.url, path) }

// ErrBadURL: --db names an rqlite node in a way memworker cannot use (it
// does not parse, or carries a path or an option memworker refuses).
// Nothing was sent.
var ErrBadURL = nodeurl.ErrBad

// parseNodeURL and redactURL are nodeurl's, where an address is read and
// shown.
var (
	parseNodeURL = nodeurl.Parse
	redactURL    = nodeurl.Redact
)
