package schema

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// migrate moves the schema from its version to target(version) (capped at
// the latest), in one transaction.
// A down step runs only when it drops no data (dataLoss) or dropData is set.
// A step that may change the derived state (all but derivedKept)
// invalidates its fingerprint: it may drop and recreate derived tables
// empty, and the next sweep must then compute every row again rather than
// trust what it finds.
func migrate(db *sql.DB, target func(from uint) uint, dropData bool, guards []Guard) (uint, error) {
	all, err := steps()
	if err != nil {
		return 0, err
	}
	latest := all[len(all)-1].version
	var to uint
	err = inTx(context.Background(), db, func(ctx context.Context, conn *sql.Conn) error {
		from, dirty, err := readVersion(ctx, conn)
		if err != nil {
			return err
		}
		switch {
		case dirty:
			return dirtyError(from)
		case from > latest:
			return tooNew(from, latest)
		}
		if to = min(target(from), latest); to == from {
			return fixVersionIndex(ctx, conn)
		}
		if to < from && !dropData {
			if err := refuseDataLoss(ctx, conn, from, to); err != nil {
				return err
			}
		}
		if from < archiveStep && to >= archiveStep {
			if err := refuseEventTriggers(ctx, conn); err != nil {
				return err
			}
		}
		for _, g := range guards {
			if err := g(ctx, conn); err != nil {
				return err
			}
		}
		saved, err := guardRebuilds(ctx, conn, from, to)
		if err != nil {
			return err
		}
		// Statements of the app's tables, run before or after a step.
		before, after := map[uint][]string{}, map[uint][]string{}
		if to < mappingStep && from >= mappingStep {
			if before[mappingStep], err = MappedObjectDrops(ctx, conn); err != nil {
				return err
			}
		}
		if to < archiveStep && from >= archiveStep {
			if after[archiveStep], err = archiveDrops(ctx, conn); err != nil {
				return err
			}
		}
		if from >= archiveStep && (from < subjectStep) != (to < subjectStep) && to >= archiveStep {
			if after[subjectStep], err = subjectIndexes(ctx, conn, to >= subjectStep); err != nil {
				return err
			}
		}
		if err := ensureVersionTable(ctx, conn); err != nil {
			return err
		}
		// The first write after every read (rqlite cannot read after one).
		if _, err := conn.ExecContext(ctx, foreignKeysGuard); err != nil {
			return foreignKeysError(err)
		}
		if err := runSteps(ctx, conn, all, from, to, before, after); err != nil {
			return err
		}
		if err := setVersion(ctx, conn, to); err != nil {
			return err
		}
		if to > 0 && !keepsDerived(from, to) {
			if _, err := conn.ExecContext(ctx, `DELETE FROM mem_config WHERE key = 'derived_fingerprint'`); err != nil {
				return fmt.Errorf("schema: invalidating the derived state: %w", err)
			}
		}
		return recreate(ctx, conn, saved)
	})
	if err != nil {
		return 0, err
	}
	return to, nil
}

