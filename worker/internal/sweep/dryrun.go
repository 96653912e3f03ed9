package sweep

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/report"
)

// dryRunCopy runs a dry run against a copy of the cluster's database
// (rqlite's backup, read at the leader): on a replica even the working
// tables would be writes, and a dry run changes no byte.
func dryRunCopy(ctx context.Context, db *memdb.DB, opt Options) (*report.Report, error) {
	dir, err := os.MkdirTemp("", "memworker-dry-run-")
	if err != nil {
		return nil, fmt.Errorf("sweep --dry-run: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "copy.db")
	if err := memdb.Backup(ctx, db, path); err != nil {
		return nil, fmt.Errorf("sweep --dry-run: copying %s: %w", db.Path, err)
	}
	copied, err := memdb.OpenMemory(path, true)
	if err != nil {
		return nil, fmt.Errorf("sweep --dry-run: %w", err)
	}
	defer copied.Close()
	return Sweep(ctx, copied, opt)
}
