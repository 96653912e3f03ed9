package sweepsql

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/internal/golden"
	"github.com/memdecay/memdecay/sqlfuncs"
)

var updateDerived = flag.Bool("update-derived", false, "record the derived rules' digest in testdata/derived_rules.golden")

// derivedDigest hashes what the derived state is computed with: the
// expanded DerivedStatements and the formulas' numbers on a grid of
// inputs (their bits, so a change in the last place shows).
func derivedDigest(t *testing.T) string {
	h := sha256.New()
	for _, name := range DerivedStatements {
		if _, ok := Statements[name]; !ok {
			t.Fatalf("DerivedStatements names %q, which no SQL file has", name)
		}
		fmt.Fprintf(h, "-- %s\n%s\n", name, strings.Join(MemTables.Stmts(name), "\n;\n"))
	}
	num := func(name string, v float64, err error) {
		fmt.Fprintf(h, "%s %x %v\n", name, math.Float64bits(v), err)
	}
	for _, w := range []float64{0, 0.05, 0.3, 1, 2.5} {
		for _, lambda := range []float64{0, 1e-5, 0.001, 0.01, 0.05} {
			hz, err := sqlfuncs.DecayHorizon(w, lambda, 0.1)
			fmt.Fprintf(h, "horizon %v %v %+v %v\n", w, lambda, hz, err)
			for _, elapsed := range []float64{0, 1, 40, 1000} {
				v, err := sqlfuncs.EffectiveWeight(w, lambda, elapsed)
				num("effective", v, err)
			}
		}
		for _, count := range []float64{0, 1, 3, 50} {
			v, err := sqlfuncs.EdgeStrength(w, count)
			num("strength", v, err)
		}
	}
	for _, tier := range []string{"constitutional", "durable", "standard", "ephemeral", "nonsense"} {
		v, err := sqlfuncs.TierLambda(tier)
		num("tier_lambda "+tier, v, err)
		for _, count := range []float64{0, 2, 9} {
			v, err := sqlfuncs.LambdaEdge(tier, "standard", count, 3)
			num("lambda_edge "+tier, v, err)
		}
	}
	for _, in := range [][2]string{{`[]`, "knowledge"}, {`["self/constitutional"]`, "mind"}, {`["self/goal"]`, ""},
		{`[]`, "observation"}, {`[]`, "mind"}} {
		tier, err := sqlfuncs.DecayTier(in[0], in[1])
		fmt.Fprintf(h, "decay_tier %q %q %q %v\n", in[0], in[1], tier, err)
	}
	for _, tier := range []string{"core", "working", "archive"} {
		hz, err := sqlfuncs.TidelineHorizon(0.7, 0.02, 3, 0.1, tier)
		fmt.Fprintf(h, "tideline_horizon %s %+v %v\n", tier, hz, err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// A change to what the derived state is computed with is a decision:
// either it changes the numbers stored (bump DerivedRules, so every file
// recomputes them at its next sweep) or it does not (keep it); either way
// the digest is recorded with -update-derived. A file's derived state is
// never trusted across rules that changed unnoticed.
func TestDerivedRulesGuard(t *testing.T) {
	golden.Check(t, filepath.Join("testdata", "derived_rules.golden"),
		fmt.Sprintf("rules %d\ndigest %s\n", DerivedRules, derivedDigest(t)), *updateDerived, false,
		"the statements or formulas the derived state is computed with changed; if the numbers they store change, "+
			"bump DerivedRules (worker/internal/sweepsql/derived.go) so every file's next sweep recomputes its derived state; "+
			"either way record it: go test ./worker/internal/sweepsql -run TestDerivedRulesGuard -update-derived")
}
