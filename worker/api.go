package worker

import (
	"context"
	"database/sql"
	"time"

	"github.com/memdecay/memdecay/worker/internal/adapter"
	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/report"
	"github.com/memdecay/memdecay/worker/internal/settings"
	"github.com/memdecay/memdecay/worker/internal/store"
	"github.com/memdecay/memdecay/worker/internal/sweep"
	"github.com/memdecay/memdecay/worker/mapping"
)

// The root's API: each name is the one of the package below that
// holds it now (docs/design.md has the layers).

// Config is the settings a database carries in mem_config, with the
// defaults the schema seeds.
type Config = settings.Config

// ConfigKeys lists every setting, in the order `config get` prints them.
var ConfigKeys = settings.ConfigKeys

// ConfigValues reads mem_config as text, keyed by name.
func ConfigValues(ctx context.Context, q memdb.Querier) (map[string]string, error) {
	return settings.ConfigValues(ctx, q)
}

// DB is a memory database opened by the worker.
type DB = memdb.DB

// DeclareMapping checks m against the database's schema and stores it as
// the database's mapping (mem_mapping), in one transaction, refused while a
// sweep runs: a sweep reads the mapping once, when it starts. The derived
// state was computed for the tables of the mapping before, so its
// fingerprint goes and the next sweep computes every row.
func DeclareMapping(ctx context.Context, db *DB, m *mapping.Mapping, source string, now time.Time) error {
	return adapter.DeclareMapping(ctx, db, m, source, now)
}

// DefaultChunkSize bounds the rows one apply transaction touches while an
// app writes to the same file, so that app never waits long for the lock.
const DefaultChunkSize = store.DefaultChunkSize

// DefaultPause is the least time the lock stays free between two of the
// sweep's transactions: enough for a writer already retrying to take it.
const DefaultPause = store.DefaultPause

// DefaultSoloChunkSize caps the rows per apply transaction while no other
// connection writes to the file: fewer, bigger commits copy each index page
// into the WAL (and back) fewer times. The cap is loose on purpose: the
// time a transaction may hold the lock, SoloHold, is the bound that keeps
// an app that starts writing from waiting long. Once an app has written,
// the sweep takes ChunkSize rows at a time.
const DefaultSoloChunkSize = store.DefaultSoloChunkSize

// DefaultSoloHold bounds how long one of those bigger transactions holds
// the write lock, on any machine: an app that starts writing waits at
// least for the one under way (bench/README.md has the measurements).
const DefaultSoloHold = store.DefaultSoloHold

// DisplayName is a database argument as messages and logs show it: URLs
// with their passwords hidden.
func DisplayName(db string) string {
	return memdb.DisplayName(db)
}

// ErrBadSetting is an unknown key or a value out of its range.
var ErrBadSetting = settings.ErrBadSetting

// ErrBadURL: --db names an rqlite node in a way memworker cannot use (it
// does not parse, or carries a path or an option memworker refuses).
// Nothing was sent.
var ErrBadURL = memdb.ErrBadURL

// ErrClockBack refuses moving the active-hours clock back: sweeps already
// decided at the later clock.
var ErrClockBack = settings.ErrClockBack

// ErrClockBehind: a sweep was asked at an active hour behind the last
// sweep's (last_curate_at).
var ErrClockBehind = settings.ErrClockBehind

var ErrSweepRunning = memdb.ErrSweepRunning

// IsRqliteURL reports whether --db names an rqlite node rather than a file.
func IsRqliteURL(db string) bool {
	return memdb.IsRqliteURL(db)
}

// ListInvalid lists every row a sweep now would skip as invalid, by kind
// and id: all of those a sweep's report names InvalidSampleSize of. It is
// the sweep's own rules in a dry run, so the file is only read.
func ListInvalid(ctx context.Context, db *DB) ([]report.InvalidRow, error) {
	return sweep.ListInvalid(ctx, db)
}

// ListInvalidCommand is the command that lists every invalid row, where a
// report names only InvalidSampleSize of them.
const ListInvalidCommand = report.ListInvalidCommand

// LoadConfig reads and validates mem_config.
func LoadConfig(ctx context.Context, q memdb.Querier) (Config, error) {
	return settings.LoadConfig(ctx, q)
}

// LookupConfigKey finds a setting by name.
func LookupConfigKey(name string) (settings.ConfigKey, bool) {
	return settings.LookupConfigKey(name)
}

// Mapping reads the mapping the database declares (the preset mem when it
// declares none) and checks it against the schema as it is now.
func Mapping(ctx context.Context, db *DB) (*mapping.Declared, error) {
	return adapter.Mapping(ctx, db)
}

// NoSweepRunning is the migrations' guard: the schema does not change
// under a running sweep. It runs inside the migration's transaction, so no
// sweep can claim the file between the check and the change.
func NoSweepRunning(ctx context.Context, conn *sql.Conn) error {
	return store.NoSweepRunning(ctx, conn)
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

// Printable is database text (an id, a relation type, a value) as a
// terminal should show it: unchanged when every character is printable,
// else Go-quoted ("a\x1b[2J", "b\nc"), so an id can neither drive the
// terminal nor forge a line of output.
func Printable(s string) string {
	return report.Printable(s)
}

// Report is the result of one sweep (docs/sweep.md, the report), printed by sweep --json
// and stored in mem_sweeps.result.
type Report = report.Report

// SetConfig validates and stores one setting; it refuses moving
// active_hours back (SetConfigForce does it).
func SetConfig(ctx context.Context, q memdb.Querier, key, value string) error {
	return settings.SetConfig(ctx, q, key, value)
}

// SetConfigForce is SetConfig that may move active_hours back.
func SetConfigForce(ctx context.Context, q memdb.Querier, key, value string) error {
	return settings.SetConfigForce(ctx, q, key, value)
}

// StoreReaderViews stores the readers' views of the database's declared
// mapping, which the extension serves on every connection that loads it
// (memworker's migrate up runs it after the migrations: a migration
// stores the views of memworker's own tables).
func StoreReaderViews(ctx context.Context, db *DB) error {
	return adapter.StoreReaderViews(ctx, db)
}

// Sweep runs the edge curate sweep (docs/sweep.md): plan every phase at one
// snapshot into temp tables, then (unless DryRun) apply the plan in chunks,
// each chunk's removals and their events in one transaction.
func Sweep(ctx context.Context, db *DB, opt SweepOptions) (*Report, error) {
	return sweep.Sweep(ctx, db, opt)
}

// SweepOptions controls one sweep. The zero value is the sweep the CLI runs
// by default: Sweep applies the defaults below for every caller.
type SweepOptions = sweep.Options
