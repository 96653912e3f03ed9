package worker

import (
	"context"

	"github.com/memdecay/memdecay/worker/internal/memdb"
)

// Names the tests of package worker_test use that the root does not
// export: the packages below hold them.

// ErrNoExtension: a node answers without memdecay's functions.
var ErrNoExtension = memdb.ErrNoExtension

// ErrNoFact is returned for an unknown fact id.
var ErrNoFact = memdb.ErrNoFact

var ErrNotSQLite = memdb.ErrNotSQLite

// OpenRqlite connects to the rqlite cluster of the node at rawURL (any node:
// requests follow the leader) and checks that it answers with memdecay's
// functions. Basic auth comes from the URL or from MEMWORKER_RQLITE_USER and
// MEMWORKER_RQLITE_PASSWORD. A URL it cannot use (parseNodeURL) is refused
// with ErrBadURL before anything is sent.
func OpenRqlite(ctx context.Context, rawURL string) (*DB, error) {
	return memdb.OpenRqlite(ctx, rawURL)
}
