// Package schema installs the memdecay memory schema (every object prefixed
// mem_). The migrations are golang-migrate's numbered up/down SQL files,
// embedded in the binary and read with its iofs source, so an app whose own
// migration tool owns the DDL can run the same files.
//
// memworker applies them itself rather than through golang-migrate's SQLite
// driver, which records "dirty" before a step and "clean" after it in
// separate transactions (a kill -9 or a failed step leaves the file dirty)
// and names its version index version_unique, a name an app using
// golang-migrate also creates. Here each command runs in one transaction:
// the steps, the version row and the re-created app objects are committed
// together or not at all.
package schema

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/golang-migrate/migrate/v4/source/iofs"
)

//go:embed migrations/*.sql
var migrations embed.FS

// VersionTable records the installed version (golang-migrate's layout:
// version, dirty), with its unique index versionIndex.
const (
	VersionTable = "mem_schema_migrations"
	versionIndex = "mem_schema_migrations_version"
)

// ErrTooNew means the database was migrated by a newer memworker.
var ErrTooNew = errors.New("schema is newer than this memworker")

// ErrNotInstalled means the memory schema has not been migrated in.
var ErrNotInstalled = errors.New("memory schema not installed (run: memworker migrate up)")

// Guard runs inside a migration's transaction, before anything changes,
// and stops it by returning an error (memworker refuses while a sweep runs).
type Guard func(ctx context.Context, conn *sql.Conn) error

// step is one embedded migration.
type step struct {
	version  uint
	name     string // the file name's identifier, e.g. "memory"
	up, down string
}

// steps reads the embedded migrations in version order.
func steps() ([]step, error) {
	src, err := iofs.New(migrations, "migrations")
	if err != nil {
		return nil, fmt.Errorf("schema: reading embedded migrations: %w", err)
	}
	defer src.Close()
	read := func(r io.ReadCloser, name string, err error) (string, string, error) {
		if err != nil {
			return "", "", err
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		return string(b), name, err
	}
	var all []step
	v, err := src.First()
	for err == nil {
		s := step{version: v}
		if s.up, s.name, err = read(src.ReadUp(v)); err != nil {
			return nil, fmt.Errorf("schema: migration %d: %w", v, err)
		}
		if s.down, _, err = read(src.ReadDown(v)); err != nil {
			return nil, fmt.Errorf("schema: migration %d has no down step: %w", v, err)
		}
		all = append(all, s)
		v, err = src.Next(v)
	}
	return all, nil
}

// Latest is the newest migration version this binary carries.
func Latest() (uint, error) {
	all, err := steps()
	if err != nil {
		return 0, err
	}
	return all[len(all)-1].version, nil
}

// Version reports the installed schema version; 0 when not installed.
func Version(db *sql.DB) (version uint, dirty bool, err error) {
	return readVersion(context.Background(), db)
}

// rowQuerier is what readVersion needs: a *sql.DB or a *sql.Conn.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func readVersion(ctx context.Context, q rowQuerier) (version uint, dirty bool, err error) {
	var n int
	err = q.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, VersionTable).Scan(&n)
	if err != nil || n == 0 {
		return 0, false, err
	}
	var v sql.NullInt64
	var d sql.NullBool
	err = q.QueryRowContext(ctx, `SELECT version, dirty FROM `+VersionTable+` LIMIT 1`).Scan(&v, &d)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("schema: reading %s: %w", VersionTable, err)
	}
	return uint(max(v.Int64, 0)), d.Bool, nil
}

// Check returns nil when the schema is installed at exactly the version this
// binary knows, ErrNotInstalled or ErrTooNew (wrapped, with versions) otherwise.
func Check(db *sql.DB) error {
	v, dirty, err := Version(db)
	if err != nil {
		return err
	}
	latest, err := Latest()
	if err != nil {
		return err
	}
	switch {
	case dirty:
		return dirtyError(v)
	case v == 0:
		return ErrNotInstalled
	case v > latest:
		return tooNew(v, latest)
	case v < latest:
		return fmt.Errorf("schema: database is at version %d, this memworker needs %d (run: memworker migrate up)", v, latest)
	}
	return nil
}

