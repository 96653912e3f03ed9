package settings

import (
	"context"
	"database/sql"
	"fmt"
	"math"

	"github.com/memdecay/memdecay/sqlfuncs"
	"github.com/memdecay/memdecay/worker/internal/memdb"
)

// Policy is one row of mem_edge_policies: how edges of a relation type decay
// instead of the tiered default.
type Policy struct {
	RelationType string
	Model        string
	Params       sql.NullString
	Clock        string
	Threshold    sql.NullFloat64
	Action       string
	Orphans      string
}

// StagedPolicy is a policy ready for the sweep: its curve with durations in
// the clock's unit, and what "below minimum" means for it.
type StagedPolicy struct {
	Curve     string
	Threshold float64
	ToZero    bool // linear curves with no threshold die at weight ≤ 0
}

// Resolve validates the row; the error names the relation type.
func (p Policy) Resolve(defaultThreshold float64) (StagedPolicy, error) {
	wrap := func(err error) error {
		return fmt.Errorf("mem_edge_policies row %q: %w", p.RelationType, err)
	}
	curve, err := sqlfuncs.PolicyCurve(p.Model, p.Params.String, p.Clock)
	if err != nil {
		return StagedPolicy{}, wrap(err)
	}
	st := StagedPolicy{Curve: curve, Threshold: defaultThreshold}
	switch {
	case p.Threshold.Valid && (math.IsNaN(p.Threshold.Float64) || math.IsInf(p.Threshold.Float64, 0)):
		return StagedPolicy{}, wrap(fmt.Errorf("threshold %v is not a finite number", p.Threshold.Float64))
	case p.Threshold.Valid && p.Threshold.Float64 < 0:
		return StagedPolicy{}, wrap(fmt.Errorf("threshold %v is negative", p.Threshold.Float64))
	case p.Threshold.Valid && p.Threshold.Float64 == 0 && sqlfuncs.DiesAtZero(p.Model):
		// A linear curve dies at weight <= 0, whether its threshold is 0 or NULL.
		st.Threshold, st.ToZero = 0, true
	case p.Threshold.Valid:
		st.Threshold = p.Threshold.Float64
	case sqlfuncs.DiesAtZero(p.Model):
		st.Threshold, st.ToZero = 0, true
	}
	return st, nil
}

// ReadPolicies reads mem_edge_policies in relation order. A threshold that
// is neither NULL nor a number fails, naming the row.
func ReadPolicies(ctx context.Context, q memdb.Querier) ([]Policy, error) {
	rows, err := q.QueryContext(ctx, `SELECT relation_type, model, CAST(params AS TEXT), clock,
		       CASE WHEN typeof(threshold) IN ('integer', 'real') THEN threshold END, typeof(threshold), action, orphans
		FROM main.mem_edge_policies ORDER BY relation_type`)
	if err != nil {
		return nil, fmt.Errorf("reading mem_edge_policies: %w", err)
	}
	defer rows.Close()
	var policies []Policy
	for rows.Next() {
		var p Policy
		var kind string
		if err := rows.Scan(&p.RelationType, &p.Model, &p.Params, &p.Clock, &p.Threshold, &kind, &p.Action, &p.Orphans); err != nil {
			return nil, fmt.Errorf("reading mem_edge_policies: %w", err)
		}
		if kind != "null" && !p.Threshold.Valid {
			return nil, fmt.Errorf("mem_edge_policies row %q: threshold is %s, not a number", p.RelationType, kind)
		}
		policies = append(policies, p)
	}
	return policies, rows.Err()
}

// StagedPolicies reads every policy, in relation order, and resolves each
// as a sweep does (its curve in the clock's unit, its threshold, 0 for a
// curve that dies at 0): for what shows a policy's curve outside a sweep.
func StagedPolicies(ctx context.Context, db *memdb.DB) ([]Policy, []StagedPolicy, error) {
	cfg, err := LoadConfig(ctx, db.SQL)
	if err != nil {
		return nil, nil, err
	}
	policies, err := ReadPolicies(ctx, db.SQL)
	if err != nil {
		return nil, nil, err
	}
	staged := make([]StagedPolicy, len(policies))
	for i, p := range policies {
		if staged[i], err = p.Resolve(cfg.EdgeDecayThreshold); err != nil {
			return nil, nil, err
		}
	}
	return policies, staged, nil
}
