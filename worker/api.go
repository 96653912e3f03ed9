package worker

import (
	"github.com/memdecay/memdecay/worker/internal/memdb"
)

// The root's API: each name is the one of the package below that
// holds it now (docs/design.md has the layers).

// DB is a memory database opened by the worker.
type DB = memdb.DB

// DisplayName is a database argument as messages and logs show it: URLs
// with their passwords hidden.
func DisplayName(db string) string {
	return memdb.DisplayName(db)
}

// ErrBadURL: --db names an rqlite node in a way memworker cannot use (it
// does not parse, or carries a path or an option memworker refuses).
// Nothing was sent.
var ErrBadURL = memdb.ErrBadURL

var ErrSweepRunning = memdb.ErrSweepRunning

// IsRqliteURL reports whether --db names an rqlite node rather than a file.
func IsRqliteURL(db string) bool {
	return memdb.IsRqliteURL(db)
}

// Open checks that path is a SQLite file (refusing anything else without
// touching it) and opens it with a busy timeout. It leaves the journal mode
// alone: UseWAL switches once the file is known to be a memory database.
func Open(path string, opt OpenOptions) (*DB, error) {
	return memdb.Open(path, opt)
}

// OpenMemory opens an existing, migrated memory database for sweeps and
// reports, failing with a clear message when the schema is missing or newer.
func OpenMemory(path string, readOnly bool) (*DB, error) {
	return memdb.OpenMemory(path, readOnly)
}

// OpenOptions says how to open a database file.
type OpenOptions = memdb.OpenOptions