// A file is dirty only when another tool's migration stopped half-way:
// memworker's own never leave it so.
func dirtyError(v uint) error {
	return fmt.Errorf("schema: version %d is marked dirty (a migration run by another tool stopped half-way); "+
		"make the mem_ objects match a version, then run: memworker migrate force VERSION", v)
}

func tooNew(v, latest uint) error {
	return fmt.Errorf("%w: database is at version %d, this memworker knows up to %d; upgrade memworker", ErrTooNew, v, latest)
}

// Up applies every pending migration, all in one transaction. It refuses a
// database whose schema is newer than this binary and leaves the app's own
// objects alone.
func Up(db *sql.DB, guards ...Guard) (uint, error) {
	return migrate(db, func(uint) uint { return ^uint(0) }, false, guards)
}

// DownOptions chooses how far Down goes and whether it may drop data.
type DownOptions struct {
	All   bool // revert every step, not only the newest
	Force bool // run steps that drop data the database holds (dataLoss)
}

// ErrDropsData means a down step would drop data the app or its users
// wrote; nothing was changed, and DownOptions.Force runs it anyway.
var ErrDropsData = errors.New("migrate down would drop data")

// dataLoss names, per version, what its down step drops that no sweep can
// recompute (the derived state and queues it drops are rebuilt by the next
// sweep, these are not), and a query that tells whether the database holds
// any of it ("" when it always does).
var dataLoss = map[uint]struct{ what, holds string }{
	1:  {"every mem_ table with its rows: blocks, tags, edges, facts, policies, events, sweeps and settings", ""},
	2:  {"the soft exclusions of the edges a policy excluded (mem_edges.excluded)", `SELECT EXISTS (SELECT 1 FROM mem_edges WHERE excluded)`},
	5:  {"a pinned wall clock (the wall_clock setting)", `SELECT EXISTS (SELECT 1 FROM mem_config WHERE key = 'wall_clock' AND value != '')`},
	11: {"the declared mapping (mem_mapping)", `SELECT EXISTS (SELECT 1 FROM mem_mapping)`},
}

// Down reverts the newest migration step, or all of them with All. A step
// that drops data (dataLoss) is refused with ErrDropsData unless Force.
func Down(db *sql.DB, opt DownOptions, guards ...Guard) (uint, error) {
	return migrate(db, func(from uint) uint {
		if opt.All || from == 0 {
			return 0
		}
		return from - 1
	}, opt.Force, guards)
}

// refuseDataLoss fails when the down steps from..to+1 would drop data the
// database holds. It only reads, before anything changes.
func refuseDataLoss(ctx context.Context, conn *sql.Conn, from, to uint) error {
	var lost []string
	for v := from; v > to; v-- {
		loss, ok := dataLoss[v]
		if !ok {
			continue
		}
		holds := true
		if loss.holds != "" {
			if err := conn.QueryRowContext(ctx, loss.holds).Scan(&holds); err != nil {
				return fmt.Errorf("schema: looking for what step %d drops: %w", v, err)
			}
		}
		if holds {
			lost = append(lost, fmt.Sprintf("step %d drops %s", v, loss.what))
		}
	}
	if len(lost) == 0 {
		return nil
	}
	return fmt.Errorf("schema: %w: %s%s; run again with --force to drop it", ErrDropsData, strings.Join(lost, "; "), nothingChanged)
}

// Force records version v as installed and clean without running any step:
// the way out for a file another tool's migration left dirty, once its
// mem_ objects have been made to match v. A clean file is refused: forcing
// it to another version would make the next migrate run the wrong steps.
func Force(db *sql.DB, v uint, guards ...Guard) error {
	latest, err := Latest()
	if err != nil {
		return err
	}
	if v > latest {
		return fmt.Errorf("schema: migrate force: version %d does not exist; this memworker knows 0 to %d", v, latest)
	}
	return inTx(context.Background(), db, func(ctx context.Context, conn *sql.Conn) error {
		from, dirty, err := readVersion(ctx, conn)
		if err != nil {
			return err
		}
		if !dirty {
			return fmt.Errorf("schema: migrate force: the file is at version %d and clean; force is only for a file "+
				"another tool's migration left dirty (use migrate up or down to change versions)%s", from, nothingChanged)
		}
		for _, g := range guards {
			if err := g(ctx, conn); err != nil {
				return err
			}
		}
		if err := ensureVersionTable(ctx, conn); err != nil {
			return err
		}
		return setVersion(ctx, conn, v)
	})
}

