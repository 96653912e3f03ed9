package worker

import (
	"context"
	"database/sql"
	"time"

	"github.com/memdecay/memdecay/worker/internal/adapter"
	"github.com/memdecay/memdecay/worker/internal/daemon"
	"github.com/memdecay/memdecay/worker/internal/feedback"
	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/readers"
	"github.com/memdecay/memdecay/worker/internal/report"
	"github.com/memdecay/memdecay/worker/internal/restore"
	"github.com/memdecay/memdecay/worker/internal/settings"
	"github.com/memdecay/memdecay/worker/internal/store"
	"github.com/memdecay/memdecay/worker/internal/sweep"
	"github.com/memdecay/memdecay/worker/mapping"
)

// The root's API: each name is the one of the package below that
// holds it now (docs/design.md has the layers).

// AdvanceClock adds hours of activity to the session-aware clock and
// returns the new reading.
func AdvanceClock(ctx context.Context, db *DB, hours float64) (float64, error) {
	return readers.AdvanceClock(ctx, db, hours)
}

// Config is the settings a database carries in mem_config, with the
// defaults the schema seeds.
type Config = settings.Config

// ConfigKeys lists every setting, in the order `config get` prints them.
var ConfigKeys = settings.ConfigKeys

// ConfigValues reads mem_config as text, keyed by name.
func ConfigValues(ctx context.Context, q memdb.Querier) (map[string]string, error) {
	return settings.ConfigValues(ctx, q)
}

// Curve is one decay curve in use: the weight left of an edge of weight 1
// against elapsed time on its clock.
type Curve = readers.Curve

// DB is a memory database opened by the worker.
type DB = memdb.DB

// DecayEvent is one removal from mem_events.
type DecayEvent = readers.DecayEvent

// Decayed lists recent removals and the edges nearest their horizon, every
// model and clock together (a wall-clock day counted as 24 hours); through
// a mapping, the app's removals and links.
func Decayed(ctx context.Context, db *DB, limit int) ([]DecayEvent, []EdgeOutlook, error) {
	return readers.Decayed(ctx, db, limit)
}

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

// EdgeExplanation says why an edge will or will not decay, and when. Its
// numbers are mem_edges_effective's (one source for explain, decayed and
// the views): the edge's model and clock, its tiered λ or its policy, its
// effective weight, threshold and time left.
type EdgeExplanation = readers.EdgeExplanation

// EdgeOutlook is an edge close to its decay horizon, as
// mem_edges_effective has it: the time left on its own clock (active hours,
// or days on the wall clock), and in hours either way.
type EdgeOutlook = readers.EdgeOutlook

