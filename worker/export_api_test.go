package worker

import (
	"context"

	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/report"
	"github.com/memdecay/memdecay/worker/internal/restore"
	"github.com/memdecay/memdecay/worker/internal/store"
	"github.com/memdecay/memdecay/worker/internal/sweep"
)

// Names the tests of package worker_test use that the root does not
// export: the packages below hold them.

// ErrBadOption wraps every error of SweepOptions.Validate.
var ErrBadOption = sweep.ErrBadOption

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

// WALSizeLimit is the size a sweep cuts a file's WAL back to when it
// restarts it: SQLite reuses a WAL from its start but never shrinks it by
// itself, so one that a long read transaction let grow would stay that big.
const WALSizeLimit = store.WALSizeLimit
