package readers

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/memdecay/memdecay/sqlfuncs"
	"github.com/memdecay/memdecay/worker/internal/adapter"
	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/report"
	"github.com/memdecay/memdecay/worker/internal/settings"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
)

// EdgeExplanation says why an edge will or will not decay, and when. Its
// numbers are mem_edges_effective's (one source for explain, decayed and
// the views): the edge's model and clock, its tiered λ or its policy, its
// effective weight, threshold and time left.
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
	Excluded           bool     `json:"excluded"`
	Model              string   `json:"model"`  // tiered, or the policy's model
	Clock              string   `json:"clock"`  // active_hours, or wall (times in days)
	Action             string   `json:"action"` // a policy's: delete or exclude
	Lambda             *float64 `json:"lambda"` // tiered model only
	ClockHours         float64  `json:"clock_hours"`
	WallTime           int64    `json:"wall_time"`
	LastActiveHours    *float64 `json:"last_active_hours"`
	LastObservedAt     *float64 `json:"last_observed_at"` // unix seconds
	Elapsed            *float64 `json:"elapsed"`          // on the edge's clock
	ElapsedHours       *float64 `json:"elapsed_hours"`    // active-hours clock only
	EffectiveWeight    float64  `json:"effective_weight"`
	Threshold          float64  `json:"decay_threshold"`
	TimeLeft           *float64 `json:"time_left"` // on the edge's clock; nil: never
	DecaysAtHours      *float64 `json:"decays_at_hours"`
	DecaysAtWall       *float64 `json:"decays_at_wall"` // unix seconds
	State              string   `json:"state"`          // live or decayed
	Invalid            bool     `json:"invalid"`        // a number is not a number: sweeps skip the row
	Verdict            string   `json:"verdict"`
	Key                string   `json:"key,omitempty"` // through a mapping: the app's key of the link (From and To are its ends)
	// HoursOnWall: through a mapping of wall times, the hour clock is
	// hours since 1970, not active hours.
	HoursOnWall   bool `json:"hours_on_wall,omitempty"`
	staticPrune   bool // the sweep's static prune takes it
	temporalDecay bool // temporal decay applies to it
}