// EdgeSketch draws the edge between a and b as mem_edges_effective sees it:
// its tiered or policy curve from its anchor, its threshold and where the
// curve crosses it (curve_horizon from the anchor, so a row already past it
// is marked where it crossed). A pinned edge, an agent edge on the tiered
// model and an edge with no anchor time keep their weight: a flat line.
func EdgeSketch(ctx context.Context, db *DB, a, b string) (*Sketch, error) {
	return readers.EdgeSketch(ctx, db, a, b, nil)
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

// ErrOneTrigger: a daemon runs on exactly one of a schedule, an interval
// or when due.
var ErrOneTrigger = daemon.ErrOneTrigger

var ErrSweepRunning = memdb.ErrSweepRunning

// ExpandPaths turns a database argument into databases: a plain path as
// is, a glob pattern (*, ?, [) into its matches, sorted, and rqlite URLs
// (one, or several separated by commas: each names a cluster) as given,
// never globbed (? and [ belong to a URL). A pattern matching nothing is
// an error.
func ExpandPaths(pattern string) ([]string, error) {
	return daemon.ExpandPaths(pattern)
}

// ExplainEdge explains the edge between blocks a and b (in either order);
// through a mapping, the link of key a (a b for a key of two columns).
func ExplainEdge(ctx context.Context, db *DB, a, b string) (*EdgeExplanation, error) {
	return readers.ExplainEdge(ctx, db, a, b, nil)
}

// ExplainFact scores a fact at the wall time a sweep would take (machine,
// the machine's reading, unless wall_clock is pinned: commandClock) and
// says why it will or will not be archived or pruned, and when.
func ExplainFact(ctx context.Context, db *DB, id string, machine time.Time) (*FactExplanation, error) {
	return readers.ExplainFact(ctx, db, id, machine)
}

// FactChange is the before and after of a feedback or recall.
type FactChange = feedback.FactChange

// FactExplanation says where a fact stands and when a sweep will act on it.
type FactExplanation = readers.FactExplanation

// FactSketch draws a fact's score against days since its last use, with
// the archive and prune thresholds of its tier and where the score crosses
// each (tideline_horizon from the last use, so a fact already past one is
// marked where it crossed). A confirmed fact is immune: its lines say so.
func FactSketch(ctx context.Context, db *DB, x *FactExplanation) (*Sketch, error) {
	return readers.FactSketch(ctx, db, x)
}

// Feedback applies explicit feedback to a fact and logs it: up raises
// importance and resets the decay clock; down lowers importance and leaves
// the clock to do its work. machine is the machine's wall time; a pinned
// wall_clock wins over it (commandClock).
func Feedback(ctx context.Context, db *DB, id string, up bool, machine time.Time) (*FactChange, error) {
	return feedback.Feedback(ctx, db, id, up, machine)
}

// FleetResult is one file's sweep.
type FleetResult = daemon.FleetResult

// GetStatus reads counts, the clock and the last sweep.
func GetStatus(ctx context.Context, db *DB) (*Status, error) {
	return readers.GetStatus(ctx, db)
}

// HumanSpan is a time on a clock as a person reads it: minutes, hours,
// days or years (of 365 days), with three significant digits at most.
// Active hours read as hours of the clock: "19 days" is 460 active hours.
func HumanSpan(v float64, clock string) string {
	return readers.HumanSpan(v, clock)
}

// IsFleet reports whether a database argument may name several
// databases: a glob of files, or several rqlite URLs.
func IsFleet(db string) bool {
	return daemon.IsFleet(db)
}

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

// Plot reads the data memworker plot draws from a memory database opened
// with OpenMemory (through a mapping, the time left of the app's links).
func Plot(ctx context.Context, db *DB) (PlotData, error) {
	return readers.Plot(ctx, db)
}

// PlotData is everything memworker plot draws.
type PlotData = readers.PlotData

// Printable is database text (an id, a relation type, a value) as a
// terminal should show it: unchanged when every character is printable,
// else Go-quoted ("a\x1b[2J", "b\nc"), so an id can neither drive the
// terminal nor forge a line of output.
func Printable(s string) string {
	return report.Printable(s)
}

// Recall records that a fact was used: access count + 1 and the decay clock
// reset. A passive auto-recall reinforces nothing and writes nothing.
// machine is the machine's wall time (commandClock).
func Recall(ctx context.Context, db *DB, id string, auto bool, machine time.Time) (*FactChange, error) {
	return feedback.Recall(ctx, db, id, auto, machine)
}

// Report is the result of one sweep (docs/sweep.md, the report), printed by sweep --json
// and stored in mem_sweeps.result.
type Report = report.Report

// RestoreBlock brings back an archived block with its tags and the edges
// removed with it (those whose other end is active).
func RestoreBlock(ctx context.Context, db *DB, id string, wall time.Time) (*Restored, error) {
	return restore.RestoreBlock(ctx, db, id, wall)
}

// RestoreEdge brings back the edge between a and b from its last removal.
//
// Through a mapping an edge is named by its key: a, or a and b for a key
// of two columns (then in the key's order).
func RestoreEdge(ctx context.Context, db *DB, a, b string, wall time.Time) (*Restored, error) {
	return restore.RestoreEdge(ctx, db, a, b, wall)
}

// RestoreFact brings back an archived or pruned fact as active.
func RestoreFact(ctx context.Context, db *DB, id string, wall time.Time) (*Restored, error) {
	return restore.RestoreFact(ctx, db, id, wall)
}

// Restored says what a restore brought back.
type Restored = restore.Restored

// Run sweeps the databases pattern names (ExpandPaths: a file, a glob of
// files, or rqlite URLs) on the schedule until ctx ends, then returns nil:
// a sweep in flight stops after its current chunk, which commits or rolls
// back whole. Failed rounds are logged and retried after a growing backoff.
func Run(ctx context.Context, pattern string, opt RunOptions) error {
	return daemon.Run(ctx, pattern, opt)
}

// RunOptions configures the daemon: exactly one of Schedule, Every or
// WhenDue says when to sweep.
type RunOptions = daemon.RunOptions

// SetConfig validates and stores one setting; it refuses moving
// active_hours back (SetConfigForce does it).
func SetConfig(ctx context.Context, q memdb.Querier, key, value string) error {
	return settings.SetConfig(ctx, q, key, value)
}

// SetConfigForce is SetConfig that may move active_hours back.
func SetConfigForce(ctx context.Context, q memdb.Querier, key, value string) error {
	return settings.SetConfigForce(ctx, q, key, value)
}

// Sketch is one row's decay over its own time axis, for explain --plot:
// the curve from its last anchor, where "now" is on it, and where it
// crosses each threshold that acts on it.
type Sketch = readers.Sketch

// SketchLine is a threshold and when the curve falls below it (nil: never).
type SketchLine = readers.SketchLine

// Status is a database's health at a glance.
type Status = readers.Status

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

// SweepFile opens one memory database (read-only for a dry run), sweeps it
// and closes it.
func SweepFile(ctx context.Context, path string, opt SweepOptions) (*Report, error) {
	return daemon.SweepFile(ctx, path, opt)
}

// SweepFleet sweeps every database (a file or an rqlite cluster), at most
// jobs at a time, and returns one result per database in the order given,
// with the total.
func SweepFleet(ctx context.Context, paths []string, jobs int, opt SweepOptions) ([]FleetResult, daemon.FleetTotal) {
	return daemon.SweepFleet(ctx, paths, jobs, opt)
}

// SweepOptions controls one sweep. The zero value is the sweep the CLI runs
// by default: Sweep applies the defaults below for every caller.
type SweepOptions = sweep.Options

// SweepRemovals is what one finished sweep removed, by kind: blocks
// archived (orphans included) and the edges that went with them, edges
// pruned, decayed and removed by a policy, facts archived or pruned.
type SweepRemovals = readers.SweepRemovals

// TimeLeft is the time left before decay of the live edges of one group (a
// tier pair or a policy), on the group's clock.
type TimeLeft = readers.TimeLeft

// Errors callers branch on, and the parts of a Report, held below.

// ErrBadOption wraps every error of SweepOptions.Validate.
var ErrBadOption = sweep.ErrBadOption

// ErrBulkReplica: a bulk sweep (SweepOptions.Bulk) was asked of rqlite,
// where every transaction is one request; it runs only on a file.
var ErrBulkReplica = store.ErrBulkReplica

// ErrDatabaseBusy: another connection held the file's write lock longer
// than the busy timeout (BusyTimeoutMS). Like ErrSweepRunning, it means
// "try again later", and matches ErrSweepRunning too (errors.Is), so every
// caller that waits or retries for one does for the other.
var ErrDatabaseBusy = store.ErrDatabaseBusy

// ErrEditedEvent means an event's snapshot names another row than the
// event's subject: its record was edited, and a restore will not trust it.
var ErrEditedEvent = restore.ErrEditedEvent

// ErrLeaseLost: the sweep stopped because another sweep took its place
// (it was paused or cut off past its lease); it wrote nothing more.
var ErrLeaseLost = store.ErrLeaseLost

// ErrNoExtension: a node answers without memdecay's functions.
var ErrNoExtension = memdb.ErrNoExtension

// ErrNoFact is returned for an unknown fact id.
var ErrNoFact = memdb.ErrNoFact

// ErrNotSQLite: the file is not a SQLite database (or not a regular file).
var ErrNotSQLite = memdb.ErrNotSQLite

// ErrNothingToRestore means the event log holds no removal to undo.
var ErrNothingToRestore = restore.ErrNothingToRestore

// FactCounts is the fact lifecycle tally.
type FactCounts = report.FactCounts

// InvalidRow names one skipped row: its kind (block, edge, fact), its id
// and what is wrong with it; through a mapping, also the app's table it
// is in (Kind names memworker's own).
type InvalidRow = report.InvalidRow

// InvalidSampleSize is how many invalid rows a report names (ListInvalid
// lists them all).
const InvalidSampleSize = report.InvalidSampleSize

// OpenRqlite connects to the rqlite cluster of the node at rawURL (any node:
// requests follow the leader) and checks that it answers with memdecay's
// functions. Basic auth comes from the URL or from MEMWORKER_RQLITE_USER and
// MEMWORKER_RQLITE_PASSWORD. A URL it cannot use (parseNodeURL) is refused
// with ErrBadURL before anything is sent.
func OpenRqlite(ctx context.Context, rawURL string) (*DB, error) {
	return memdb.OpenRqlite(ctx, rawURL)
}

// PolicyCount is the per-relation-policy tally.
type PolicyCount = report.PolicyCount

// ErrNoDatabase: the database file does not exist (and was not to be
// created).
var ErrNoDatabase = memdb.ErrNoDatabase

// ErrReadOnly: the database is open read-only; only a dry run can sweep it.
var ErrReadOnly = sweep.ErrReadOnly

// ErrMappingUnsupported wraps an error of a mapping a sweep cannot go
// through.
var ErrMappingUnsupported = adapter.ErrMappingUnsupported

// InvalidRows are the rows a sweep skipped: how many, and a sample named.
type InvalidRows = report.InvalidRows

// EdgeSample is one decayed edge in the report.
type EdgeSample = report.EdgeSample
