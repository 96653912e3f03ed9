package sweep

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mattn/go-sqlite3"
	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/report"
	"github.com/memdecay/memdecay/worker/internal/rqlite"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
)

// An app's trigger or constraint may refuse one of the sweep's changes (a
// BEFORE DELETE trigger that RAISEs for the rows the app keeps, a foreign
// key of its own): SQLite then fails the chunk's statements, and without
// more, every sweep would stop at that row. So a chunk runs under a
// savepoint; when a constraint fails it, the chunk is rolled back to the
// savepoint and retried by halves, each under its own savepoint in the
// same transaction, until each refused plan row stands alone.
//
// A savepoint costs every chunk, refused or not: SQLite copies each page
// the chunk is the first to change since the savepoint into a temp file,
// to put it back on a ROLLBACK TO (at 1M edges, 60 % of the temp writes of
// a steady sweep). So on a file, where each chunk of a default sweep is
// the only work of its transaction, a chunk runs without one
// (sweep.guarded) until an app's rule refuses a change: that transaction
// is then rolled back whole, and the chunk, and every chunk after it,
// runs again under savepoints. A bulk sweep, whose one transaction holds
// every chunk, and a replica keep them throughout. Those are
// skipped, counted and named in the report's invalid rows, with what was
// refused and the database's message ("prune refused: kept by app"); all
// the others are applied. A chunk nothing refuses runs its statements
// once, as before; a chunk with k refused rows of n runs about
// 2k·log2(n) times more statement lists, all set-based.
//
// A refused row keeps its due time: the next sweep tries it again (the
// app may have changed its mind), and names it again if it is refused
// again, without failing. Refusals are found by trying, so a dry run and
// `memworker decayed --invalid` cannot list them (the rows an app's
// foreign key holds, below, they do list).
//
// On rqlite a transaction is one request, and SQLite's refusal of one of
// its statements comes at COMMIT, typed (rqlite.StatementError), the
// whole request undone. The transaction then runs again with its writes
// tried as they are collected (replicaStore.inTx): each RELEASE below
// fails as SQLite would have failed a write since its SAVEPOINT, and a
// ROLLBACK TO drops them; the same halves are found, and the rest commits
// as one request. Each try is a request (rolled back on every node), so a
// chunk with k refused rows of n costs about 2k·log2(n) more requests,
// and none while nothing is refused. A node that tells no result code
// leaves open whether SQLite refused a row or could not run the
// statements at all: a row is named refused only when the statements
// without any row go through.

// An app's foreign keys are the app's rules too. A sweep on a file runs
// with them on (openFileStore), and rqlite with -fk enforces them; but
// rather than fail a delete, the sweep leaves out of each chunk, before
// it writes anything, the rows an app's table references (holdStep):
// deleting one would be refused (RESTRICT, NO ACTION, deferred or not),
// or would change app rows no archive keeps (CASCADE, SET NULL, SET
// DEFAULT). Such a row stays, counted and named in the invalid rows with
// the foreign key that holds it ("prune refused: referenced by
// link_notes.link_id (ON DELETE RESTRICT)"), and is tried again next
// sweep. Found by the statements, this holds on rqlite too, where a
// refusal would fail the whole request. A block is held when one of the
// edges its archival removes is.
//
// An app's trigger may also keep a row silently (RAISE(IGNORE)): the
// statements check what they changed, and a row that stayed as it was
// loses its event and is named as kept by the app (apply.sql).

// holdStep stands, in a step's statement lists, for the statements that
// find the chunk's held rows (sweep.holds) and then held_<table>, which
// names them and takes them out of the chunk; nothing when none can be.
const holdStep = "hold"

// applyChunk runs a step's statement lists over the plan rows lo..hi of
// table, inside the chunk's transaction.
func (s *sweep) applyChunk(ctx context.Context, table string, names []string, lo, hi int64) error {
	run := func(lo, hi int64) error {
		args := append(chunkArgs(lo, hi), sql.Named("step", table))
		for _, name := range names {
			if name == holdStep {
				if len(s.holds[table]) == 0 {
					continue
				}
				if _, err := s.db.ExecList(ctx, "hold "+table, s.holds[table], args...); err != nil {
					return err
				}
				name = "held_" + table
			}
			if _, err := s.db.Exec(ctx, name, args...); err != nil {
				return err
			}
		}
		return nil
	}
	if !s.db.Savepoints() {
		return run(lo, hi)
	}
	if !s.guarded {
		// The chunk is its transaction's only work: unguarded, a refusal
		// rolls the transaction back whole, and chunks runs the chunk
		// again under savepoints.
		return unguarded(run(lo, hi))
	}
	return s.applyOrIsolate(ctx, table, run, lo, hi)
}

