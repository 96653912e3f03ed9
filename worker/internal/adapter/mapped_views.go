package adapter

import (
	"context"
	"database/sql"
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
func (a *Adapted) source(activeHours string) viewSource {
	return viewSource{
		tables: a.Tables, blocks: a.view("blocks"), tags: a.view("block_tags"), edges: a.view("edges"), facts: a.view("facts"),
		clock: "mem_map_clock", tiers: "mem_map_block_tiers", effective: effectiveView, activeHours: activeHours,
		endA: "end_a", endB: "end_b", extraKeys: "end_a, end_b, key_raw, key_raw2, ",
	}
}

// effectiveViews are the statements that make the temp views mem_map_clock,
// mem_map_block_tiers and mem_map_edges_effective on a connection the
// adapter's views are set up on (hours: the mapping's clock, when it
// keeps its own; wall: the wall clock in unix seconds, when given), and
// those that drop them.
func (a *Adapted) effectiveViews(hours *float64, wall *int64) (create, drop []string) {
	src := a.source(memViews.activeHours)
	if hours != nil {
		src.activeHours = strconv.FormatFloat(*hours, 'g', -1, 64)
	}
	return src.atWall(wall).tempViews(src.tiers)
}

// atWall is s on the wall clock wall (unix seconds), or s when nil.
func (s viewSource) atWall(wall *int64) viewSource {
	if wall != nil {
		s.wall = strconv.FormatInt(*wall, 10)
	}
	return s
}

// tempViews are the statements that make s's clock, its tiers (when tiers
// names a view of its own) and its effective view as temp views, and
// those that drop them.
func (s viewSource) tempViews(tiers string) (create, drop []string) {
	views := []struct{ name, body string }{{s.clock, s.clockView()}}
	if tiers != "" {
		views = append(views, struct{ name, body string }{tiers, s.tiersView()})
	}
	views = append(views, struct{ name, body string }{s.effective, s.effectiveView()})
	for _, v := range views {
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
func (a *Adapted) readerViews() ([]readerView, error) {
	from, err := a.CTEs(nil)
	if err != nil {
		return nil, err
	}
	hours := memViews.activeHours
	switch c := a.Map.Clock; {
	case a.WallHours:
		hours = `(` + viewWall + ` / 3600.0)`
	case c != nil:
		hours = `(` + appClockValue(c, sweepsql.Literal(c.ActiveHoursKey)) + `)`
	}
	return a.source(hours).readerViews(from), nil
}

// ViewsReader is where a reader finds the edges and their views: on q, the
// tables named by the dialect, and the views effective (each edge's
// numbers), tiers (each block's tier) and clock; mapped through a mapping,
// whose own clock is hours when it keeps one.
type ViewsReader struct {
	Q                       memdb.Querier
	Tables                  *sweepsql.Dialect
	Effective, Tiers, Clock string
	Mapped                  bool
	Hours                   *float64
	SingleKey               bool // through a mapping: a link's key is one column
	WallHours               bool // through a mapping of wall times: hours since 1970, not active hours
}

// WithEffectiveViews runs read where mem_edges_effective's view of the
// edges is effective: memworker's own, or the app's through the mapping.
// On a file the adapter's views and the effective ones are temp views of
// read's connection, dropped after; on rqlite, which keeps no temp view
// across requests, read's queries carry them as common table expressions
// (readOnly), and it may only read.
func WithEffectiveViews(ctx context.Context, db *memdb.DB, read func(r ViewsReader) error) error {
	return WithEffectiveViewsAt(ctx, db, nil, read)
}

// WithEffectiveViewsAt is WithEffectiveViews with the views on the wall
// clock wall when it is given (explain --wall-now): it wins over a pinned
// wall_clock and the machine's, and through a mapping of wall times it is
// the hour clock too. memworker's own views then read through temp views
// of the same rules on that clock.
func WithEffectiveViewsAt(ctx context.Context, db *memdb.DB, wall *time.Time, read func(r ViewsReader) error) error {
	a, err := AdaptMapping(ctx, db, false)
	if err != nil {
		return err
	}
	var wallSeconds *int64
	if wall != nil {
		s := wall.Unix()
		wallSeconds = &s
	}
	if a == nil {
		r := ViewsReader{Q: db.SQL, Tables: sweepsql.MemTables, Effective: "mem_edges_effective", Tiers: "mem_block_tiers", Clock: "mem_clock"}
		if wall == nil {
			return read(r)
		}
		src := memViews
		src.clock, src.effective = "mem_map_clock", effectiveView
		r.Clock, r.Effective = src.clock, src.effective
		create, drops := src.atWall(wallSeconds).tempViews("")
		return (&Adapted{}).readThrough(ctx, db, create, drops, func(q memdb.Querier) error {
			r.Q = q
			return read(r)
		})
	}
	cfg, err := settings.LoadConfig(ctx, db.SQL)
	if err != nil {
		return err
	}
	clock, err := settings.CommandClock(cfg, time.Now())
	if err != nil {
		return err
	}
	if wall != nil {
		clock.Wall = *wall
	}
	r := ViewsReader{Tables: a.Tables, Effective: effectiveView, Tiers: "mem_map_block_tiers", Clock: "mem_map_clock",
		Mapped: true, SingleKey: a.SingleKey, WallHours: a.WallHours}
	h, ok, err := a.Hours(ctx, db.SQL, clock.Wall)
	if err != nil {
		return err
	}
	if ok {
		r.Hours = &h
	}
	create, drops := a.effectiveViews(r.Hours, wallSeconds)
	return a.readThrough(ctx, db, create, drops, func(q memdb.Querier) error {
		r.Q = q
		return read(r)
	})
}

// readThrough runs read where the adapter's views and the temp views more
// makes are set up: on a file, made on one connection and dropped after
// (drops, then the adapter's teardown); on rqlite, which keeps no temp
// view across requests, carried by read's queries as common table
// expressions (readOnly).
func (a *Adapted) readThrough(ctx context.Context, db *memdb.DB, more, drops []string, read func(q memdb.Querier) error) error {
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
	if err := a.SetUp(ctx, conn); err != nil {
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
func (a *Adapted) readOnly(q memdb.Querier, more []string) (memdb.Querier, error) {
	ctes, err := a.CTEs(more)
	if err != nil {
		return nil, err
	}
	return WithCTEs{Q: q, With: WithClause(ctes)}, nil
}

// CTEs are the adapter's views and the temp views more makes, as the
// common table expressions of one statement.
func (a *Adapted) CTEs(more []string) ([]string, error) {
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

// WithClause is the WITH clause of common table expressions ctes.
func WithClause(ctes []string) string { return "WITH " + strings.Join(ctes, ",\n") + "\n" }

// WithCTEs is a querier whose queries are prefixed with common table
// expressions; it refuses every write.
type WithCTEs struct {
	Q    memdb.Querier
	With string
}

func (w WithCTEs) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return nil, fmt.Errorf("mapping: a read through a mapping on rqlite writes nothing")
}

func (w WithCTEs) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return w.Q.QueryContext(ctx, w.With+query, args...)
}

func (w WithCTEs) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return w.Q.QueryRowContext(ctx, w.With+query, args...)
}
