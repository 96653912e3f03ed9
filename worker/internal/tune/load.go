package tune

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/memdecay/memdecay/sqlfuncs"
	"github.com/memdecay/memdecay/worker/internal/adapter"
	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/report"
	"github.com/memdecay/memdecay/worker/internal/settings"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
	"github.com/memdecay/memdecay/worker/mapping"
)

// ErrNoReadLog: the mapping in force names no reads to learn from.
var ErrNoReadLog = errors.New("no read log")

// ErrPreset: the mapping in force is a preset, whose tiers no file declares.
var ErrPreset = errors.New("a preset's tiers are not declared")

// Options say how to tune.
type Options struct {
	Holdout    float64   // the share of the latest reads that judges the answer
	MissBudget int       // the misses a tier may have on the earlier reads
	Machine    time.Time // the machine's wall clock (a pinned wall_clock wins)
}

// Skipped is a row of the read log the replay leaves out, and why.
type Skipped struct {
	Node    string `json:"node"`
	At      string `json:"at"`
	Problem string `json:"problem"`
}

// maxNamed is how many skipped rows a report names (all are counted).
const maxNamed = 10

// Report is a replay of a database's reads: the replay's result, with the
// read log it came from and the rows it skipped.
type Report struct {
	*Result
	Log          mapping.Accesses
	WallClock    bool              // hours are wall-clock hours
	Declared     map[string]string // each tunable tier's half-life as the mapping gives it
	Skipped      []Skipped         // the first maxNamed
	SkippedCount map[string]int    // by kind: node, time, future, unknown
}

// Tune replays the reads of the mapping in force on db.
func Tune(ctx context.Context, db *memdb.DB, opt Options) (*Report, error) {
	d, err := mapping.Load(ctx, db.SQL)
	if err != nil {
		return nil, err
	}
	if d.IsDefault() {
		return nil, fmt.Errorf("%w: the mapping in force is the preset mem (memworker's own tables), which keeps no reads; "+
			"declare the app's tables with an [accesses] read log or nodes.record_accesses (memworker map load)", ErrNoReadLog)
	}
	log := d.ReadLog()
	if log == nil {
		return nil, fmt.Errorf("%w: the mapping (%s) declares no [accesses] and does not set nodes.record_accesses; "+
			"give one and declare it again (memworker map load)", ErrNoReadLog, report.Printable(d.Source))
	}
	cfg, err := settings.LoadConfig(ctx, db.SQL)
	if err != nil {
		return nil, err
	}
	clock, err := settings.CommandClock(cfg, opt.Machine)
	if err != nil {
		return nil, err
	}
	if !(cfg.BlockPruneThreshold > 0 && cfg.BlockPruneThreshold < 1) {
		return nil, fmt.Errorf("block_prune_threshold %v: no node is ever archived, so there is nothing to tune (want a value above 0 and below 1)", cfg.BlockPruneThreshold)
	}
	rates, err := sqlfuncs.ParseHalfLives("tune", "tiers", orEmpty(d.HalfLives()))
	if err != nil {
		return nil, err
	}
	rep := &Report{Log: *log, WallClock: d.WallClock(), Declared: map[string]string{}, SkippedCount: map[string]int{}}
	in := Input{K: math.Log2(1 / cfg.BlockPruneThreshold), Declared: map[string]float64{}, Holdout: opt.Holdout, MissBudget: opt.MissBudget}
	in.PermanentLambda, _ = sqlfuncs.TierLambda(sqlfuncs.TierPermanent)
	for _, tier := range Tunable {
		l, _ := sqlfuncs.TierLambdaMapped(tier, rates)
		in.Declared[tier] = math.Ln2 / l
		rep.Declared[tier] = d.Tiers[tier]
		if rep.Declared[tier] == "" {
			rep.Declared[tier] = HalfLifeText(in.Declared[tier])
		}
	}
	err = adapter.WithEffectiveViews(ctx, db, func(r adapter.ViewsReader) error {
		a, err := adapter.AdaptMapping(ctx, db, false)
		if err != nil {
			return err
		}
		h, ok, err := a.Hours(ctx, r.Q, clock.Wall)
		if err != nil {
			return err
		}
		in.End = clock.Hours
		if ok {
			in.End = h
		}
		index, err := readNodes(ctx, r.Q, r.Tiers, &in)
		if err != nil {
			return err
		}
		return rep.readLog(ctx, r.Q, index, &in)
	})
	if err != nil {
		return nil, err
	}
	res, err := Replay(in)
	if err != nil {
		return nil, fmt.Errorf("replaying %s: %w", report.Printable(log.Table), err)
	}
	rep.Result = res
	return rep, nil
}