// ExplainEdge explains the edge between blocks a and b (in either order);
// through a mapping, the link of key a (a b for a key of two columns); at
// the wall clock wall when it is given (else as a sweep would take it).
func ExplainEdge(ctx context.Context, db *memdb.DB, a, b string, wall *time.Time) (*EdgeExplanation, error) {
	cfg, err := settings.LoadConfig(ctx, db.SQL)
	if err != nil {
		return nil, err
	}
	var x *EdgeExplanation
	err = adapter.WithEffectiveViewsAt(ctx, db, wall, func(r adapter.ViewsReader) error {
		x, err = explainEdge(ctx, r, cfg, a, b)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("explain: %w", err)
	}
	return x, nil
}

// explainEdge explains the edge of key k1, k2 (memworker's own: its ends,
// in either order) as r's views show it.
func explainEdge(ctx context.Context, r adapter.ViewsReader, cfg settings.Config, k1, k2 string) (*EdgeExplanation, error) {
	name := fmt.Sprintf("between %q and %q", k1, k2)
	if !r.Mapped && k1 > k2 {
		k1, k2 = k2, k1
	}
	if r.Mapped {
		name = fmt.Sprintf("of key %q", k1)
		if k2 != "" {
			name = fmt.Sprintf("of key %q %q", k1, k2)
		}
		if r.SingleKey != (k2 == "") {
			want := map[bool]string{true: "one column: --edge KEY", false: "two columns: --edge A B"}[r.SingleKey]
			return nil, fmt.Errorf("no edge %s: the mapping names a link by its key of %s", name, want)
		}
	}
	clock, err := settings.PickClock(cfg, r.Hours, nil)
	if err != nil {
		return nil, err
	}
	x := &EdgeExplanation{ClockHours: clock.Hours, Threshold: cfg.EdgeDecayThreshold, HoursOnWall: r.WallHours}
	if r.Mapped {
		x.Key = linkKey(k1, k2)
	}
	var last sql.NullFloat64
	var weight, count any
	var problem sql.NullString
	var static, temporal sql.NullBool
	// The sweep's own rules (rules.go) decide whether the row is valid and
	// whether the static prune takes it.
	err = r.Q.QueryRowContext(ctx, r.Tables.Expand(sweepsql.Macros.Replace(`
		SELECT e.@END_A, e.@END_B, e.weight, e.reinforcement_count, coalesce(e.origin, ''), coalesce(e.relation_type, ''), e.pinned,
		       e.last_active_hours,
		       coalesce((SELECT tier FROM `+r.Tiers+` WHERE id = e.@END_A), 'standard'),
		       coalesce((SELECT tier FROM `+r.Tiers+` WHERE id = e.@END_B), 'standard'),
		       EDGE_PROBLEM, CASE WHEN VALID_EDGE THEN STATIC_PRUNE END, CASE WHEN VALID_EDGE THEN TEMPORAL_DECAY END
		FROM @EDGES e WHERE e.@KEY_A = :a AND e.@KEY_B = :b`)),
		sql.Named("a", k1), sql.Named("b", k2), sql.Named("prune_threshold", cfg.EdgePruneThreshold)).
		Scan(&x.From, &x.To, &weight, &count, &x.Origin, &x.RelationType, &x.Pinned, &last, &x.TierFrom, &x.TierTo, &problem, &static, &temporal)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("no edge %s (see: memworker decayed, or the mem_events log)", name)
	}
	if err != nil {
		return nil, err
	}
	w, werr := toFloat(weight)
	c, cerr := toFloat(count)
	invalid := func() (*EdgeExplanation, error) {
		x.Invalid = true
		x.Verdict = fmt.Sprintf("invalid row: weight %s, reinforcement_count %s; sweeps skip it and never delete it",
			report.Printable(fmt.Sprint(weight)), report.Printable(fmt.Sprint(count)))
		return x, nil
	}
	if problem.Valid || werr != nil || cerr != nil {
		return invalid()
	}
	x.staticPrune, x.temporalDecay = static.Bool, temporal.Bool
	x.Weight, x.ReinforcementCount = w, c
	x.Established = c >= cfg.EstablishedEdgeThreshold
	if last.Valid {
		x.LastActiveHours = &last.Float64
	}
	// The numbers, as the view computes them at its clock.
	var lambda, elapsed, elapsedHours, left, observed sql.NullFloat64
	var action sql.NullString
	err = r.Q.QueryRowContext(ctx, r.Tables.Expand(`
		SELECT v.model, v.clock, v.lambda, v.elapsed, v.elapsed_hours, v.effective_weight, v.threshold, v.time_left,
		       v.state, v.excluded, try_unix_seconds(e.last_observed_at), p.action, (SELECT wall FROM `+r.Clock+`)
		FROM `+r.Effective+` v JOIN @EDGES e ON e.@KEY_A = v.@KEY_A AND e.@KEY_B = v.@KEY_B
		LEFT JOIN mem_edge_policies p ON p.relation_type = v.relation_type
		WHERE v.@KEY_A = ? AND v.@KEY_B = ?`), k1, k2).
		Scan(&x.Model, &x.Clock, &lambda, &elapsed, &elapsedHours, &x.EffectiveWeight, &x.Threshold, &left,
			&x.State, &x.Excluded, &observed, &action, &x.WallTime)
	if errors.Is(err, sql.ErrNoRows) { // the view leaves out what sweeps skip
		return invalid()
	}
	if err != nil {
		return nil, err
	}
	x.Lambda, x.Elapsed, x.ElapsedHours, x.TimeLeft, x.LastObservedAt = ptr(lambda), ptr(elapsed), ptr(elapsedHours), ptr(left), ptr(observed)
	x.Action = action.String
	if x.TimeLeft != nil {
		if x.Clock == "wall" {
			at := float64(x.WallTime) + *x.TimeLeft*86400
			x.DecaysAtWall = &at
		} else {
			at := x.ClockHours + *x.TimeLeft
			x.DecaysAtHours = &at
		}
	}
	x.Verdict = x.verdict(cfg)
	return x, nil
}

// ptr is a nullable number as a pointer.
func ptr(v sql.NullFloat64) *float64 {
	if !v.Valid {
		return nil
	}
	return &v.Float64
}

