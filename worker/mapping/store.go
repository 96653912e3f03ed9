package mapping

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Declared is the mapping a database holds, with where it came from.
type Declared struct {
	*Mapping
	// Source is the preset's name or the file's name; "" when the database
	// declares none (the preset mem is in force).
	Source     string
	DeclaredAt time.Time
}

// Load reads the mapping the database declares, or the preset mem when it
// declares none. A stored mapping that no longer parses is an error naming
// the way out.
func Load(ctx context.Context, q Querier) (*Declared, error) {
	var spec, source string
	var at int64
	found, err := scanOne(ctx, q, `SELECT spec, source, declared_at FROM mem_mapping WHERE id = 1`, nil, &spec, &source, &at)
	if err != nil {
		return nil, fmt.Errorf("mapping: reading mem_mapping: %w", err)
	}
	if !found {
		m, _ := Preset(Default)
		return &Declared{Mapping: m}, nil
	}
	m := &Mapping{}
	if err := json.Unmarshal([]byte(spec), m); err != nil {
		return nil, bad("the stored mapping (from %s) does not parse: %v; declare it again with memworker map load FILE or map use PRESET", source, err)
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("%w (the stored mapping, from %s; declare it again with memworker map load FILE or map use PRESET)", err, source)
	}
	return &Declared{Mapping: m, Source: source, DeclaredAt: time.Unix(at, 0).UTC()}, nil
}

// StoreSQL is the statement that makes m the database's mapping, replacing
// any other; validate m first, in the same transaction.
func StoreSQL(m *Mapping, source string, at time.Time) (query string, args []any) {
	return `INSERT INTO mem_mapping (id, spec, source, declared_at) VALUES (1, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET spec = excluded.spec, source = excluded.source, declared_at = excluded.declared_at`,
		[]any{m.JSON(), source, at.Unix()}
}