// errRefusedUnguarded: an app's rule refused a change of a chunk run
// without a savepoint (sweep.guarded).
var errRefusedUnguarded = errors.New("a change refused outside a savepoint")

// unguarded marks an app's refusal of changes made without a savepoint
// (errRefusedUnguarded): their transaction must be rolled back whole and
// run again guarded.
func unguarded(err error) error {
	if _, _, ok := refusal(err); ok {
		return fmt.Errorf("%w: %w", errRefusedUnguarded, err)
	}
	return err
}

// guard makes every later change of the sweep run under savepoints, once
// an app's rule has refused one made without.
func (s *sweep) guard() {
	s.guarded = true
	if s.opt.signals.Guarded != nil {
		s.opt.signals.Guarded()
	}
}

// inTxGuarded runs f in a write transaction; when an app's rule refused a
// change f made without a savepoint, the transaction was rolled back whole,
// and f runs again, guarded.
func (s *sweep) inTxGuarded(ctx context.Context, f func() error) error {
	err := s.db.InTx(ctx, f)
	if errors.Is(err, errRefusedUnguarded) {
		s.guard()
		err = s.db.InTx(ctx, f)
	}
	return err
}

// applyOrIsolate runs the plan rows lo..hi under a savepoint; when an
// app's constraint refuses them, it rolls them back and tries each half,
// down to single rows, which it records as refused.
func (s *sweep) applyOrIsolate(ctx context.Context, table string, run func(lo, hi int64) error, lo, hi int64) error {
	err := s.tryRows(ctx, run, lo, hi)
	if err == nil {
		return nil
	}
	message, certain, ok := refusal(err)
	if !ok {
		return err
	}
	if lo >= hi {
		if !certain {
			// Statements that fail without any row are not refused by
			// a rule of the app's rows.
			if rowless := s.tryNoRows(ctx, run, lo); rowless != nil {
				return err
			}
		}
		return s.refused(ctx, table, lo, message)
	}
	mid := lo + (hi-lo)/2
	if err := s.applyOrIsolate(ctx, table, run, lo, mid); err != nil {
		return err
	}
	return s.applyOrIsolate(ctx, table, run, mid+1, hi)
}

// tryRows runs the plan rows lo..hi under a savepoint: their changes are
// kept, or rolled back when an app's rule refuses them. On rqlite the
// RELEASE is where SQLite's refusal comes, once the transaction tries its
// writes (replicaStore.inTx).
func (s *sweep) tryRows(ctx context.Context, run func(lo, hi int64) error, lo, hi int64) error {
	q := s.db.Querier()
	if _, err := q.ExecContext(ctx, "SAVEPOINT sweep_chunk"); err != nil {
		return err
	}
	err := run(lo, hi)
	if err == nil {
		_, err = q.ExecContext(ctx, "RELEASE sweep_chunk")
	}
	if err == nil {
		return nil
	}
	if _, _, ok := refusal(err); !ok {
		return err
	}
	// A RAISE(ROLLBACK) ended the transaction, savepoint and all: there is
	// nothing to retry in, and the sweep fails as it did.
	if _, rbErr := q.ExecContext(ctx, "ROLLBACK TO sweep_chunk"); rbErr != nil {
		return err
	}
	if _, relErr := q.ExecContext(ctx, "RELEASE sweep_chunk"); relErr != nil {
		return relErr
	}
	return err
}

// tryNoRows runs the statements of plan row seq's chunk with no plan row
// at all, and undoes them: their error, if they fail even so.
func (s *sweep) tryNoRows(ctx context.Context, run func(lo, hi int64) error, seq int64) error {
	q := s.db.Querier()
	if _, err := q.ExecContext(ctx, "SAVEPOINT sweep_no_rows"); err != nil {
		return err
	}
	err := s.tryRows(ctx, run, seq, seq-1)
	if _, rbErr := q.ExecContext(ctx, "ROLLBACK TO sweep_no_rows"); rbErr != nil {
		return cmp.Or(err, rbErr)
	}
	_, relErr := q.ExecContext(ctx, "RELEASE sweep_no_rows")
	return cmp.Or(err, relErr)
}

// refusal reads err as an app's rule refusing a change: SQLite's message,
// and whether SQLite said it was a constraint (certain; a node that tells
// no result code leaves it open).
func refusal(err error) (message string, certain, ok bool) {
	var onFile sqlite3.Error
	if errors.As(err, &onFile) {
		return onFile.Error(), true, onFile.Code == sqlite3.ErrConstraint
	}
	var onRqlite *rqlite.StatementError
	if errors.As(err, &onRqlite) && onRqlite.Constraint() {
		return onRqlite.Message, onRqlite.Code != 0, true
	}
	return "", false, false
}

