package sweep

import (
	"context"
	"fmt"

	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/report"
)

// ListInvalid lists every row a sweep now would skip as invalid, by kind
// and id: all of those a sweep's report names InvalidSampleSize of. It is
// the sweep's own rules in a dry run, so the file is only read.
func ListInvalid(ctx context.Context, db *memdb.DB) ([]report.InvalidRow, error) {
	r, err := Sweep(ctx, db, Options{DryRun: true, allInvalid: true})
	if err != nil {
		return nil, fmt.Errorf("invalid rows: %w", err)
	}
	return r.InvalidRows.Sample, nil
}