func (x *EdgeExplanation) verdict(cfg settings.Config) string {
	policy := x.Model != "tiered"
	switch {
	case x.Pinned:
		return "pinned: no sweep removes it"
	case !policy && x.staticPrune:
		return fmt.Sprintf("static prune at the next sweep: weight %.3f < %.3f and never reinforced", x.Weight, cfg.EdgePruneThreshold)
	case !policy && !x.temporalDecay && x.Origin == "agent":
		return "agent-asserted: protected from temporal decay (only the static prune or an explicit removal can remove it)"
	case x.Elapsed == nil && policy && x.Clock == "wall":
		return fmt.Sprintf("relation %q follows its %s policy on the wall clock: no observation time (last_observed_at is NULL), so it never decays", x.RelationType, x.Model)
	case x.Elapsed == nil && policy:
		return fmt.Sprintf("relation %q follows its %s policy: no session anchor (last_active_hours is NULL), so it never decays", x.RelationType, x.Model)
	case x.Elapsed == nil:
		return "no session anchor (last_active_hours is NULL): temporal decay skips it"
	}
	under := ""
	if policy {
		under = fmt.Sprintf("relation %q follows its %s policy (%s): ", x.RelationType, x.Model, x.clockName())
	}
	switch {
	case x.State == "decayed" && x.Excluded:
		return under + fmt.Sprintf("excluded: effective weight %.4f below %.4f; mem_edges_live hides it until a re-observation brings it back", x.EffectiveWeight, x.Threshold)
	case x.State == "decayed" && x.Action == "exclude":
		return under + fmt.Sprintf("excluded at the next sweep: effective weight %.4f below %.4f (kept, hidden from mem_edges_live)", x.EffectiveWeight, x.Threshold)
	case x.State == "decayed":
		return under + fmt.Sprintf("decays at the next sweep: effective weight %.4f below %.4f", x.EffectiveWeight, x.Threshold)
	case x.DecaysAtHours != nil && !policy:
		return fmt.Sprintf("survives now (effective %.4f ≥ %.4f); falls below the threshold %s (%s from now) unless co-retrieved or confirmed",
			x.EffectiveWeight, x.Threshold, x.atHour(*x.DecaysAtHours), x.hoursFromNow(*x.DecaysAtHours-x.ClockHours))
	case x.DecaysAtHours != nil:
		return under + fmt.Sprintf("survives now (effective %.4f ≥ %.4f); falls below the threshold %s (%s from now) unless reinforced",
			x.EffectiveWeight, x.Threshold, x.atHour(*x.DecaysAtHours), HumanSpan(*x.TimeLeft, x.Clock))
	case x.DecaysAtWall != nil:
		return under + fmt.Sprintf("survives now (effective %.4f ≥ %.4f); falls below the threshold in %s (%s) unless re-observed",
			x.EffectiveWeight, x.Threshold, HumanSpan(*x.TimeLeft, x.Clock), time.Unix(int64(*x.DecaysAtWall), 0).UTC().Format("2006-01-02 15:04 UTC"))
	}
	return under + "never decays below the threshold"
}

// HourUnit names the hours of the edge's hour clock: active hours, or
// through a mapping of wall times, wall-clock hours (since 1970).
func (x *EdgeExplanation) HourUnit() string {
	if x.HoursOnWall {
		return "wall-clock hours"
	}
	return "active hours"
}

// atHour names an hour of the edge's hour clock: "at 743.8 active hours",
// or through a mapping of wall times its date.
func (x *EdgeExplanation) atHour(h float64) string {
	if x.HoursOnWall {
		return "on " + time.Unix(int64(h*3600), 0).UTC().Format("2006-01-02 15:04 UTC")
	}
	return fmt.Sprintf("at %.1f %s", h, x.HourUnit())
}

// hoursFromNow is a span of the hour clock: "243.8 h" of active hours, as
// a person reads it on the wall.
func (x *EdgeExplanation) hoursFromNow(h float64) string {
	if x.HoursOnWall {
		return HumanSpan(h, sqlfuncs.ClockActiveHours)
	}
	return fmt.Sprintf("%.1f h", h)
}

// clockName is the edge's clock as a sentence names it.
func (x *EdgeExplanation) clockName() string {
	if x.Clock != "wall" {
		return "on " + x.HourUnit()
	}
	return clockName(x.Clock)
}

// clockName is a clock as a sentence names it.
func clockName(clock string) string {
	if clock == "wall" {
		return "on the wall clock"
	}
	return "on active hours"
}

// HumanSpan is a time on a clock as a person reads it: minutes, hours,
// days or years (of 365 days), with three significant digits at most.
// Active hours read as hours of the clock: "19 days" is 460 active hours.
func HumanSpan(v float64, clock string) string {
	hours := v
	if clock == "wall" {
		hours = v * 24
	}
	switch days := hours / 24; {
	case math.IsInf(hours, 0) || math.IsNaN(hours):
		return "never"
	case hours < 1.0/60:
		return fmt.Sprintf("%.2g s", hours*3600)
	case hours < 1:
		return fmt.Sprintf("%.0f min", hours*60)
	case hours < 48:
		return fmt.Sprintf("%.3g h", hours)
	case days < 10:
		return fmt.Sprintf("%.2g days", days)
	case days < 730:
		return fmt.Sprintf("%.0f days", days)
	default:
		return fmt.Sprintf("%.3g years", days/365)
	}
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
