package memdb

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	_ "github.com/memdecay/memdecay/ext/shim"
	"github.com/memdecay/memdecay/schema"
)

// Sentinel errors callers branch on.
var (
	ErrNotSQLite    = errors.New("not a SQLite database")
	ErrNoDatabase   = errors.New("no such database file")
	ErrSweepRunning = errors.New("a sweep is already running on this database")
)

// BusyTimeoutMS is how long a statement waits for another writer's lock.
const BusyTimeoutMS = 5000

// DB is a memory database opened by the worker.
type DB struct {
	SQL      *sql.DB
	Path     string // the file, or the rqlite node's address
	ReadOnly bool
	Rqlite   bool   // an rqlite cluster (rqlite.go), not a file
	url      string // the node's address, credentials included (rqlite)
}

// OpenOptions says how to open a database file.
type OpenOptions struct {
	// ReadOnly: this process will not write (dry runs, reports), and no
	// byte of the file changes. With a -wal beside the file (an app's, open
	// or left by a crash) it is opened read-only, so that -wal is neither
	// copied into the file nor removed. Without one it is opened read-write
	// with its journal mode left alone: there is nothing to copy, and SQLite
	// removes the -wal and -shm it creates on close, which a read-only
	// connection would leave behind. A file that is not writable is opened
	// read-only either way.
	ReadOnly bool
	Create   bool // create the file when missing (migrate up, demo)
}

// Open checks that path is a SQLite file (refusing anything else without
// touching it) and opens it with a busy timeout. It leaves the journal mode
// alone: UseWAL switches once the file is known to be a memory database.
func Open(path string, opt OpenOptions) (*DB, error) {
	if IsRqliteURL(path) {
		db, err := OpenRqlite(context.Background(), path)
		if err == nil {
			db.ReadOnly = opt.ReadOnly
		}
		return db, err
	}
	created, err := checkFile(path, opt.Create)
	if err != nil {
		return nil, err
	}
	mode := "rw"
	_, walErr := os.Stat(path + "-wal")
	switch {
	case opt.ReadOnly && walErr == nil:
		mode = "ro"
	case opt.Create && !opt.ReadOnly:
		mode = "rwc"
	}
	q := dsnValues(mode, !opt.ReadOnly)
	if created && !opt.ReadOnly {
		q.Set("_journal_mode", "WAL") // a new file is ours: WAL from the start
	}
	db, err := openDSN(path, q)
	if err != nil && opt.ReadOnly {
		q.Set("mode", map[string]string{"ro": "rw", "rw": "ro"}[q.Get("mode")])
		db, err = openDSN(path, q)
	}
	if err != nil {
		return nil, err
	}
	return &DB{SQL: db, Path: path, ReadOnly: opt.ReadOnly}, nil
}

// dsnValues are the settings of every connection to a file: its busy
// timeout, its mode and, for one that writes, synchronous NORMAL (durable
// at each checkpoint, WAL commits without an fsync).
func dsnValues(mode string, writes bool) url.Values {
	q := url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(BusyTimeoutMS))
	q.Set("mode", mode)
	if writes {
		q.Set("_synchronous", "NORMAL")
	}
	return q
}

// FileDriver is the database/sql driver a file is opened with
// (mattn/go-sqlite3, with memdecay's functions linked in).
const FileDriver = "sqlite3"

func openDSN(path string, q url.Values) (*sql.DB, error) {
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open(FileDriver, dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}

// OpenBeside opens the file again, with a pool of its own of one
// connection, for work beside a sweep's connection (its checkpoints) that
// must not wait for a connection from a pool an app sized for itself.
func (db *DB) OpenBeside() (*sql.DB, error) {
	if db.Rqlite || db.ReadOnly {
		return nil, fmt.Errorf("%s: opened read-only or on rqlite: nothing to open beside", DisplayName(db.Path))
	}
	side, err := openDSN(db.Path, dsnValues("rw", true))
	if err != nil {
		return nil, err
	}
	side.SetMaxOpenConns(1)
	return side, nil
}

// OpenMemory opens an existing, migrated memory database for sweeps and
// reports, failing with a clear message when the schema is missing or newer.
func OpenMemory(path string, readOnly bool) (*DB, error) {
	db, err := Open(path, OpenOptions{ReadOnly: readOnly})
	if err != nil {
		return nil, err
	}
	if err := schema.Check(db.SQL); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", DisplayName(path), err)
	}
	if !readOnly && !db.Rqlite {
		if err := db.UseWAL(); err != nil {
			db.Close()
			return nil, err
		}
	}
	return db, nil
}

// UseWAL puts the file in WAL mode (persistent), so an app's readers and
// one writer run beside the worker's short transactions.
func (db *DB) UseWAL() error {
	if db.Rqlite {
		return nil // each node keeps its own file as rqlite sets it
	}
	var mode string
	if err := db.SQL.QueryRow("PRAGMA journal_mode = WAL").Scan(&mode); err != nil {
		return fmt.Errorf("%s: setting WAL mode: %w", db.Path, err)
	}
	// SQLite answers with the mode it is in: an in-memory database, or a
	// file whose locks cannot be shared, stays in another.
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("%s: setting WAL mode: the file stays in %q mode (sweeps need WAL beside an app's writes)", db.Path, mode)
	}
	return nil
}

// Close closes the database.
func (db *DB) Close() error { return db.SQL.Close() }

var sqliteMagic = []byte("SQLite format 3\x00")

// checkFile refuses a file that is not SQLite; created reports that it does
// not exist yet (and may be created).
func checkFile(path string, create bool) (created bool, err error) {
	// Stat first: opening a FIFO would wait for a writer forever.
	if info, err := os.Stat(path); err == nil && !info.Mode().IsRegular() {
		return false, fmt.Errorf("%s: %w: it is a %s, not a regular file (refusing to touch it)", path, ErrNotSQLite, fileKind(info.Mode()))
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		if create {
			return true, nil
		}
		return false, fmt.Errorf("%s: %w", path, ErrNoDatabase)
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, len(sqliteMagic))
	n, err := io.ReadFull(f, head)
	if n == 0 && err == io.EOF {
		return false, nil // an empty file is an empty SQLite database
	}
	if err != nil || !bytes.Equal(head, sqliteMagic) {
		return false, fmt.Errorf("%s: %w (refusing to touch it)", path, ErrNotSQLite)
	}
	return false, nil
}

// fileKind names what a path that is not a regular file is.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&os.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case m&os.ModeSocket != 0:
		return "socket"
	case m&os.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// Querier is what both *sql.DB and *sql.Conn offer.
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// ErrNoFact is returned for an unknown fact id.
var ErrNoFact = errors.New("no such fact")