// migrate moves the schema from its version to target(version) (capped at
// the latest), in one transaction.
// A down step runs only when it drops no data (dataLoss) or dropData is set.
// Every step invalidates the derived state's fingerprint: a step may drop
// and recreate derived tables empty, and the next sweep must then compute
// every row again rather than trust what it finds.
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
		var mapped, archives []string
		if to < mappingStep && from >= mappingStep {
			if mapped, err = MappedObjectDrops(ctx, conn); err != nil {
				return err
			}
		}
		if to < archiveStep && from >= archiveStep {
			if archives, err = archiveDrops(ctx, conn); err != nil {
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
		if err := runSteps(ctx, conn, all, from, to, mapped, archives); err != nil {
			return err
		}
		if err := setVersion(ctx, conn, to); err != nil {
			return err
		}
		if to > 0 {
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

// runSteps runs the up steps from+1..to, or the down steps from..to+1;
// before the mapping's step goes, the statements dropMapped drop what the
// mapping put on the app's tables (MappedObjectDrops), and after the
// archive's step went, dropArchives the archives of the app's tables
// (archiveDrops).
func runSteps(ctx context.Context, conn *sql.Conn, all []step, from, to uint, dropMapped, dropArchives []string) error {
	run := func(s step, body, dir string) error {
		if _, err := conn.ExecContext(ctx, body); err != nil {
			return stepError(s, dir, err)
		}
		return nil
	}
	if to > from {
		for _, s := range all {
			if s.version > from && s.version <= to {
				if err := run(s, s.up, "up"); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for i := len(all) - 1; i >= 0; i-- {
		if s := all[i]; s.version <= from && s.version > to {
			for _, drop := range dropMapped {
				if s.version != mappingStep {
					break
				}
				if _, err := conn.ExecContext(ctx, drop); err != nil {
					return stepError(s, "down", err)
				}
			}
			if err := run(s, s.down, "down"); err != nil {
				return err
			}
			for _, drop := range dropArchives {
				if s.version != archiveStep {
					break
				}
				if _, err := conn.ExecContext(ctx, drop); err != nil {
					return stepError(s, "down", err)
				}
			}
		}
	}
	return nil
}

// mappingStep is the step that installs mem_mapping, the declared mapping.
const mappingStep = 11

// archiveStep is the step that makes the typed archive (mem_archives).
const archiveStep = 14

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
	rows, err := conn.QueryContext(ctx, `SELECT name FROM mem_archives`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var drops []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		drops = append(drops, `DROP TABLE IF EXISTS main."`+strings.ReplaceAll(name, `"`, `""`)+`"`)
	}
	return drops, rows.Err()
}

// MappedObjectDrops are the statements that drop what a declared mapping
// put on an app's tables (memworker's triggers and indexes named
// mem_map_…): a new mapping replaces them, and going below the mapping's
// step they go, as their triggers would queue into tables that go too and
// fail the app's writes. An app's own trigger or index that only shares
// the prefix stays: memworker's are its change capture
// (mem_map_<table>_queue_insert|update|delete, queuing into mem_dirty_…)
// and its indexes on an id read as text (…_<table>_<column>_text, on a
// CAST). It only reads (rqlite cannot read after a write in a
// transaction).
func MappedObjectDrops(ctx context.Context, q interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT upper(type), name FROM sqlite_master
		WHERE type IN ('index', 'trigger') AND name LIKE 'mem\_map\_%' ESCAPE '\'
		  AND ((type = 'trigger' AND lower(name) IN ('mem_map_' || lower(tbl_name) || '_queue_insert',
		            'mem_map_' || lower(tbl_name) || '_queue_update', 'mem_map_' || lower(tbl_name) || '_queue_delete')
		        AND sql LIKE '%mem\_dirty\_%' ESCAPE '\')
		    OR (type = 'index' AND lower(name) LIKE '%\_text' ESCAPE '\' AND instr(lower(name), '_' || lower(tbl_name) || '_') > 0
		        AND sql LIKE '%CAST(%'))
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
		drops = append(drops, "DROP "+kind+` IF EXISTS main."`+strings.ReplaceAll(name, `"`, `""`)+`"`)
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
