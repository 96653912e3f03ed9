package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/memdecay/memdecay/worker/mapping"
)

// DeclareMapping checks m against the database's schema and stores it as
// the database's mapping (mem_mapping), in one transaction, refused while a
// sweep runs: a sweep reads the mapping once, when it starts. The derived
// state was computed for the tables of the mapping before, so its
// fingerprint goes and the next sweep computes every row.
func DeclareMapping(ctx context.Context, db *DB, m *mapping.Mapping, source string, now time.Time) error {
	_, err := readThenWrite(ctx, db, "map", func(q querier) ([]step, error) {
		if err := refuseLiveSweep(ctx, q); err != nil {
			return nil, err
		}
		if err := m.Validate(ctx, q); err != nil {
			return nil, err
		}
		query, args := mapping.StoreSQL(m, source, now)
		return []step{
			{query, args},
			{`DELETE FROM mem_config WHERE key = 'derived_fingerprint'`, nil},
		}, nil
	})
	return err
}

// Mapping reads the mapping the database declares (the preset mem when it
// declares none) and checks it against the schema as it is now.
func Mapping(ctx context.Context, db *DB) (*mapping.Declared, error) {
	d, err := mapping.Load(ctx, db.SQL)
	if err != nil {
		return nil, err
	}
	return d, d.Validate(ctx, db.SQL)
}

// ErrMappingNotSwept: the database declares a mapping of an app's own
// tables, and sweeping through such a mapping is not built yet: a sweep of
// memworker's own tables would find them empty and say nothing was
// required, so it is refused before anything changes.
var ErrMappingNotSwept = errors.New("sweeping an app's own tables through a mapping is not built yet in this memworker")

// refuseAppMapping fails with ErrMappingNotSwept unless the mapping in
// force is memworker's own tables (the preset mem).
func refuseAppMapping(ctx context.Context, db *DB) error {
	d, err := mapping.Load(ctx, db.SQL)
	if err != nil {
		return err
	}
	if d.IsDefault() {
		return nil
	}
	return fmt.Errorf("%w: the database declares the mapping %s (%s); nothing was changed (memworker map show prints it; memworker map use mem sweeps memworker's own mem_ tables)",
		ErrMappingNotSwept, d.Source, d.Tables())
}
