package mapping

import (
	"context"
	"fmt"
	"strings"

	"github.com/memdecay/memdecay/sqlfuncs"
)

// Unplaced names the values of the app's rows that the mapping places
// nowhere, each with how many rows hold it and what a sweep does with
// them: a node category that nodes.category_tiers (when given) does not
// name, which decays by the reference rules; a fact segment with no tier (mem_segments holds none, and the
// mapping names no tier column), which a sweep skips as an invalid row;
// a node or fact status that is neither active nor archived (nor
// confirmed), which a sweep leaves alone. Read only; for map load --check
// and map load, so the values come up before the first sweep.
func Unplaced(ctx context.Context, q Querier, m *Mapping) ([]string, error) {
	var out []string
	add := func(query, what string) error {
		return addEach(ctx, q, query, func(value any, n int64) {
			out = append(out, fmt.Sprintf(what, shownValue(value), n))
		})
	}
	if n := m.Nodes; n != nil && n.Status != "" {
		known := append(append([]string{}, n.StatusActive...), n.StatusArchived)
		err := add(`SELECT `+Ident(n.Status)+`, count(*) FROM main.`+Ident(n.Table)+`
			WHERE `+Ident(n.Status)+` IS NULL OR `+Ident(n.Status)+` NOT IN (`+textList(known)+`) GROUP BY 1 ORDER BY 2 DESC, 1`,
			n.Table+"."+n.Status+" = %s in %d rows: neither active nor archived, a sweep leaves them alone (add it to status_active to sweep them)")
		if err != nil {
			return nil, err
		}
	}
	if n := m.Nodes; n != nil && n.Category != "" && len(n.CategoryTiers) > 0 {
		err := addEach(ctx, q, `SELECT `+Ident(n.Category)+`, count(*) FROM main.`+Ident(n.Table)+`
			WHERE `+Ident(n.Category)+` IS NULL OR CAST(`+Ident(n.Category)+` AS TEXT) NOT IN (`+textList(sortedNames(n.CategoryTiers))+`) GROUP BY 1 ORDER BY 2 DESC, 1`,
			func(value any, count int64) {
				text, _ := value.(string)
				if b, ok := value.([]byte); ok {
					text = string(b)
				}
				tier, _ := sqlfuncs.DecayTier("", text)
				out = append(out, fmt.Sprintf("%s.%s = %s in %d rows: nodes.category_tiers gives it no tier, so they decay as %s unless their tags say otherwise (add it to category_tiers)",
					n.Table, n.Category, shownValue(value), count, tier))
			})
		if err != nil {
			return nil, err
		}
	}
	if f := m.Facts; f != nil {
		if f.Segment != "" && f.Tier == "" {
			segment := MappedValues("f."+Ident(f.Segment), f.SegmentMap)
			err := add(`SELECT f.`+Ident(f.Segment)+`, count(*) FROM main.`+Ident(f.Table)+` f
				WHERE NOT EXISTS (SELECT 1 FROM main.mem_segments s WHERE s.segment = `+segment+`) GROUP BY 1 ORDER BY 2 DESC, 1`,
				f.Table+"."+f.Segment+" = %s in %d rows: no segment memworker knows, so no tier; a sweep skips them as invalid (map it to a segment in facts.segment_map, map a tier column, or use a segment of mem_segments)")
			if err != nil {
				return nil, err
			}
		}
		if f.Status != "" {
			known := append(append(orDefault(f.StatusActive, "active"), orDefault(f.StatusConfirmed, "confirmed")...), f.StatusArchived)
			err := add(`SELECT `+Ident(f.Status)+`, count(*) FROM main.`+Ident(f.Table)+`
				WHERE `+Ident(f.Status)+` IS NULL OR `+Ident(f.Status)+` NOT IN (`+textList(known)+`) GROUP BY 1 ORDER BY 2 DESC, 1`,
				f.Table+"."+f.Status+" = %s in %d rows: neither active, confirmed nor archived, a sweep leaves them alone")
			if err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// addEach calls each with every (value, count) row of query.
func addEach(ctx context.Context, q Querier, query string, each func(value any, count int64)) error {
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return fmt.Errorf("mapping: reading the values it places: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var value any
		var n int64
		if err := rows.Scan(&value, &n); err != nil {
			return err
		}
		each(value, n)
	}
	return rows.Err()
}

// orDefault is a copy of values, or the one value def when there are none.
func orDefault(values []string, def string) []string {
	if len(values) == 0 {
		return []string{def}
	}
	return append([]string{}, values...)
}

// textList is values as SQL text literals, separated by commas.
func textList(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = `'` + strings.ReplaceAll(v, `'`, `''`) + `'`
	}
	return strings.Join(quoted, ", ")
}

// shownValue is a value as a message shows it: text quoted, NULL named.
func shownValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		return fmt.Sprintf("%q", string(x))
	case string:
		return fmt.Sprintf("%q", x)
	}
	return fmt.Sprint(v)
}
