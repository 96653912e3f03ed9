// Package schema installs the memdecay memory schema (every table prefixed
// mem_) with golang-migrate. The migrations are embedded in the binary and
// reversible; the version table is mem_schema_migrations.
package schema

import (
	"database/sql"
	"embed"
	"errors"
	"fmt"

	"github.com/golang-migrate/migrate/v4"
	"github.com/golang-migrate/migrate/v4/database/sqlite3"
	"github.com/golang-migrate/migrate/v4/source/iofs"
)

//go:embed migrations/*.sql
var migrations embed.FS

// VersionTable is golang-migrate's bookkeeping table.
const VersionTable = "mem_schema_migrations"

// ErrTooNew means the database was migrated by a newer memworker.
var ErrTooNew = errors.New("schema is newer than this memworker")

// ErrNotInstalled means the memory schema has not been migrated in.
var ErrNotInstalled = errors.New("memory schema not installed (run: memworker migrate up)")

// Latest is the newest migration version this binary carries.
func Latest() (uint, error) {
	src, err := iofs.New(migrations, "migrations")
	if err != nil {
		return 0, err
	}
	defer src.Close()
	v, err := src.First()
	if err != nil {
		return 0, err
	}
	for {
		next, err := src.Next(v)
		if err != nil {
			return v, nil
		}
		v = next
	}
}

func newMigrate(db *sql.DB) (*migrate.Migrate, error) {
	src, err := iofs.New(migrations, "migrations")
	if err != nil {
		return nil, fmt.Errorf("schema: reading embedded migrations: %w", err)
	}
	drv, err := sqlite3.WithInstance(db, &sqlite3.Config{MigrationsTable: VersionTable})
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	m, err := migrate.NewWithInstance("iofs", src, "sqlite3", drv)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return m, nil
}

// Version reports the installed schema version; 0 when not installed.
func Version(db *sql.DB) (version uint, dirty bool, err error) {
	var n int
	err = db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, VersionTable).Scan(&n)
	if err != nil || n == 0 {
		return 0, false, err
	}
	var v sql.NullInt64
	var d sql.NullBool
	err = db.QueryRow(`SELECT version, dirty FROM `+VersionTable+` LIMIT 1`).Scan(&v, &d)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("schema: reading %s: %w", VersionTable, err)
	}
	return uint(v.Int64), d.Bool, nil
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
		return fmt.Errorf("schema: version %d is dirty (a migration failed half-way); fix it, then run memworker migrate up", v)
	case v == 0:
		return ErrNotInstalled
	case v > latest:
		return fmt.Errorf("%w: database is at version %d, this memworker knows up to %d; upgrade memworker", ErrTooNew, v, latest)
	case v < latest:
		return fmt.Errorf("schema: database is at version %d, this memworker needs %d (run: memworker migrate up)", v, latest)
	}
	return nil
}

// Up applies every pending migration. It refuses a database whose schema is
// newer than this binary and leaves the app's own tables alone.
func Up(db *sql.DB) (uint, error) {
	if err := refuseNewer(db); err != nil {
		return 0, err
	}
	from, _, err := Version(db)
	if err != nil {
		return 0, err
	}
	latest, err := Latest()
	if err != nil {
		return 0, err
	}
	saved, err := guardRebuilds(db, from, latest)
	if err != nil {
		return 0, err
	}
	m, err := newMigrate(db)
	if err != nil {
		return 0, err
	}
	if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return 0, fmt.Errorf("schema: migrate up: %w", err)
	}
	if err := recreate(db, saved); err != nil {
		return 0, err
	}
	v, _, err := Version(db)
	return v, err
}

// Down reverts the newest migration step, or all of them when all is set.
func Down(db *sql.DB, all bool) (uint, error) {
	if err := refuseNewer(db); err != nil {
		return 0, err
	}
	from, _, err := Version(db)
	if err != nil {
		return 0, err
	}
	to := uint(0)
	if !all && from > 0 {
		to = from - 1
	}
	saved, err := guardRebuilds(db, from, to)
	if err != nil {
		return 0, err
	}
	m, err := newMigrate(db)
	if err != nil {
		return 0, err
	}
	if all {
		err = m.Down()
	} else {
		err = m.Steps(-1)
	}
	if err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return 0, fmt.Errorf("schema: migrate down: %w", err)
	}
	if err := recreate(db, saved); err != nil {
		return 0, err
	}
	v, _, err := Version(db)
	return v, err
}

func refuseNewer(db *sql.DB) error {
	v, _, err := Version(db)
	if err != nil {
		return err
	}
	latest, err := Latest()
	if err != nil {
		return err
	}
	if v > latest {
		return fmt.Errorf("%w: database is at version %d, this memworker knows up to %d; upgrade memworker", ErrTooNew, v, latest)
	}
	return nil
}
