package worker

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/memdecay/memdecay/schema"
)

// Status is a database's health at a glance.
type Status struct {
	Path             string   `json:"path"`
	SchemaVersion    uint     `json:"schema_version"`
	ActiveHours      float64  `json:"active_hours"`
	LastCurateAt     *float64 `json:"last_curate_at"`
	HoursSinceCurate *float64 `json:"hours_since_curate"`
	// SweepAheadHours is how far the last sweep ran ahead of the clock
	// (sweep --now past it, which leaves the clock where it is); then
	// HoursSinceCurate is 0, never a negative age.
	SweepAheadHours *float64       `json:"last_sweep_ahead_hours,omitempty"`
	CurateDue       bool           `json:"curate_due"`
	Blocks          map[string]int `json:"blocks"`
	Edges           int64          `json:"edges"`
	Facts           map[string]int `json:"facts"`
	Events          int64          `json:"events"`
	EdgesDecayed    int64          `json:"edges_decayed_total"`
	LastSweep       *SweepRecord   `json:"last_sweep"`
}

// SweepRecord is one row of mem_sweeps.
type SweepRecord struct {
	ID         int64   `json:"id"`
	Status     string  `json:"status"`
	ClockHours float64 `json:"clock_hours"`
	StartedAt  int64   `json:"started_at"`
	FinishedAt *int64  `json:"finished_at"`
	Summary    string  `json:"summary"`
}

// GetStatus reads counts, the clock and the last sweep.
func GetStatus(ctx context.Context, db *DB) (*Status, error) {
	cfg, err := LoadConfig(ctx, db.SQL)
	if err != nil {
		return nil, err
	}
	v, _, err := schema.Version(db.SQL)
	if err != nil {
		return nil, err
	}
	st := &Status{Path: db.Path, SchemaVersion: v, ActiveHours: cfg.ActiveHours, LastCurateAt: cfg.LastCurateAt,
		EdgesDecayed: cfg.EdgesDecayedTotal,
		// Every status the schema allows, zero counts included, so a
		// reader of the JSON finds each key.
		Blocks: map[string]int{"inbox": 0, "active": 0, "archived": 0},
		Facts:  map[string]int{"active": 0, "confirmed": 0, "archived": 0}}
	if cfg.LastCurateAt != nil {
		h := cfg.ActiveHours - *cfg.LastCurateAt
		if h < 0 {
			ahead := -h
			st.SweepAheadHours, h = &ahead, 0
		}
		st.HoursSinceCurate = &h
		st.CurateDue = h >= cfg.CurateIntervalHours
	} else {
		st.CurateDue = true
	}
	for table, m := range map[string]map[string]int{"mem_blocks": st.Blocks, "mem_facts": st.Facts} {
		rows, err := db.SQL.QueryContext(ctx, "SELECT status, count(*) FROM "+table+" GROUP BY status")
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var s string
			var n int
			if err := rows.Scan(&s, &n); err != nil {
				rows.Close()
				return nil, err
			}
			m[s] = n
		}
		rows.Close()
	}
	if err := db.SQL.QueryRowContext(ctx, "SELECT (SELECT count(*) FROM mem_edges), (SELECT count(*) FROM mem_events)").
		Scan(&st.Edges, &st.Events); err != nil {
		return nil, err
	}
	var rec SweepRecord
	var finished sql.NullInt64
	err = db.SQL.QueryRowContext(ctx, `SELECT id, status, coalesce(clock_hours, 0), started_at, finished_at,
		coalesce(json_extract(result, '$.summary'), '') FROM mem_sweeps ORDER BY id DESC LIMIT 1`).
		Scan(&rec.ID, &rec.Status, &rec.ClockHours, &rec.StartedAt, &finished, &rec.Summary)
	switch {
	case err == nil:
		if finished.Valid {
			rec.FinishedAt = &finished.Int64
		}
		st.LastSweep = &rec
	case !errors.Is(err, sql.ErrNoRows):
		return nil, err
	}
	return st, nil
}

// AdvanceClock adds hours of activity to the session-aware clock and
// returns the new reading.
func AdvanceClock(ctx context.Context, db *DB, hours float64) (float64, error) {
	if hours < 0 {
		return 0, fmt.Errorf("clock advance: %v is negative; the active-hours clock only moves forward", hours)
	}
	if err := finiteHours(hours); err != nil {
		return 0, fmt.Errorf("clock advance: %w", err)
	}
	var now float64
	err := db.SQL.QueryRowContext(ctx, macros.Replace(`UPDATE mem_config SET value = value + :hours
		WHERE key = 'active_hours' AND value + :hours <= MAX_FINITE RETURNING value`), sql.Named("hours", hours)).Scan(&now)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("clock advance: %v more hours would take the clock past the largest finite number", hours)
	}
	if err != nil {
		return 0, fmt.Errorf("clock advance: %w", err)
	}
	return now, nil
}

// DecayEvent is one removal from mem_events.
type DecayEvent struct {
	ID         int64   `json:"id"`
	SweepID    *int64  `json:"sweep_id"`
	At         int64   `json:"at"`
	ClockHours float64 `json:"clock_hours"`
	Kind       string  `json:"subject_kind"`
	Subject    string  `json:"subject_id"`
	Action     string  `json:"action"`
	Reason     string  `json:"reason"`
}

