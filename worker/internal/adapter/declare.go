package adapter

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/memdecay/memdecay/schema"
	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/store"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
	"github.com/memdecay/memdecay/worker/mapping"
)

// DeclareMapping checks m against the database's schema and stores it as
// the database's mapping (mem_mapping), in one transaction, refused while a
// sweep runs: a sweep reads the mapping once, when it starts. The same
// transaction puts the mapping's terms in force: its settings written to
// mem_config and its policies to mem_edge_policies, replacing the rows of
// the kinds it names and leaving the others as they are. The derived
// state was computed for the tables of the mapping before, so its
// fingerprint goes and the next sweep computes every row.
func DeclareMapping(ctx context.Context, db *memdb.DB, m *mapping.Mapping, source string, now time.Time) error {
	_, err := memdb.ReadThenWrite(ctx, db, "map", func(q memdb.Querier) ([]memdb.Step, error) {
		if err := store.RefuseLiveSweep(ctx, q); err != nil {
			return nil, err
		}
		if err := m.Validate(ctx, q); err != nil {
			return nil, err
		}
		query, args := mapping.StoreSQL(m, source, now)
		steps := []memdb.Step{
			{Query: query, Args: args},
			{Query: `DELETE FROM mem_config WHERE key = 'derived_fingerprint'`, Args: nil},
		}
		terms, err := m.TermsSQL()
		if err != nil {
			return nil, err
		}
		for _, t := range terms {
			steps = append(steps, memdb.Step{Query: t.Query, Args: t.Args})
		}
		indexes, err := indexSteps(ctx, q, m)
		if err != nil {
			return nil, err
		}
		archives, err := sweepsql.ArchiveSteps(ctx, q, m)
		if err != nil {
			return nil, err
		}
		for _, a := range archives {
			indexes = append(indexes, memdb.Step{Query: a, Args: nil})
		}
		views, err := mappingViewSteps(ctx, q, m)
		return append(append(steps, indexes...), views...), err
	})
	return err
}

// Mapping reads the mapping the database declares (the preset mem when it
// declares none) and checks it against the schema as it is now.
func Mapping(ctx context.Context, db *memdb.DB) (*mapping.Declared, error) {
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
func indexSteps(ctx context.Context, q memdb.Querier, m *mapping.Mapping) ([]memdb.Step, error) {
	objects, err := mappedObjects(ctx, q)
	if err != nil {
		return nil, err
	}
	var steps []memdb.Step
	for _, o := range objects {
		if o.ours {
			steps = append(steps, memdb.Step{Query: "DROP " + strings.ToUpper(o.kind) + " IF EXISTS main." + sweepsql.Ident(o.name), Args: nil})
		}
	}
	if m.IsDefault() {
		return steps, nil
	}
	create, err := mappedIndexes(ctx, q, m)
	if err != nil {
		return nil, err
	}
	triggers, err := captureTriggers(ctx, q, m)
	if err != nil {
		return nil, err
	}
	for _, c := range append(create, triggers...) {
		if err := nameFree(c, objects); err != nil {
			return nil, err
		}
		steps = append(steps, memdb.Step{Query: c, Args: nil})
	}
	return steps, nil
}

// mappedObject is an index or trigger of the file named like the ones a
// mapping puts on an app's tables (mem_map_…), and whether it is one.
type mappedObject struct {
	kind, name, table string
	ours              bool
}

// mappedObjects reads the indexes and triggers named mem_map_…, telling
// memworker's (change capture queuing into mem_dirty_…, indexes on an id
// read as text) from an app's own that only share the prefix: declaring a
// mapping drops and remakes memworker's, and never touches the app's.
func mappedObjects(ctx context.Context, q memdb.Querier) ([]mappedObject, error) {
	rows, err := q.QueryContext(ctx, `SELECT type, name, tbl_name, `+schema.OwnMappedObject+` FROM sqlite_master
		WHERE type IN ('index', 'trigger') AND name LIKE 'mem\_map\_%' ESCAPE '\' ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("mapping: reading the triggers and indexes on the app's tables: %w", err)
	}
	defer rows.Close()
	var out []mappedObject
	for rows.Next() {
		var o mappedObject
		var ours int64
		if err := rows.Scan(&o.kind, &o.name, &o.table, &ours); err != nil {
			return nil, err
		}
		o.ours = ours != 0
		out = append(out, o)
	}
	return out, rows.Err()
}

// nameFree refuses to create, by the statement create, an object whose
// name an app's own index or trigger already holds: declaring the mapping
// would replace it (or, for an index, keep the app's in its place).
func nameFree(create string, objects []mappedObject) error {
	m := createdName.FindStringSubmatch(create)
	if m == nil {
		return fmt.Errorf("mapping: no name in %.60s", create)
	}
	name := strings.ReplaceAll(m[1], `""`, `"`)
	for _, o := range objects {
		if !o.ours && strings.EqualFold(o.name, name) {
			return mapping.NameTaken(o.kind, o.name, o.table)
		}
	}
	return nil
}
