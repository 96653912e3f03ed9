package memdb

import (
	"context"
	"fmt"

	"github.com/memdecay/memdecay/worker/internal/rqlite"
)

// Step is one write of a transaction that readThenWrite runs.
type Step struct {
	Query string
	Args  []any
}

// BeforeWrites, when set, runs between a readThenWrite's reads and its
// writes: tests change the memory there, as another writer could on rqlite.
var BeforeWrites func()

// ReadThenWrite runs read inside a transaction, then the writes it returns,
// and commits; it returns the rows each write changed. read must not write:
// on rqlite the writes go as one request at COMMIT, applied atomically but
// unseen by any read before, and their rows are known only then.
func ReadThenWrite(ctx context.Context, db *DB, what string, read func(q Querier) ([]Step, error)) ([]int64, error) {
	return ReadThenWriteWith(ctx, db, what, nil, read)
}

// ReadThenWriteWith is readThenWrite that first runs setUp inside the
// transaction: a mapping's temp views on its connection (a file only;
// nil for memworker's own tables).
func ReadThenWriteWith(ctx context.Context, db *DB, what string, setUp func(context.Context, Querier) error,
	read func(q Querier) ([]Step, error)) ([]int64, error) {
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if setUp != nil {
		if err := setUp(ctx, tx); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	}
	steps, err := read(tx)
	if err != nil {
		return nil, err
	}
	if BeforeWrites != nil {
		BeforeWrites()
	}
	rows := make([]int64, len(steps))
	for i, s := range steps {
		res, err := tx.ExecContext(ctx, s.Query, s.Args...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if n, err := res.RowsAffected(); err == nil { // on rqlite: after COMMIT
			rows[i] = n
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if !db.Rqlite {
		return rows, nil
	}
	if rows, err = rqlite.LastTxRows(ctx, conn); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if len(rows) != len(steps) {
		return nil, fmt.Errorf("%s: rqlite answered %d results for %d statements", what, len(rows), len(steps))
	}
	return rows, nil
}
