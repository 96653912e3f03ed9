package store

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/memdecay/memdecay/worker/internal/memdb"
)

// MEMWORKER_TRACE=1 prints each phase's time and each sweep statement
// slower than traceMin, with its query plan, to stderr: where a big sweep
// spends its time.
var traceSQL = os.Getenv("MEMWORKER_TRACE") != ""

// traceMin is the slowest statement not traced; MEMWORKER_TRACE=5ms lowers it.
var traceMin = func() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("MEMWORKER_TRACE")); err == nil {
		return d
	}
	return 20 * time.Millisecond
}()

// Phase times a step of the sweep; call the function it returns at the
// step's end.
func Phase(name string) func() {
	if !traceSQL {
		return func() {}
	}
	began := time.Now()
	return func() {
		fmt.Fprintf(os.Stderr, "memworker trace: phase %s %v (%s to %s)\n", name, time.Since(began),
			began.Format("15:04:05.000"), time.Now().Format("15:04:05.000"))
	}
}

// Tracef prints a note of the sweep's pacing when tracing.
func Tracef(format string, args ...any) {
	if traceSQL {
		fmt.Fprintf(os.Stderr, "memworker trace: "+format+"\n", args...)
	}
}

// TraceTook prints the time of a step that is not a named statement (a
// commit, a checkpoint, a count, a query run directly) when slower than
// traceMin: at 10M edges an hourly sweep spends as long in them as in its
// statements.
func TraceTook(what string, began time.Time) {
	if took := time.Since(began); traceSQL && took > traceMin {
		fmt.Fprintf(os.Stderr, "memworker trace: %s %v\n", what, took)
	}
}

// trace prints a slow statement's time and query plan.
func trace(ctx context.Context, q memdb.Querier, name string, took time.Duration, query string, args []any) {
	plan := ""
	if rows, err := q.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...); err == nil {
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if rows.Scan(&id, &parent, &unused, &detail) == nil {
				plan += "\n    " + detail
			}
		}
		rows.Close()
	}
	fmt.Fprintf(os.Stderr, "memworker trace: %s %v%s\n", name, took, plan)
}