func orEmpty(halfLives string) string {
	if halfLives == "" {
		return "{}"
	}
	return halfLives
}

// readNodes reads every node's tier (the readers' view tiers, as the
// sweep computes it) and whether it is pinned, by key.
func readNodes(ctx context.Context, q memdb.Querier, tiers string, in *Input) (map[string]int32, error) {
	rows, err := q.QueryContext(ctx, `SELECT t.id, t.tier, coalesce(b.pinned, 0) != 0 FROM `+tiers+` t JOIN mem_map_blocks b ON b.id = t.id`)
	if err != nil {
		return nil, fmt.Errorf("reading the nodes' tiers: %w", err)
	}
	defer rows.Close()
	index := map[string]int32{}
	for rows.Next() {
		var id sql.NullString
		var tier string
		var pinned bool
		if err := rows.Scan(&id, &tier, &pinned); err != nil {
			return nil, err
		}
		if !id.Valid {
			continue // a node no sweep can name
		}
		index[id.String] = int32(len(in.Nodes))
		in.Nodes = append(in.Nodes, Node{Tier: tier, Pinned: pinned})
	}
	return index, rows.Err()
}

// readLog reads the read log into in.Reads, skipping (counting, and
// naming the first few) rows with no node key, no time on the log's
// clock, a time after now, or a key no node has.
func (rep *Report) readLog(ctx context.Context, q memdb.Querier, index map[string]int32, in *Input) error {
	l := rep.Log
	at := sweepsql.Ident(l.At)
	query := `SELECT CAST(` + sweepsql.Ident(l.Node) + ` AS TEXT), ` + adapter.AccessHours(at, l.AtClock) + `, CAST(` + at + ` AS TEXT), typeof(` + at + `)
FROM main.` + sweepsql.Ident(l.Table)
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return fmt.Errorf("reading the read log %s: %w", report.Printable(l.Table), err)
	}
	defer rows.Close()
	skip := func(kind, node, atText, problem string) {
		rep.SkippedCount[kind]++
		if len(rep.Skipped) < maxNamed {
			rep.Skipped = append(rep.Skipped, Skipped{Node: node, At: atText, Problem: problem})
		}
	}
	for rows.Next() {
		var node, atText sql.NullString
		var hours sql.NullFloat64
		var kind string
		if err := rows.Scan(&node, &hours, &atText, &kind); err != nil {
			return err
		}
		shown := atText.String
		if !atText.Valid {
			shown = "NULL"
		}
		switch {
		case !node.Valid:
			skip("node", "NULL", shown, fmt.Sprintf("%s.%s is NULL", l.Table, l.Node))
		case !atText.Valid:
			skip("time", node.String, shown, fmt.Sprintf("%s.%s is NULL", l.Table, l.At))
		case !hours.Valid || math.IsInf(hours.Float64, 0) || math.IsNaN(hours.Float64):
			skip("time", node.String, shown, fmt.Sprintf("%s.%s is %s %s, not a time on %s", l.Table, l.At, kind, report.Printable(shown), clockWords(l.AtClock)))
		case hours.Float64 > in.End:
			skip("future", node.String, shown, fmt.Sprintf("%s.%s %s is after now", l.Table, l.At, report.Printable(shown)))
		default:
			i, ok := index[node.String]
			if !ok {
				skip("unknown", node.String, shown, fmt.Sprintf("%s.%s %s is no node's key", l.Table, l.Node, report.Printable(node.String)))
				continue
			}
			in.Reads = append(in.Reads, Read{Node: i, At: hours.Float64})
		}
	}
	return rows.Err()
}

func clockWords(clock string) string {
	switch clock {
	case mapping.ClockActiveHours:
		return "the active-hours clock (a number of hours)"
	case mapping.ClockUnixSeconds:
		return "the wall clock (unix seconds)"
	case mapping.ClockISO8601:
		return "the wall clock (ISO-8601 text)"
	}
	return "the wall clock (unix seconds or ISO-8601 text)"
}

// HalfLifeText is a half-life in hours as a mapping's [tiers] writes it:
// whole days as "3d" from two days on, else hours ("36h", "1.5h").
func HalfLifeText(hours float64) string {
	if days := hours / 24; hours >= 48 && days == math.Trunc(days) {
		return fmt.Sprintf("%gd", days)
	}
	return fmt.Sprintf("%gh", hours)
}
