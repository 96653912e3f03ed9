package store

import (
	"context"
	"database/sql/driver"
	"fmt"
)

// The sweep's own removals (remove_edges) settle their edges' ends and due
// times in their transaction, so memworker's queue trigger on the edges
// (mem_edges', or a mapping's on the app's table) has nothing to do for
// them: its WHEN clause finds the sweep_removing row and skips. Firing it
// still costs each deleted row a trigger program (about a fifth of the
// delete), and makes SQLite copy every page the delete changes into a
// statement journal. On a file, the sweep's connection turns its triggers
// off for those statements instead, through the linked build's
// memdecay_connection_triggers, but only while the tables they write carry
// no trigger but memworker's own (quiet_triggers): an app's trigger fires
// as it always did.

// quietLists are the statement lists run with the connection's triggers
// off when quietAllowed says so.
var quietLists = map[string]bool{"remove_edges": true}

// QuietAllowed says whether quietLists may run with the triggers off now:
// the function is there (the linked build; asked once per store) and no
// other trigger would be skipped. It is asked inside the transaction the
// statements run in, so no app can add a trigger in between.
func (st *fileStore) QuietAllowed(ctx context.Context) bool {
	if st.quiet == quietUnknown {
		st.quiet = quietNo
		var on int64
		if st.conn.QueryRowContext(ctx, "SELECT memdecay_connection_triggers(NULL)").Scan(&on) == nil && on == 1 {
			st.quiet = quietYes
		}
	}
	var others int64
	return st.quiet == quietYes && st.conn.QueryRowContext(ctx, st.opt.sql().Stmts("quiet_triggers")[0]).Scan(&others) == nil && others == 0
}

const (
	quietUnknown = iota
	quietYes
	quietNo
)

// withTriggers turns the connection's triggers on or off. A connection
// left with its triggers off is never handed back to the pool (see close).
func (st *fileStore) withTriggers(ctx context.Context, on bool) error {
	state := map[bool]string{false: "off", true: "on"}
	var now bool
	if err := st.conn.QueryRowContext(ctx, "SELECT memdecay_connection_triggers(?)", on).Scan(&now); err != nil {
		st.triggersOff = true
		return fmt.Errorf("turning the sweep connection's triggers %s: %w", state[on], err)
	}
	st.triggersOff = !now
	if now != on {
		return fmt.Errorf("turning the sweep connection's triggers %s: SQLite left them %s", state[on], state[now])
	}
	return nil
}

// discardIfQuiet drops a connection whose triggers could not be turned
// back on, rather than let the pool hand it to other code.
func (st *fileStore) discardIfQuiet() {
	if st.triggersOff {
		st.conn.Raw(func(any) error { return driver.ErrBadConn })
	}
}
