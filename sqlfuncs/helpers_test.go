package sqlfuncs

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// pruneThreshold is EDGE_PRUNE_THRESHOLD of reference 000 (§3.3 and §9) and
// minimumWeight of reference 004: an edge below it is pruned or excluded.
const pruneThreshold = 0.10

// round3 rounds to the 3 decimals the references print.
func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// near reports whether got is within tol of want, relative to the larger
// magnitude once that exceeds 1 (absolute below 1).
func near(got, want, tol float64) bool {
	if got == want {
		return true
	}
	return math.Abs(got-want) <= tol*max(1, math.Abs(got), math.Abs(want))
}

func wantNear(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if !near(got, want, tol) {
		t.Errorf("%s = %.12g, want %.12g (±%g)", what, got, want, tol)
	}
}

// want3 checks a value as a reference prints it: rounded to 3 decimals.
func want3(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(round3(got)-want) > 1e-9 {
		t.Errorf("%s = %.6f, rounds to %.3f, want %.3f", what, got, round3(got), want)
	}
}

// must(t)(f(...)) fails the test on f's error and returns its number.
func must(t *testing.T) func(float64, error) float64 {
	return func(v float64, err error) float64 {
		t.Helper()
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return v
	}
}

// wantArgErr checks that err is an *ArgError whose message starts with
// prefix, the SQL convention "memdecay: <function>: <argument>".
func wantArgErr(t *testing.T, err error, prefix string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one starting %q", prefix)
	}
	var ae *ArgError
	if !errors.As(err, &ae) {
		t.Fatalf("error %v is %T, want *ArgError", err, err)
	}
	if !strings.HasPrefix(err.Error(), prefix) {
		t.Fatalf("error %q does not start with %q", err, prefix)
	}
}

// usable reports whether a number is an acceptable non-negative argument.
func usable(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return false
		}
	}
	return true
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// slack is the relative rounding allowance of the fuzz invariants.
const slack = 1e-12

// checkDecay asserts the invariants every weight function keeps for one
// start weight and two elapsed times: a finite result, never negative, never
// above the start weight, and non-increasing in elapsed time. w1 is the
// value at the smaller elapsed time, w2 at the larger.
func checkDecay(t *testing.T, start, w1, w2 float64) {
	t.Helper()
	for _, w := range []float64{w1, w2} {
		if !isFinite(w) {
			t.Fatalf("weight %v is not finite (start %v)", w, start)
		}
		if w < 0 {
			t.Fatalf("weight %v is negative", w)
		}
		if w > start*(1+slack) {
			t.Fatalf("weight %v is above the start weight %v", w, start)
		}
	}
	if w2 > w1+slack*start {
		t.Fatalf("weight rose with elapsed time: %v then %v (start %v)", w1, w2, start)
	}
}

// ordered returns a and b smallest first.
func ordered(a, b float64) (float64, float64) {
	if a > b {
		return b, a
	}
	return a, b
}
