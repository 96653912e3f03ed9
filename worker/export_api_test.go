package worker

import (
	"github.com/memdecay/memdecay/worker/internal/store"
)

// Names the tests of package worker_test use that the root does not
// export: the packages below hold them.

// WALSizeLimit is the size a sweep cuts a file's WAL back to when it
// restarts it: SQLite reuses a WAL from its start but never shrinks it by
// itself, so one that a long read transaction let grow would stay that big.
const WALSizeLimit = store.WALSizeLimit
