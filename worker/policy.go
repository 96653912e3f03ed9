package worker

import (
	"database/sql"
	"fmt"
	"math"

	"github.com/memdecay/memdecay/sqlfuncs"
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
		return fmt.Errorf("mem_edge_policies row %q: %w (nothing was swept)", p.RelationType, err)
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