// refused records the plan row seq of table as refused with the
// database's message: an invalid row of the sweep, named in its report,
// and no longer one of the changes it planned (so it is not counted as
// skipped for a concurrent change either).
func (s *sweep) refused(ctx context.Context, table string, seq int64, message string) error {
	if _, err := s.db.Exec(ctx, "refused_"+table, sql.Named("seq", seq), sql.Named("reason", message)); err != nil {
		return fmt.Errorf("recording a refused change: %w", err)
	}
	q := s.db.Querier()
	var row report.InvalidRow
	if err := q.QueryRowContext(ctx, `SELECT kind, id, problem FROM temp.sweep_invalid ORDER BY rowid DESC LIMIT 1`).
		Scan(&row.Kind, &row.ID, &row.Problem); err != nil {
		return err
	}
	r := &s.report
	r.InvalidRows.Count++
	if len(r.InvalidRows.Sample) < report.InvalidSampleSize {
		r.InvalidRows.Sample = append(r.InvalidRows.Sample, row)
	}
	policy := func(relation string) *report.PolicyCount {
		for i := range r.Policies {
			if r.Policies[i].RelationType == relation {
				return &r.Policies[i]
			}
		}
		return &report.PolicyCount{}
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
	case "plan_reinforce":
		err = q.QueryRowContext(ctx, `SELECT kind FROM temp.plan_reinforce WHERE rowid = ?`, seq).Scan(&what)
		if what == "constitutional" {
			r.ConstitutionalReinforced--
		} else {
			r.Reinforced--
		}
	}
	return err
}

// reinforce applies the plan's reinforcements, inside the finish's
// transaction: a block an app's rule refuses to update is isolated as a
// refused plan row, named, and not counted as reinforced. Unguarded, as an
// apply chunk is, they run without a savepoint (which would copy each page
// they change into a temp file first), and a refusal rolls the finish's
// transaction back whole, to run again guarded (inTxGuarded).
func (s *sweep) reinforce(ctx context.Context) error {
	run := func(lo, hi int64) error {
		_, err := s.db.Exec(ctx, "apply_reinforce", chunkArgs(lo, hi)...)
		return err
	}
	last, err := s.lastRow(ctx, "plan_reinforce")
	if err != nil || last == 0 {
		return err
	}
	if !s.db.Savepoints() {
		return run(1, last)
	}
	if !s.guarded {
		return unguarded(run(1, last))
	}
	return s.applyOrIsolate(ctx, "plan_reinforce", run, 1, last)
}

// planHolds takes the rows the app's foreign keys hold out of a dry run's
// plan, named as the sweep names them, so that the dry run (and
// `memworker decayed --invalid`) reports what the sweep will do.
func (s *sweep) planHolds(ctx context.Context) error {
	holds, err := s.appHolds(ctx)
	if err != nil {
		return fmt.Errorf("reading the app's foreign keys: %w", err)
	}
	if len(holds) == 0 {
		return nil
	}
	for _, st := range applySteps {
		if len(holds[st.table]) == 0 {
			continue
		}
		if _, err := s.db.Exec(ctx, "dry_pick_"+st.table); err != nil {
			return err
		}
		if _, err := s.db.ExecList(ctx, "hold "+st.table, holds[st.table]); err != nil {
			return err
		}
		if _, err := s.db.Exec(ctx, "dry_held_"+st.table); err != nil {
			return err
		}
	}
	return s.planReport(ctx, s.report.EdgesDeferred)
}

// foreignKey is one foreign key of an app's table that references a
// table the sweep deletes from.
type foreignKey struct {
	child, onDelete string
	from, to        []string // the child's columns, the parent's
}

