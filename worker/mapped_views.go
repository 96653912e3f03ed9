package worker

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/settings"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
)

// The views memworker's own tables have (mem_clock, mem_block_tiers,
// mem_edges_effective: each edge's model, effective weight and time left)
// read memworker's tables. Through a mapping, readers get the same views
// of the app's tables: temp views views.go writes as it writes the
// schema's, reading the adapter's views instead, on the clock a sweep
// through the mapping runs on, so the numbers are the ones the views give
// memworker's tables.

// effectiveView is the temp view of the app's edges that mem_edges_effective
// is of memworker's own, with the edge's ends (end_a, end_b) beside its key.
const effectiveView = "mem_map_edges_effective"

// source is what the views of the app's tables read: the adapter's views,
// under the names the temp views have, on the active-hours clock
// activeHours (an SQL expression).
func (a *adapted) source(activeHours string) viewSource {
	return viewSource{
		tables: a.tables, blocks: a.view("blocks"), tags: a.view("block_tags"), edges: a.view("edges"), facts: a.view("facts"),
		clock: "mem_map_clock", tiers: "mem_map_block_tiers", effective: effectiveView, activeHours: activeHours,
		endA: "end_a", endB: "end_b", extraKeys: "end_a, end_b, key_raw, key_raw2, ",
	}
}

// effectiveViews are the statements that make the temp views mem_map_clock,
// mem_map_block_tiers and mem_map_edges_effective on a connection the
// adapter's views are set up on (hours: the mapping's clock, when it
// keeps its own), and those that drop them.
func (a *adapted) effectiveViews(hours *float64) (create, drop []string) {
	src := a.source(memViews.activeHours)
	if hours != nil {
		src.activeHours = strconv.FormatFloat(*hours, 'g', -1, 64)
	}
	for _, v := range []struct{ name, body string }{
		{src.clock, src.clockView()}, {src.tiers, src.tiersView()}, {effectiveView, src.effectiveView()},
	} {
		drop = append(drop, "DROP VIEW IF EXISTS temp."+v.name)
		create = append(create, drop[len(drop)-1], "CREATE TEMP VIEW "+v.name+" AS\n"+v.body)
	}
	return create, drop
}

// readerViews are the readers' views of the app's tables, as the
// extension serves them (views.go): the adapter's views their common
// table expressions, on the clock a sweep through the mapping reads (the
// wall clock in hours, the app's own clock row, or mem_config's), in SQL
// so that they read it when they are read.
func (a *adapted) readerViews() ([]readerView, error) {
	from, err := a.ctes(nil)
	if err != nil {
		return nil, err
	}
	hours := memViews.activeHours
	switch c := a.m.Clock; {
	case a.wallHours:
		hours = `(` + viewWall + ` / 3600.0)`
	case c != nil:
		hours = `(` + appClockValue(c, sweepsql.Literal(c.ActiveHoursKey)) + `)`
	}
	return a.source(hours).readerViews(from), nil
}

// viewsReader is where a reader finds the edges and their views: on q, the
// tables named by the dialect, and the views effective (each edge's
// numbers), tiers (each block's tier) and clock; mapped through a mapping,
// whose own clock is hours when it keeps one.
type viewsReader struct {
	q                       memdb.Querier
	tables                  *sweepsql.Dialect
	effective, tiers, clock string
	mapped                  bool
	hours                   *float64
	singleKey               bool // through a mapping: a link's key is one column
	wallHours               bool // through a mapping of wall times: hours since 1970, not active hours
}

// withEffectiveViews runs read where mem_edges_effective's view of the
// edges is effective: memworker's own, or the app's through the mapping.
// On a file the adapter's views and the effective ones are temp views of
// read's connection, dropped after; on rqlite, which keeps no temp view
// across requests, read's queries carry them as common table expressions
// (readOnly), and it may only read.
func withEffectiveViews(ctx context.Context, db *DB, read func(r viewsReader) error) error {
	a, err := adaptMapping(ctx, db, false)
	if err != nil {
		return err
	}
	if a == nil {
		return read(viewsReader{q: db.SQL, tables: sweepsql.MemTables, effective: "mem_edges_effective", tiers: "mem_block_tiers", clock: "mem_clock"})
	}
	cfg, err := LoadConfig(ctx, db.SQL)
	if err != nil {
		return err
	}
	clock, err := settings.CommandClock(cfg, time.Now())
	if err != nil {
		return err
	}
	r := viewsReader{tables: a.tables, effective: effectiveView, tiers: "mem_map_block_tiers", clock: "mem_map_clock",
		mapped: true, singleKey: a.singleKey, wallHours: a.wallHours}
	h, ok, err := a.hours(ctx, db.SQL, clock.Wall)
	if err != nil {
		return err
	}
	if ok {
		r.hours = &h
	}
	create, drops := a.effectiveViews(r.hours)
	return a.readThrough(ctx, db, create, drops, func(q memdb.Querier) error {
		r.q = q
		return read(r)
	})
}

