package worker

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/memdecay/memdecay/schema"
)

//go:embed demo.sql
var demoSQL string

// DemoSweepAt is the active hour the demo sweeps at, 20 hours after the
// sample graph's last activity.
const DemoSweepAt = 500.0

// LoadDemo migrates db and loads the embedded sample memory graph.
func LoadDemo(ctx context.Context, db *DB) error {
	if _, err := schema.Up(db.SQL); err != nil {
		return err
	}
	if err := db.UseWAL(); err != nil {
		return err
	}
	var n int
	if err := db.SQL.QueryRowContext(ctx, "SELECT count(*) FROM mem_blocks").Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return fmt.Errorf("demo: %s already holds %d blocks; the demo needs a fresh file", db.Path, n)
	}
	if _, err := db.SQL.ExecContext(ctx, demoSQL); err != nil {
		return fmt.Errorf("demo: loading the sample graph: %w", err)
	}
	return nil
}
