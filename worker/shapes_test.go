package worker_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/worker"
)

// The derived tables have two homes: the migrations (main) and temp.sql's
// shadow_state (the copies a full sweep or a dry run computes aside). Their
// shapes must stay the same: the sweep copies rows between them by column.
func TestShadowTablesMatchTheirMainTables(t *testing.T) {
	ctx := context.Background()
	db, _ := newMemory(t, richFixture)
	sweepAt(t, db, 100)
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	shape := func(schema, table string) string {
		rows, err := conn.QueryContext(ctx, fmt.Sprintf(`SELECT name, type, "notnull", pk FROM %s.pragma_table_info('%s') ORDER BY cid`, schema, table))
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var b strings.Builder
		for rows.Next() {
			var name, typ string
			var notNull, pk int
			if err := rows.Scan(&name, &typ, &notNull, &pk); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s %s notnull=%d pk=%d; ", name, typ, notNull, pk)
		}
		return b.String()
	}
	if _, err := conn.ExecContext(ctx, worker.ShadowState()); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"mem_block_state", "mem_edge_due", "mem_fact_due"} {
		if m, tmp := shape("main", table), shape("temp", table); m != tmp {
			t.Errorf("%s differs:\n main: %s\n temp: %s", table, m, tmp)
		}
	}
}
