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
	19: {"the reads recorded for memworker tune (mem_accesses)", `SELECT EXISTS (SELECT 1 FROM mem_accesses)`},
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