// readThrough runs read where the adapter's views and the temp views more
// makes are set up: on a file, made on one connection and dropped after
// (drops, then the adapter's teardown); on rqlite, which keeps no temp
// view across requests, carried by read's queries as common table
// expressions (readOnly).
func (a *adapted) readThrough(ctx context.Context, db *DB, more, drops []string, read func(q memdb.Querier) error) error {
	if db.Rqlite {
		q, err := a.readOnly(db.SQL, more)
		if err != nil {
			return err
		}
		return read(q)
	}
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	defer func() {
		for _, d := range append(drops, a.teardown...) {
			conn.ExecContext(context.WithoutCancel(ctx), d)
		}
	}()
	if err := a.setUp(ctx, conn); err != nil {
		return err
	}
	for _, c := range more {
		if _, err := conn.ExecContext(ctx, c); err != nil {
			return fmt.Errorf("mapping: %w", err)
		}
	}
	return read(conn)
}

// tempView is a statement that makes a temp view: its name and its query.
var tempView = regexp.MustCompile(`(?s)^CREATE TEMP VIEW (mem_map_\w+) AS\s+(.*)$`)

// readOnly is a querier that reads through the adapter's views (and the
// temp views more makes) without making them: each query it is given is
// prefixed with them as common table expressions, so it runs as one
// request on rqlite. It writes nothing.
func (a *adapted) readOnly(q memdb.Querier, more []string) (memdb.Querier, error) {
	ctes, err := a.ctes(more)
	if err != nil {
		return nil, err
	}
	return withCTEs{q: q, with: withClause(ctes)}, nil
}

// ctes are the adapter's views and the temp views more makes, as the
// common table expressions of one statement.
func (a *adapted) ctes(more []string) ([]string, error) {
	var ctes []string
	for _, stmt := range append(append([]string{}, a.setup...), more...) {
		if strings.HasPrefix(stmt, "DROP ") || strings.HasPrefix(stmt, "CREATE TEMP TRIGGER ") {
			continue
		}
		m := tempView.FindStringSubmatch(stmt)
		if m == nil {
			return nil, fmt.Errorf("mapping: cannot read through %.40q as a common table expression", stmt)
		}
		ctes = append(ctes, m[1]+" AS (\n"+m[2]+"\n)")
	}
	return ctes, nil
}

// withClause is the WITH clause of common table expressions ctes.
func withClause(ctes []string) string { return "WITH " + strings.Join(ctes, ",\n") + "\n" }

// withCTEs is a querier whose queries are prefixed with common table
// expressions; it refuses every write.
type withCTEs struct {
	q    memdb.Querier
	with string
}

func (w withCTEs) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return nil, fmt.Errorf("mapping: a read through a mapping on rqlite writes nothing")
}

func (w withCTEs) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return w.q.QueryContext(ctx, w.with+query, args...)
}

func (w withCTEs) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return w.q.QueryRowContext(ctx, w.with+query, args...)
}

// linkKey is a link's key as the app holds it, to name it to a person: the
// column's value, or the JSON array of a key of two columns (k2 not "").
func linkKey(k1, k2 string) string {
	if k2 == "" {
		return k1
	}
	pair, _ := json.Marshal([]string{k1, k2}) // strings always marshal
	return string(pair)
}

// edgeOutlook is the edges closest to their decay horizon, as the
// effective view has them (excluded edges have decayed already, softly:
// not "closest to decay"); through a mapping an edge is named by its ends
// and its key.
func edgeOutlook(ctx context.Context, db *DB, limit int) ([]EdgeOutlook, error) {
	soon := []EdgeOutlook{}
	err := withEffectiveViews(ctx, db, func(r viewsReader) error {
		q, view, mapped := r.q, r.effective, r.mapped
		ends, key := "from_id, to_id, '', ''", ""
		if mapped {
			ends, key = "end_a, end_b, from_id, to_id", ", from_id, to_id"
		}
		rows, err := q.QueryContext(ctx, `SELECT `+ends+`, weight, effective_weight, clock, time_left,
		       CASE clock WHEN 'wall' THEN time_left * 24 ELSE time_left END AS hours
		FROM `+view+` WHERE time_left IS NOT NULL AND NOT excluded ORDER BY hours`+key+`, 1, 2 LIMIT ?`, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var o EdgeOutlook
			var k1, k2 sql.NullString
			if err := rows.Scan(&o.From, &o.To, &k1, &k2, &o.Weight, &o.EffectiveWeight, &o.Clock, &o.TimeLeft, &o.HoursLeft); err != nil {
				return err
			}
			if mapped {
				o.Key = linkKey(k1.String, k2.String)
			}
			soon = append(soon, o)
		}
		return rows.Err()
	})
	return soon, err
}