// MarshalJSON writes an edge's subject_id as the JSON array of its two
// block ids it is stored as, so a reader need not decode a string again.
func (e DecayEvent) MarshalJSON() ([]byte, error) {
	type plain DecayEvent
	from, to, ok := e.EdgeEnds()
	if !ok {
		return json.Marshal(plain(e))
	}
	return json.Marshal(struct {
		plain
		Subject []string `json:"subject_id"`
	}{plain(e), []string{from, to}})
}

// EdgeEnds are the two block ids of an edge event's subject (stored as a
// JSON array); ok is false for any other event.
func (e DecayEvent) EdgeEnds() (from, to string, ok bool) {
	var ids []string
	if e.Kind != "edge" || json.Unmarshal([]byte(e.Subject), &ids) != nil || len(ids) != 2 {
		return "", "", false
	}
	return ids[0], ids[1], true
}

// EdgeOutlook is an edge close to its decay horizon.
type EdgeOutlook struct {
	From            string  `json:"from"`
	To              string  `json:"to"`
	Weight          float64 `json:"weight"`
	EffectiveWeight float64 `json:"effective_weight"`
	HoursLeft       float64 `json:"hours_left"`
}

// Decayed lists recent removals and the edges nearest their horizon.
func Decayed(ctx context.Context, db *DB, limit int) ([]DecayEvent, []EdgeOutlook, error) {
	events := []DecayEvent{}
	rows, err := db.SQL.QueryContext(ctx, `SELECT id, sweep_id, at, coalesce(clock_hours, 0), subject_kind, subject_id, action, coalesce(reason, '')
		FROM mem_events WHERE action IN ('archive', 'prune', 'decay', 'delete', 'exclude') ORDER BY id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, nil, err
	}
	for rows.Next() {
		var e DecayEvent
		var sweep sql.NullInt64
		if err := rows.Scan(&e.ID, &sweep, &e.At, &e.ClockHours, &e.Kind, &e.Subject, &e.Action, &e.Reason); err != nil {
			rows.Close()
			return nil, nil, err
		}
		if sweep.Valid {
			e.SweepID = &sweep.Int64
		}
		events = append(events, e)
	}
	rows.Close()
	soon := []EdgeOutlook{}
	rows, err = db.SQL.QueryContext(ctx, `SELECT from_id, to_id, weight, effective_weight, hours_left
		FROM mem_edges_effective WHERE hours_left IS NOT NULL ORDER BY hours_left, from_id, to_id LIMIT ?`, limit)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var o EdgeOutlook
		if err := rows.Scan(&o.From, &o.To, &o.Weight, &o.EffectiveWeight, &o.HoursLeft); err != nil {
			return nil, nil, err
		}
		soon = append(soon, o)
	}
	return events, soon, rows.Err()
}

// ListInvalid lists every row a sweep now would skip as invalid, by kind
// and id: all of those a sweep's report names InvalidSampleSize of. It is
// the sweep's own rules in a dry run, so the file is only read.
func ListInvalid(ctx context.Context, db *DB) ([]InvalidRow, error) {
	r, err := Sweep(ctx, db, SweepOptions{DryRun: true, allInvalid: true})
	if err != nil {
		return nil, fmt.Errorf("invalid rows: %w", err)
	}
	return r.InvalidRows.Sample, nil
}

// EdgeExplanation says why an edge will or will not decay, and when.
type EdgeExplanation struct {
	From               string   `json:"from"`
	To                 string   `json:"to"`
	TierFrom           string   `json:"tier_from"`
	TierTo             string   `json:"tier_to"`
	Weight             float64  `json:"weight"`
	ReinforcementCount float64  `json:"reinforcement_count"`
	Established        bool     `json:"established"`
	Origin             string   `json:"origin"`
	RelationType       string   `json:"relation_type"`
	Pinned             bool     `json:"pinned"`
	Lambda             float64  `json:"lambda"`
	ClockHours         float64  `json:"clock_hours"`
	LastActiveHours    *float64 `json:"last_active_hours"`
	ElapsedHours       *float64 `json:"elapsed_hours"`
	EffectiveWeight    float64  `json:"effective_weight"`
	Threshold          float64  `json:"decay_threshold"`
	DecaysAtHours      *float64 `json:"decays_at_hours"`
	Invalid            bool     `json:"invalid"` // a number is not a number: sweeps skip the row
	Verdict            string   `json:"verdict"`
	staticPrune        bool     // the sweep's static prune takes it
	temporalDecay      bool     // temporal decay applies to it
}

// ExplainEdge explains the edge between blocks a and b (in either order).
func ExplainEdge(ctx context.Context, db *DB, a, b string) (*EdgeExplanation, error) {
	if a > b {
		a, b = b, a
	}
	cfg, err := LoadConfig(ctx, db.SQL)
	if err != nil {
		return nil, err
	}
	clock, err := pickClock(cfg, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("explain: %w", err)
	}
	x := &EdgeExplanation{From: a, To: b, ClockHours: clock.Hours, Threshold: cfg.EdgeDecayThreshold}
	var last sql.NullFloat64
	var weight, count any
	var policy, problem sql.NullString
	var static, temporal sql.NullBool
	// The sweep's own rules (rules.go) decide whether the row is valid and
	// whether the static prune takes it.
	err = db.SQL.QueryRowContext(ctx, macros.Replace(`
		SELECT e.weight, e.reinforcement_count, e.origin, e.relation_type, e.pinned, e.last_active_hours,
		       coalesce((SELECT tier FROM mem_block_tiers WHERE id = e.from_id), 'standard'),
		       coalesce((SELECT tier FROM mem_block_tiers WHERE id = e.to_id), 'standard'),
		       (SELECT model FROM mem_edge_policies p WHERE p.relation_type = e.relation_type),
		       EDGE_PROBLEM, CASE WHEN VALID_EDGE THEN STATIC_PRUNE END, CASE WHEN VALID_EDGE THEN TEMPORAL_DECAY END
		FROM mem_edges e WHERE e.from_id = :a AND e.to_id = :b`),
		sql.Named("a", a), sql.Named("b", b), sql.Named("prune_threshold", cfg.EdgePruneThreshold)).
		Scan(&weight, &count, &x.Origin, &x.RelationType, &x.Pinned, &last, &x.TierFrom, &x.TierTo, &policy, &problem, &static, &temporal)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("explain: no edge between %q and %q (see: memworker decayed, or the mem_events log)", a, b)
	}
	if err != nil {
		return nil, fmt.Errorf("explain: %w", err)
	}
	w, werr := toFloat(weight)
	c, cerr := toFloat(count)
	if problem.Valid || werr != nil || cerr != nil {
		x.Invalid = true
		x.Verdict = fmt.Sprintf("invalid row: weight %s, reinforcement_count %s; sweeps skip it and never delete it",
			Printable(fmt.Sprint(weight)), Printable(fmt.Sprint(count)))
		return x, nil
	}
	x.staticPrune, x.temporalDecay = static.Bool, temporal.Bool
	x.Weight, x.ReinforcementCount = w, c
	x.Established = c >= cfg.EstablishedEdgeThreshold
	err = db.SQL.QueryRowContext(ctx, `SELECT lambda_edge(?, ?, ?, ?)`, x.TierFrom, x.TierTo, c, cfg.EstablishedEdgeThreshold).Scan(&x.Lambda)
	if err != nil {
		return nil, fmt.Errorf("explain: %w", err)
	}
	x.EffectiveWeight = w
	if last.Valid {
		x.LastActiveHours = &last.Float64
		elapsed := max(0, clock.Hours-last.Float64)
		x.ElapsedHours = &elapsed
		var horizon sql.NullFloat64
		err = db.SQL.QueryRowContext(ctx, `SELECT effective_weight(?, ?, ?), decay_horizon(?, ?, ?)`,
			w, x.Lambda, elapsed, w, x.Lambda, cfg.EdgeDecayThreshold).Scan(&x.EffectiveWeight, &horizon)
		if err != nil {
			return nil, fmt.Errorf("explain: %w", err)
		}
		if horizon.Valid {
			at := max(last.Float64+horizon.Float64, clock.Hours)
			x.DecaysAtHours = &at
		}
	}
	x.Verdict = x.verdict(cfg, policy)
	return x, nil
}

func (x *EdgeExplanation) verdict(cfg Config, policy sql.NullString) string {
	switch {
	case x.Pinned:
		return "pinned: no sweep removes it"
	case policy.Valid:
		return fmt.Sprintf("relation %q follows its %s policy, not the tiered model", x.RelationType, policy.String)
	case x.staticPrune:
		return fmt.Sprintf("static prune at the next sweep: weight %.3f < %.3f and never reinforced", x.Weight, cfg.EdgePruneThreshold)
	case !x.temporalDecay && x.Origin == "agent":
		return "agent-asserted: protected from temporal decay (only the static prune or an explicit removal can remove it)"
	case !x.temporalDecay:
		return "no session anchor (last_active_hours is NULL): temporal decay skips it"
	case x.EffectiveWeight < x.Threshold:
		return fmt.Sprintf("decays at the next sweep: effective weight %.4f < %.4f", x.EffectiveWeight, x.Threshold)
	case x.DecaysAtHours != nil:
		return fmt.Sprintf("survives now (effective %.4f ≥ %.4f); falls below the threshold at %.1f active hours (%.1f h from now) unless co-retrieved or confirmed",
			x.EffectiveWeight, x.Threshold, *x.DecaysAtHours, *x.DecaysAtHours-x.ClockHours)
	}
	return "never decays below the threshold"
}

func toFloat(v any) (float64, error) {
	switch n := v.(type) {
	case int64:
		return float64(n), nil
	case float64:
		return n, nil
	case []byte:
		return strconv.ParseFloat(string(n), 64)
	case string:
		return strconv.ParseFloat(n, 64)
	}
	return 0, fmt.Errorf("not a number: %v", v)
}
