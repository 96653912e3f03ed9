package worker

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/mattn/go-sqlite3"
)

// An app's trigger or constraint may refuse one of the sweep's changes (a
// BEFORE DELETE trigger that RAISEs for the rows the app keeps, a foreign
// key of its own): SQLite then fails the chunk's statements, and without
// more, every sweep would stop at that row. So a chunk runs under a
// savepoint; when a constraint fails it, the chunk is rolled back to the
// savepoint and retried by halves, each under its own savepoint in the
// same transaction, until each refused plan row stands alone. Those are
// skipped, counted and named in the report's invalid rows, with what was
// refused and the database's message ("prune refused: kept by app"); all
// the others are applied. A chunk nothing refuses runs its statements
// once, as before; a chunk with k refused rows of n runs about
// 2k·log2(n) times more statement lists, all set-based.
//
// A refused row keeps its due time: the next sweep tries it again (the
// app may have changed its mind), and names it again if it is refused
// again, without failing. Refusals are found by trying, so a dry run and
// `memworker decayed --invalid` cannot list them. On rqlite a transaction
// is one request whose error comes at COMMIT, as text: a refusal there
// still fails the sweep.

// applyChunk runs a step's statement lists over the plan rows lo..hi of
// table, inside the chunk's transaction.
func (s *sweep) applyChunk(ctx context.Context, table string, names []string, lo, hi int64) error {
	run := func(lo, hi int64) error {
		for _, name := range names {
			if _, err := s.db.exec(ctx, name, append(chunkArgs(lo, hi), sql.Named("step", table))...); err != nil {
				return err
			}
		}
		return nil
	}
	if !s.db.savepoints() {
		return run(lo, hi)
	}
	return s.applyOrIsolate(ctx, table, run, lo, hi)
}

// applyOrIsolate runs the plan rows lo..hi under a savepoint; when an
// app's constraint refuses them, it rolls them back and tries each half,
// down to single rows, which it records as refused.
func (s *sweep) applyOrIsolate(ctx context.Context, table string, run func(lo, hi int64) error, lo, hi int64) error {
	q := s.db.querier()
	if _, err := q.ExecContext(ctx, "SAVEPOINT sweep_chunk"); err != nil {
		return err
	}
	err := run(lo, hi)
	if err == nil {
		_, err = q.ExecContext(ctx, "RELEASE sweep_chunk")
		return err
	}
	var refusal sqlite3.Error
	if !errors.As(err, &refusal) || refusal.Code != sqlite3.ErrConstraint {
		return err
	}
	// A RAISE(ROLLBACK) ended the transaction, savepoint and all: there is
	// nothing to retry in, and the sweep fails as it did.
	if _, rbErr := q.ExecContext(ctx, "ROLLBACK TO sweep_chunk"); rbErr != nil {
		return err
	}
	if _, err := q.ExecContext(ctx, "RELEASE sweep_chunk"); err != nil {
		return err
	}
	if lo >= hi {
		return s.refused(ctx, table, lo, refusal.Error())
	}
	mid := lo + (hi-lo)/2
	if err := s.applyOrIsolate(ctx, table, run, lo, mid); err != nil {
		return err
	}
	return s.applyOrIsolate(ctx, table, run, mid+1, hi)
}

// refused records the plan row seq of table as refused with the
// database's message: an invalid row of the sweep, named in its report,
// and no longer one of the changes it planned (so it is not counted as
// skipped for a concurrent change either).
func (s *sweep) refused(ctx context.Context, table string, seq int64, message string) error {
	if _, err := s.db.exec(ctx, "refused_"+table, sql.Named("seq", seq), sql.Named("reason", message)); err != nil {
		return fmt.Errorf("recording a refused change: %w", err)
	}
	q := s.db.querier()
	var row InvalidRow
	if err := q.QueryRowContext(ctx, `SELECT kind, id, problem FROM temp.sweep_invalid ORDER BY rowid DESC LIMIT 1`).
		Scan(&row.Kind, &row.ID, &row.Problem); err != nil {
		return err
	}
	r := &s.report
	r.InvalidRows.Count++
	if len(r.InvalidRows.Sample) < InvalidSampleSize {
		r.InvalidRows.Sample = append(r.InvalidRows.Sample, row)
	}
	policy := func(relation string) *PolicyCount {
		for i := range r.Policies {
			if r.Policies[i].RelationType == relation {
				return &r.Policies[i]
			}
		}
		return &PolicyCount{}
	}
	var what, relation string
	var err error
	switch table {
	case "plan_blocks":
		r.Archived--
	case "plan_edges":
		err = q.QueryRowContext(ctx, `SELECT phase, coalesce(relation_type, '') FROM temp.plan_edges WHERE seq = ?`, seq).Scan(&what, &relation)
		switch what {
		case "static":
			r.EdgesPruned--
		case "temporal":
			r.EdgesDecayed--
		case "policy":
			policy(relation).Decayed--
		}
	case "plan_flags":
		var exclude bool
		err = q.QueryRowContext(ctx, `SELECT excluded_to, relation_type FROM temp.plan_flags WHERE seq = ?`, seq).Scan(&exclude, &relation)
		if exclude {
			policy(relation).Excluded--
		} else {
			policy(relation).Readmitted--
		}
	case "plan_facts":
		err = q.QueryRowContext(ctx, `SELECT action FROM temp.plan_facts WHERE seq = ?`, seq).Scan(&what)
		if what == "archive" {
			r.Facts.Archived--
		} else {
			r.Facts.Pruned--
		}
	}
	return err
}