// runSteps runs the up steps from+1..to, or the down steps from..to+1,
// each with the statements before and after it that the step's own SQL
// cannot write, as they name the app's tables: going down, those that drop
// what the mapping put on them (MappedObjectDrops) before the mapping's
// step and the archives of the app's tables (archiveDrops) after the
// archive's; either way, the archives' index of subjects (subjectIndexes).
func runSteps(ctx context.Context, conn *sql.Conn, all []step, from, to uint, before, after map[uint][]string) error {
	run := func(s step, dir string, stmts ...string) error {
		for _, stmt := range stmts {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				return stepError(s, dir, err)
			}
		}
		return nil
	}
	step := func(s step, body, dir string) error {
		if err := run(s, dir, before[s.version]...); err != nil {
			return err
		}
		if err := run(s, dir, body); err != nil {
			return err
		}
		return run(s, dir, after[s.version]...)
	}
	if to > from {
		for _, s := range all {
			if s.version > from && s.version <= to {
				if err := step(s, s.up, "up"); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for i := len(all) - 1; i >= 0; i-- {
		if s := all[i]; s.version <= from && s.version > to {
			if err := step(s, s.down, "down"); err != nil {
				return err
			}
		}
	}
	return nil
}

// mappingStep is the step that installs mem_mapping, the declared mapping.
const mappingStep = 11

// archiveStep is the step that makes the typed archive (mem_archives).
const archiveStep = 14

// subjectStep is the step that drops the archives' index of subjects.
const subjectStep = 20

// subjectIndexes are the statements that drop (up) or make again (down)
// the index of subjects of every archive mem_archives lists: the step's
// own SQL names only memworker's. It only reads.
func subjectIndexes(ctx context.Context, conn *sql.Conn, up bool) ([]string, error) {
	names, err := archiveNames(ctx, conn)
	var stmts []string
	for _, name := range names {
		table, index := quoteIdent(name), quoteIdent(name+"_subject")
		if up {
			stmts = append(stmts, `DROP INDEX IF EXISTS main.`+index)
		} else {
			stmts = append(stmts, `CREATE INDEX IF NOT EXISTS main.`+index+` ON `+table+` (mem_subject)`)
		}
	}
	return stmts, err
}

// archiveNames are the archives mem_archives lists, in the order they were made.
func archiveNames(ctx context.Context, conn *sql.Conn) ([]string, error) {
	return texts(ctx, conn, `SELECT name FROM mem_archives ORDER BY rowid`)
}

// quoteIdent quotes a name for SQL.
func quoteIdent(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// refuseEventTriggers fails when an app put a trigger on mem_events: the
// archive's step turns mem_events into a view, and the trigger would see
// none of a sweep's removals (nor could it stay on a view).
func refuseEventTriggers(ctx context.Context, conn *sql.Conn) error {
	var names string
	err := conn.QueryRowContext(ctx, `SELECT coalesce(group_concat(name, ', '), '') FROM sqlite_master
		WHERE type = 'trigger' AND tbl_name = 'mem_events'`).Scan(&names)
	if err != nil || names == "" {
		return err
	}
	return fmt.Errorf("schema: step %d makes mem_events a view over the event log and the archives, and the trigger %s on it "+
		"would see none of a sweep's removals: drop it (read mem_events, or put the trigger on the archives, mem_archive_*), then migrate%s",
		archiveStep, names, nothingChanged)
}

// archiveDrops are the statements that drop the archives made for a
// mapping's tables, once the archive's step has copied their events back
// into mem_events. It only reads.
func archiveDrops(ctx context.Context, conn *sql.Conn) ([]string, error) {
	names, err := archiveNames(ctx, conn)
	var drops []string
	for _, name := range names {
		drops = append(drops, `DROP TABLE IF EXISTS main.`+quoteIdent(name))
	}
	return drops, err
}

// OwnMappedObject holds for a row of sqlite_master (an index or trigger
// named mem_map_…) that memworker put on an app's table when it declared a
// mapping: its change capture (mem_map_<table>_queue_insert|update|delete,
// queuing into mem_dirty_…) or an index on an id read as text
// (…_<table>_<column>_text, on a CAST). An app's own that only shares the
// prefix is not.
const OwnMappedObject = `((type = 'trigger' AND lower(name) IN ('mem_map_' || lower(tbl_name) || '_queue_insert',
            'mem_map_' || lower(tbl_name) || '_queue_update', 'mem_map_' || lower(tbl_name) || '_queue_delete')
        AND sql LIKE '%mem\_dirty\_%' ESCAPE '\')
    OR (type = 'index' AND lower(name) LIKE '%\_text' ESCAPE '\' AND instr(lower(name), '_' || lower(tbl_name) || '_') > 0
        AND sql LIKE '%CAST(%'))`

// MappedObjectDrops are the statements that drop what a declared mapping
// put on an app's tables (memworker's triggers and indexes named
// mem_map_…): a new mapping replaces them, and going below the mapping's
// step they go, as their triggers would queue into tables that go too and
// fail the app's writes. An app's own trigger or index that only shares
// the prefix stays (OwnMappedObject). It only reads (rqlite cannot read after a write in a
// transaction).
func MappedObjectDrops(ctx context.Context, q interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT upper(type), name FROM sqlite_master
		WHERE type IN ('index', 'trigger') AND name LIKE 'mem\_map\_%' ESCAPE '\' AND `+OwnMappedObject+`
		ORDER BY name`)
	if err != nil {
		return nil, err
	}
	var drops []string
	for rows.Next() {
		var kind, name string
		if err := rows.Scan(&kind, &name); err != nil {
			rows.Close()
			return nil, err
		}
		drops = append(drops, "DROP "+kind+" IF EXISTS main."+quoteIdent(name))
	}
	rows.Close()
	return drops, rows.Err()
}

// SQLite's words when a name is taken: "table mem_events already exists",
// "there is already an index named mem_x".
var (
	nameTaken      = regexp.MustCompile(`\b(table|view|index|trigger) (\S+) already exists`)
	nameTakenBy    = regexp.MustCompile(`there is already an? (table|view|index|trigger) named (\S+)`)
	nothingChanged = "; nothing was changed"
)

// stepError says which step failed and, when an object of the app's holds a
// name memdecay needs, names it.
func stepError(s step, dir string, err error) error {
	m := nameTaken.FindStringSubmatch(err.Error())
	if m == nil {
		m = nameTakenBy.FindStringSubmatch(err.Error())
	}
	if m != nil {
		article := "a"
		if m[1] == "index" {
			article = "an"
		}
		return fmt.Errorf("schema: migration %d (%s) %s: the database already has %s %s named %s, which this step "+
			"does not expect and needs the name of; rename or drop it, then run memworker migrate %s again%s",
			s.version, s.name, dir, article, m[1], m[2], dir, nothingChanged)
	}
	return fmt.Errorf("schema: migration %d (%s) %s failed: %w%s", s.version, s.name, dir, err, nothingChanged)
}

// ensureVersionTable creates the version table and its mem_ index.
func ensureVersionTable(ctx context.Context, conn *sql.Conn) error {
	return versionTable(ctx, conn, true)
}

// fixVersionIndex gives an existing version table its mem_ index, in place
// of the version_unique golang-migrate's driver made on it.
func fixVersionIndex(ctx context.Context, conn *sql.Conn) error {
	return versionTable(ctx, conn, false)
}

// versionTable reads what there is first and then writes, so that it runs
// where a transaction's reads cannot see its writes (rqlite).
func versionTable(ctx context.Context, conn *sql.Conn, create bool) error {
	var table, old int
	err := conn.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE type = 'table'), count(*) FILTER (WHERE type = 'index')
		FROM sqlite_master WHERE (type = 'table' AND name = ?1) OR (type = 'index' AND name = 'version_unique' AND tbl_name = ?1)`,
		VersionTable).Scan(&table, &old)
	if err != nil || table == 0 && !create {
		return err
	}
	var stmts []string
	if create {
		stmts = append(stmts, `CREATE TABLE IF NOT EXISTS `+VersionTable+` (version uint64, dirty bool)`)
	}
	if old > 0 {
		stmts = append(stmts, `DROP INDEX version_unique`)
	}
	stmts = append(stmts, `CREATE UNIQUE INDEX IF NOT EXISTS `+versionIndex+` ON `+VersionTable+` (version)`)
	for _, q := range stmts {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("schema: indexing %s: %w", VersionTable, err)
		}
	}
	return nil
}

// setVersion records v as installed and clean; 0 leaves the table empty.
func setVersion(ctx context.Context, conn *sql.Conn, v uint) error {
	if _, err := conn.ExecContext(ctx, `DELETE FROM `+VersionTable); err != nil {
		return err
	}
	if v == 0 {
		return nil
	}
	_, err := conn.ExecContext(ctx, `INSERT INTO `+VersionTable+` (version, dirty) VALUES (?, 0)`, v)
	return err
}

// foreignKeysOff turns foreign key enforcement off on conn while a migration
// runs, and returns what turns it back on. With it on, DROP TABLE deletes
// every row first, and an app table whose foreign key points at a mem_
// table with ON DELETE CASCADE (or SET NULL) would lose its rows when a step
// rebuilds or drops that table; rqlite started with -fk has it on. The
// pragma cannot change inside a transaction, so it is set before BEGIN.
func foreignKeysOff(ctx context.Context, conn *sql.Conn) (restore func() error, err error) {
	var on bool
	if err := conn.QueryRowContext(ctx, `PRAGMA foreign_keys`).Scan(&on); err != nil {
		return nil, fmt.Errorf("schema: reading PRAGMA foreign_keys: %w", err)
	}
	if !on {
		return func() error { return nil }, nil
	}
	if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
		return nil, fmt.Errorf("schema: turning foreign keys off for the migration: %w", err)
	}
	return func() error {
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA foreign_keys = ON`); err != nil {
			return fmt.Errorf("schema: turning foreign keys back on after the migration: %w", err)
		}
		return nil
	}, nil
}

// inTx runs fn in an IMMEDIATE transaction on one connection, committed only
// when fn succeeds, with foreign keys off (foreignKeysOff). A migration's
// transaction checks they are off where it runs (foreignKeysGuard, before
// its first step): an rqlite node may run a request on a connection that
// did not see the PRAGMA (one it reopened), and then the transaction fails
// before any step and is tried again.
func inTx(ctx context.Context, db *sql.DB, fn func(ctx context.Context, conn *sql.Conn) error) error {
	const attempts = 3
	for i := 1; ; i++ {
		err := inTxOnce(ctx, db, fn)
		if !errors.Is(err, errForeignKeysOn) || i == attempts || ctx.Err() != nil {
			return err
		}
	}
}

// errForeignKeysOn: the migration's transaction found foreign keys on.
var errForeignKeysOn = errors.New("schema: foreign keys are on where the migration runs, though it turned them off: " +
	"a step that rebuilds or drops a table could cascade into an app's tables" + nothingChanged)

// foreignKeysGuard fails (its CHECK) when foreign keys are on.
const foreignKeysGuard = `CREATE TABLE mem_migration_guard (foreign_keys INTEGER CHECK (foreign_keys = 0));
INSERT INTO mem_migration_guard SELECT foreign_keys FROM pragma_foreign_keys;
DROP TABLE mem_migration_guard;`

// foreignKeysError is errForeignKeysOn when err is the guard's CHECK
// failing (a file reports it at once, rqlite at COMMIT), else err.
func foreignKeysError(err error) error {
	if strings.Contains(err.Error(), "CHECK constraint failed: foreign_keys = 0") {
		return errForeignKeysOn
	}
	return err
}

func inTxOnce(ctx context.Context, db *sql.DB, fn func(ctx context.Context, conn *sql.Conn) error) (err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	restoreFKs, err := foreignKeysOff(ctx, conn)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, restoreFKs()) }()
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		return fmt.Errorf("schema: taking the write lock: %w", err)
	}
	if fnErr := fn(ctx, conn); fnErr != nil {
		_, rbErr := conn.ExecContext(ctx, `ROLLBACK`)
		// A step may stop between its PRAGMA legacy_alter_table ON and OFF.
		_, pragmaErr := conn.ExecContext(ctx, `PRAGMA legacy_alter_table = OFF`)
		return errors.Join(fnErr, rbErr, pragmaErr)
	}
	if _, err := conn.ExecContext(ctx, `COMMIT`); err != nil {
		_, _ = conn.ExecContext(ctx, `ROLLBACK`)
		return fmt.Errorf("schema: committing: %w", foreignKeysError(err))
	}
	return nil
}