// appHolds builds, for each step that deletes rows, the statements that
// fill apply_held with the chunk's rows an app's foreign key holds.
func (s *sweep) appHolds(ctx context.Context) (map[string][]string, error) {
	edges, facts := "mem_edges", "mem_facts"
	if s.mapped != nil {
		edges, facts = "", ""
		if e := s.mapped.Map.Edges; e != nil {
			edges = e.Table
		}
		if f := s.mapped.Map.Facts; f != nil {
			facts = f.Table
		}
	}
	keys, err := s.foreignKeys(ctx, edges, facts)
	if err != nil {
		return nil, err
	}
	// A column of the row alias, as the app's table holds it: through a
	// mapping, the adapter's view shows it under its rowColumn name.
	column := func(alias, col string) string {
		if s.mapped != nil {
			return alias + "." + sweepsql.Ident(sweepsql.RowColumn(col))
		}
		return alias + "." + sweepsql.Ident(col)
	}
	referenced := func(fk foreignKey, alias string) string {
		match := make([]string, len(fk.from))
		for i := range fk.from {
			match[i] = "c." + sweepsql.Ident(fk.from[i]) + " = " + column(alias, fk.to[i])
		}
		return "EXISTS (SELECT 1 FROM main." + sweepsql.Ident(fk.child) + " c WHERE " + strings.Join(match, " AND ") + ")"
	}
	why := func(fk foreignKey) string {
		return "referenced by " + fk.child + "." + strings.Join(fk.from, ", ") + " (ON DELETE " + fk.onDelete + ")"
	}
	holds := map[string][]string{}
	add := func(table, stmt string) {
		if len(holds[table]) == 0 {
			holds[table] = []string{"DELETE FROM apply_held"}
		}
		holds[table] = append(holds[table], s.opt.sql().Expand(stmt))
	}
	for _, fk := range keys[strings.ToLower(edges)] {
		add("plan_edges", `INSERT OR IGNORE INTO apply_held (seq, why)
SELECT a.seq, `+sweepsql.Literal(why(fk))+` FROM apply_rows a CROSS JOIN plan_edges p ON p.seq = a.seq
CROSS JOIN @EDGES e ON e.@KEY_A = p.from_id AND e.@KEY_B = p.to_id
WHERE `+referenced(fk, "e"))
		for _, end := range []string{"@END_A", "@END_B"} {
			add("plan_blocks", `INSERT OR IGNORE INTO apply_held (seq, why)
SELECT a.seq, 'its edge ' || @SUBJECT_E || ' is ' || `+sweepsql.Literal(why(fk))+` FROM apply_rows a CROSS JOIN plan_blocks p ON p.seq = a.seq
CROSS JOIN @EDGES e ON e.`+end+` = p.id
WHERE `+referenced(fk, "e"))
		}
	}
	for _, fk := range keys[strings.ToLower(facts)] {
		add("plan_facts", `INSERT OR IGNORE INTO apply_held (seq, why)
SELECT a.seq, `+sweepsql.Literal(why(fk))+` FROM apply_rows a CROSS JOIN plan_facts p ON p.seq = a.seq
CROSS JOIN @FACTS f ON f.id = p.id
WHERE p.action = 'prune' AND `+referenced(fk, "f"))
	}
	return holds, nil
}

// foreignKeys lists, by parent (lower case), the foreign keys of the
// database's tables that reference one of parents.
func (s *sweep) foreignKeys(ctx context.Context, parents ...string) (map[string][]foreignKey, error) {
	wanted := map[string]string{}
	for _, p := range parents {
		if p != "" {
			wanted[strings.ToLower(p)] = p
		}
	}
	rows, err := s.db.Querier().QueryContext(ctx, `SELECT m.name, f.id, f."table", f."from", f."to", f.on_delete
		FROM main.sqlite_master m, pragma_foreign_key_list(m.name) f WHERE m.type = 'table' ORDER BY m.name, f.id, f.seq`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	type fkID struct {
		child string
		id    int
	}
	var order []fkID
	found := map[fkID]*foreignKey{}
	parentOf := map[fkID]string{}
	for rows.Next() {
		var child, parent, from, onDelete string
		var to sql.NullString
		var id int
		if err := rows.Scan(&child, &id, &parent, &from, &to, &onDelete); err != nil {
			return nil, err
		}
		if _, ok := wanted[strings.ToLower(parent)]; !ok {
			continue
		}
		k := fkID{child, id}
		fk := found[k]
		if fk == nil {
			fk = &foreignKey{child: child, onDelete: onDelete}
			found[k], parentOf[k] = fk, strings.ToLower(parent)
			order = append(order, k)
		}
		fk.from = append(fk.from, from)
		fk.to = append(fk.to, to.String) // "" for the parent's primary key
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	out := map[string][]foreignKey{}
	for _, k := range order {
		fk := found[k]
		if slices.Contains(fk.to, "") {
			pk, err := memdb.QueryAll(ctx, s.db.Querier(), `SELECT name FROM pragma_table_info(`+sweepsql.Literal(wanted[parentOf[k]])+`) WHERE pk > 0 ORDER BY pk`,
				func(rows *sql.Rows, v *string) error { return rows.Scan(v) })
			if err != nil {
				return nil, err
			}
			if len(pk) != len(fk.from) {
				continue // not a key SQLite itself could enforce
			}
			fk.to = pk
		}
		out[parentOf[k]] = append(out[parentOf[k]], *fk)
	}
	return out, nil
}
