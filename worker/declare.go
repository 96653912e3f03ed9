package worker

import (
	"context"
	"time"

	"github.com/memdecay/memdecay/schema"
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
		steps := []step{
			{query, args},
			{`DELETE FROM mem_config WHERE key = 'derived_fingerprint'`, nil},
		}
		indexes, err := indexSteps(ctx, q, m)
		if err != nil {
			return nil, err
		}
		archives, err := archiveSteps(ctx, q, m)
		if err != nil {
			return nil, err
		}
		for _, a := range archives {
			indexes = append(indexes, step{a, nil})
		}
		views, err := mappingViewSteps(ctx, q, m)
		return append(append(steps, indexes...), views...), err
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

// indexSteps drops the indexes and triggers an earlier mapping put on an
// app's tables and creates the ones m needs: indexes on numeric ids read
// as text (mappedIndexes), by which a sweep finds rows, and the triggers
// that queue what the app changes (captureTriggers).
func indexSteps(ctx context.Context, q querier, m *mapping.Mapping) ([]step, error) {
	drops, err := schema.MappedObjectDrops(ctx, q)
	if err != nil {
		return nil, err
	}
	var steps []step
	for _, d := range drops {
		steps = append(steps, step{d, nil})
	}
	if m.IsDefault() {
		return steps, nil
	}
	create, err := mappedIndexes(ctx, q, m)
	if err != nil {
		return nil, err
	}
	triggers, err := captureTriggers(ctx, q, m)
	for _, c := range append(create, triggers...) {
		steps = append(steps, step{c, nil})
	}
	return steps, err
}
