package shim_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	_ "github.com/memdecay/memdecay/ext/shim"
	"github.com/memdecay/memdecay/sqlfuncs"
)

// These tests run the shim linked into this test binary: importing package
// shim registers every memdecay function in each connection mattn opens.

// exprCase is one SQL expression, run as SELECT <expr>, and the value it
// must give: a float64, a string, or nil for NULL.
type exprCase struct {
	expr string
	want any
}

// Curves and tiers shared by several cases.
const (
	twoTiers    = `[{"weight":0.6,"hold":0.5,"rate":0.3},{"weight":0.4,"hold":2,"rate":0.1}]`
	twoTierJSON = `{"model":"multi_linear","tiers":` + twoTiers + `}`
)

// tidelineWant is the fact score formula of SPEC §2, written out here
// independently of sqlfuncs.
func tidelineWant(importance, decayRate, days, count float64) float64 {
	halfLife := 11.25 * (1 + importance)
	lambda := math.Ln2 / halfLife * 0.8 * (1 + decayRate)
	s := importance * math.Exp(-lambda*math.Max(0, days)) * (1 + math.Log(1+count)*0.1)
	return math.Min(1, math.Max(0, s))
}

var valueCases = []exprCase{
	{`memdecay_version()`, sqlfuncs.Version},

	// decay_tier: first match wins; tags as JSON array, comma list or NULL.
	{`decay_tier('["self/value","self/constitutional"]', 'observation')`, "permanent"},
	{`decay_tier('["self/goal"]', 'observation')`, "durable"},
	{`decay_tier('["misc","self/constraint"]', NULL)`, "durable"},
	{`decay_tier('misc, self/value', 'fact')`, "durable"},
	{`decay_tier('self/constitutional', 'mind')`, "permanent"},
	{`decay_tier(NULL, 'mind')`, "durable"},
	{`decay_tier('', 'observation')`, "ephemeral"},
	{`decay_tier('[]', 'observation')`, "ephemeral"},
	{`decay_tier('["misc", null]', 'fact')`, "standard"},
	{`decay_tier(NULL, NULL)`, "standard"},
	{`(SELECT decay_tier(json_group_array(t), 'fact') FROM (SELECT 'self/constitutional' AS t UNION ALL SELECT NULL))`, "permanent"},

	// tier_lambda: rate per active hour.
	{`tier_lambda('permanent')`, 0.00001},
	{`tier_lambda('durable')`, 0.001},
	{`tier_lambda('standard')`, 0.010},
	{`tier_lambda('ephemeral')`, 0.050},
	{`tier_lambda(NULL)`, nil},

	// lambda_edge: min(λa, λb) × 0.5, halved again once established.
	{`lambda_edge('standard', 'durable')`, 0.0005},
	{`lambda_edge('ephemeral', 'standard')`, 0.005},
	{`lambda_edge('permanent', 'ephemeral')`, 0.000005},
	{`lambda_edge('standard', 'standard', 9)`, 0.005},
	{`lambda_edge('standard', 'standard', 10)`, 0.0025},
	{`lambda_edge('standard', 'standard', '10')`, 0.0025},
	{`lambda_edge('standard', 'standard', 2, 3)`, 0.005},
	{`lambda_edge('standard', 'standard', 3, 3)`, 0.0025},
	{`lambda_edge('standard', NULL)`, nil},
	{`lambda_edge('standard', 'standard', NULL)`, nil},
	{`lambda_edge('standard', 'standard', 1, NULL)`, nil},

	// effective_weight: weight × exp(−λ × max(0, elapsed)).
	{`effective_weight(0.8, 0.01, 10)`, 0.8 * math.Exp(-0.1)},
	{`effective_weight(2, 1, 1)`, 2 * math.Exp(-1)},
	{`effective_weight('0.5', '0.1', '2')`, 0.5 * math.Exp(-0.2)},
	{`effective_weight(' 0.5', 0.1, 2)`, 0.5 * math.Exp(-0.2)},
	{`effective_weight(1, 0.5, -5)`, 1.0},
	{`effective_weight(1, 0, 1e6)`, 1.0},
	{`effective_weight(0, 1, 1)`, 0.0},
	{`effective_weight(9223372036854775807, 0, 0)`, 9223372036854775807.0},
	{`effective_weight(NULL, 1, 1)`, nil},
	{`effective_weight(1, NULL, 1)`, nil},
	{`effective_weight(1, 1, NULL)`, nil},

	// half_life_weight: weight × 0.5^(max(0, elapsed) / half_life).
	{`half_life_weight(1, 90, 90)`, 0.5},
	{`half_life_weight(0.8, 30, 60)`, 0.2},
	{`half_life_weight('1', '10', '5')`, math.Pow(0.5, 0.5)},
	{`half_life_weight(1, 10, -10)`, 1.0},
	{`half_life_weight(1, NULL, 1)`, nil},

	// linear_weight: held, then down to zero.
	{`linear_weight(1, 0.1, 5)`, 0.5},
	{`linear_weight(1, 0.1, 20)`, 0.0},
	{`linear_weight(1, 0.1, -3)`, 1.0},
	{`linear_weight(1, 0.1, 5, 10)`, 1.0},
	{`linear_weight(1, 0.1, 10, 10)`, 1.0},
	{`linear_weight(1, 0.1, 15, 10)`, 0.5},
	{`linear_weight(1, 0.1, '15', '10')`, 0.5},
	{`linear_weight(1, 0.1, 5, NULL)`, nil},

	// multi_linear_weight: Σ of linear tiers.
	{`multi_linear_weight('` + twoTiers + `', 0)`, 1.0},
	{`multi_linear_weight('` + twoTiers + `', 1)`, 0.85},
	{`multi_linear_weight('` + twoTiers + `', '1')`, 0.85},
	{`multi_linear_weight('` + twoTiers + `', 3)`, 0.3},
	{`multi_linear_weight('` + twoTiers + `', 100)`, 0.0},
	{`multi_linear_weight(NULL, 1)`, nil},
	{`multi_linear_weight('` + twoTiers + `', NULL)`, nil},

	// power_law_weight: weight × (1 + elapsed/scale)^(−alpha).
	{`power_law_weight(1, 0.5, 3)`, 0.5},
	{`power_law_weight(2, 1, 9, 3)`, 0.5},
	{`power_law_weight(1, 0, 100)`, 1.0},
	{`power_law_weight(1, 2, -1)`, 1.0},
	{`power_law_weight('1', '1', '1', '1')`, 0.5},
	{`power_law_weight(1, 1, 1, NULL)`, nil},

	// curve_weight: every model.
	{`curve_weight('{"model":"exponential","lambda":0.1}', 2, 10)`, 2 * math.Exp(-1)},
	{`curve_weight('{"model":"half_life","half_life":90}', 1, 180)`, 0.25},
	{`curve_weight('{"model":"linear","rate":0.25}', 1, 2)`, 0.5},
	{`curve_weight('{"model":"linear","rate":0.25}', 1, 10)`, 0.0},
	{`curve_weight('{"model":"delayed_linear","rate":0.25,"hold":4}', 1, 3)`, 1.0},
	{`curve_weight('{"model":"delayed_linear","rate":0.25,"hold":4}', 1, 6)`, 0.5},
	{`curve_weight('` + twoTierJSON + `', 0.5, 1)`, 0.425},
	{`curve_weight('{"model":"power_law","alpha":0.5}', 1, 3)`, 0.5},
	{`curve_weight('{"model":"power_law","alpha":1,"scale":3}', 2, 9)`, 0.5},
	{`curve_weight('{"model":"half_life","half_life":10}', '1', '-5')`, 1.0},
	{`curve_weight(NULL, 1, 1)`, nil},
	{`curve_weight('{"model":"half_life","half_life":10}', NULL, 1)`, nil},

	// decay_horizon: 0 when already below, NULL when never.
	{`decay_horizon(1, 0.1, 0.5)`, math.Ln2 / 0.1},
	{`decay_horizon(0.8, 0.01, 0.2)`, math.Log(4) / 0.01},
	{`decay_horizon('1', '0.1', '0.5')`, math.Ln2 / 0.1},
	{`decay_horizon(0.1, 1, 0.5)`, 0.0},
	{`decay_horizon(1, 0, 0.5)`, nil},
	{`decay_horizon(1, 0.1, 0)`, nil},
	{`decay_horizon(NULL, 0.1, 0.5)`, nil},

	// curve_horizon: threshold 0 (the default) is the death time.
	{`curve_horizon('{"model":"linear","rate":0.25}', 1)`, 4.0},
	{`curve_horizon('{"model":"linear","rate":0}', 1)`, nil},
	{`curve_horizon('{"model":"delayed_linear","rate":0.25,"hold":4}', 1)`, 8.0},
	{`curve_horizon('{"model":"delayed_linear","rate":0.25,"hold":4}', 1, 0.5)`, 6.0},
	{`curve_horizon('{"model":"delayed_linear","rate":0.25,"hold":4}', 0.2, 0.5)`, 0.0},
	{`curve_horizon('{"model":"exponential","lambda":0.1}', 1, 0.5)`, math.Ln2 / 0.1},
	{`curve_horizon('{"model":"exponential","lambda":0.1}', 1)`, nil},
	{`curve_horizon('{"model":"half_life","half_life":90}', 1, 0.25)`, 180.0},
	{`curve_horizon('` + twoTierJSON + `', 1)`, 6.0},
	{`curve_horizon('` + twoTierJSON + `', 1, 0.5)`, 2.125},
	{`curve_horizon('{"model":"power_law","alpha":1,"scale":3}', 2, 0.5)`, 9.0},
	{`curve_horizon('{"model":"power_law","alpha":1}', 1)`, nil},
	{`curve_horizon('{"model":"linear","rate":0.25}', '1', '0.5')`, 2.0},
	{`curve_horizon(NULL, 1)`, nil},
	{`curve_horizon('{"model":"linear","rate":0.25}', 1, NULL)`, nil},

	// tideline_score.
	{`tideline_score(0.6, 0.03, 10, 0)`, tidelineWant(0.6, 0.03, 10, 0)},
	{`tideline_score(0.6, 0.03, 10, 5)`, tidelineWant(0.6, 0.03, 10, 5)},
	{`tideline_score(0.4, 0.08, 30, 2, 'short')`, tidelineWant(0.4, 0.08, 30, 2)},
	{`tideline_score(0.7, 0.02, 45, 1, 'long')`, tidelineWant(0.7, 0.02, 45, 1)},
	{`tideline_score(0.6, 0.03, 10, 5, NULL)`, tidelineWant(0.6, 0.03, 10, 5)},
	{`tideline_score('0.6', '0.03', '10', '5')`, tidelineWant(0.6, 0.03, 10, 5)},
	{`tideline_score(0.6, 0.03, -5, 0)`, 0.6},
	{`tideline_score(1, 0, 0, 1e6)`, 1.0},
	{`tideline_score(0.85, 0.01, 1000, 0, 'permanent')`, 1.0},
	{`tideline_score(NULL, 0.03, 10, 5)`, nil},
	{`tideline_score(0.6, 0.03, 10, NULL)`, nil},

	// segment_*: NULL in, NULL out (the defaults table has its own test).
	{`segment_tier(NULL)`, nil},
	{`segment_importance(NULL)`, nil},
	{`segment_decay_rate(NULL)`, nil},

	// lifecycle_action: both sides of each threshold.
	{`lifecycle_action(0.01, 'permanent', 0)`, "keep"},
	{`lifecycle_action(0.01, 'short', 1)`, "keep"},
	{`lifecycle_action(0.01, 'long', 0)`, "archive"},
	{`lifecycle_action(0.05, 'long', 0)`, "keep"},
	{`lifecycle_action(0.049, 'short', 0)`, "prune"},
	{`lifecycle_action(0.05, 'short', 0)`, "archive"},
	{`lifecycle_action(0.149, 'short', 0)`, "archive"},
	{`lifecycle_action(0.15, 'short', 0)`, "keep"},
	{`lifecycle_action('0.01', 'short', '0')`, "prune"},
	{`lifecycle_action(NULL, 'short', 0)`, nil},
	{`lifecycle_action(0.01, NULL, 0)`, nil},

	// edge_strength = weight + ln(1 + count) × 0.10; log_normalise = ln(1+c)/ln(1+max).
	{`edge_strength(0.5, 0)`, 0.5},
	{`edge_strength(0.5, 9)`, 0.5 + 0.1*2.302585092994046},
	{`log_normalise(3, 3)`, 1.0},
	{`log_normalise(1, 3)`, 0.5},
	{`log_normalise(0, 0)`, 0.0},
	// composite_score = (0.30c + 0.05r + 0.25ce + 0.30re) / 0.90.
	{`composite_score(1, 1, 1, 1)`, 1.0},
	{`composite_score(0.5, 0, 0, 0)`, 0.15 / 0.90},
	{`composite_score(NULL, 1, 1, 1)`, nil},
	// tideline_horizon: score(d) = 0.4 e^(−λd) with λ = ln2/15.75 × 0.8 × 1.08 falls below 0.15 at ln(0.4/0.15)/λ.
	{`tideline_horizon(0.4, 0.08, 0, 0.15)`, 25.794954413937302},
	{`tideline_horizon(0.4, 0.08, 0, 0.5)`, 0.0},
	{`tideline_horizon(0.85, 0.01, 0, 0.05, 'permanent')`, nil},
	{`policy_curve('half_life', '{"half_life":"90d"}', 'wall')`, `{"half_life":90,"model":"half_life"}`},
	{`policy_curve('linear', '{"rate":0.01,"hold":"30m"}', 'active_hours')`, `{"hold":0.5,"model":"linear","rate":0.01}`},
	{`policy_curve(NULL, '{}', 'wall')`, nil},
}

// segmentSpec is the segment defaults table of SPEC §2.
var segmentSpec = []struct {
	name, tier            string
	importance, decayRate float64
}{
	{"identity", "permanent", 0.85, 0.01},
	{"correction", "long", 0.80, 0.015},
	{"relationship", "long", 0.75, 0.02},
	{"preference", "long", 0.70, 0.02},
	{"project", "long", 0.65, 0.025},
	{"knowledge", "long", 0.60, 0.03},
	{"context", "short", 0.40, 0.08},
}

// errorCase is an expression that must fail: the message starts with
// "memdecay: <fn>: " and contains want.
type errorCase struct {
	expr, fn, want string
}

var errorCases = []errorCase{
	{`effective_weight(x'00', 0.1, 1)`, "effective_weight", "weight is a blob"},
	{`effective_weight(1, 'fast', 1)`, "effective_weight", `lambda is not a number: "fast"`},
	{`effective_weight(1, 0.1, '')`, "effective_weight", `elapsed is not a number: ""`},
	{`effective_weight(-1, 0.1, 1)`, "effective_weight", "weight must not be negative"},
	{`effective_weight(1, -0.1, 1)`, "effective_weight", "lambda must not be negative"},
	{`effective_weight(1e999, 0.1, 1)`, "effective_weight", "weight must be finite"},
	{`effective_weight('1e999', 0.1, 1)`, "effective_weight", "weight must be finite"},
	{`effective_weight(1, 0.1, -1e999)`, "effective_weight", "elapsed must be finite"},
	{`half_life_weight(1, 0, 1)`, "half_life_weight", "half_life must be greater than zero"},
	{`half_life_weight(1, -5, 1)`, "half_life_weight", "half_life must not be negative"},
	{`half_life_weight(1, 1e999, 1)`, "half_life_weight", "half_life must be finite"},
	{`linear_weight(1, -0.1, 1)`, "linear_weight", "rate must not be negative"},
	{`linear_weight(1, 0.1, 1, -2)`, "linear_weight", "hold must not be negative"},
	{`linear_weight(1, 0.1, 1, x'01')`, "linear_weight", "hold is a blob"},
	{`multi_linear_weight('[{', 1)`, "multi_linear_weight", "tiers_json is not a JSON array of tiers"},
	{`multi_linear_weight('{"weight":1}', 1)`, "multi_linear_weight", "tiers_json is not a JSON array of tiers"},
	{`multi_linear_weight('[]', 1)`, "multi_linear_weight", "tiers_json has no tiers"},
	{`multi_linear_weight('[{"weight":-1}]', 1)`, "multi_linear_weight", "tiers_json tier 0 weight must not be negative"},
	{`multi_linear_weight('[{"weight":1,"speed":2}]', 1)`, "multi_linear_weight", `unknown field "speed"`},
	{`multi_linear_weight(x'5b5d', 1)`, "multi_linear_weight", "tiers_json is a blob"},
	{`multi_linear_weight(5, 1)`, "multi_linear_weight", "tiers_json must be text"},
	{`multi_linear_weight('[{"weight":1}]', 'soon')`, "multi_linear_weight", `elapsed is not a number: "soon"`},
	{`multi_linear_weight('[{"weight":1e308},{"weight":1e308}]', 0)`, "multi_linear_weight", "tiers_json sums to more than a float can hold"},
	{`power_law_weight(1, -1, 1)`, "power_law_weight", "alpha must not be negative"},
	{`power_law_weight(1, 1, 1, 0)`, "power_law_weight", "scale must be greater than zero"},
	{`curve_weight('{"model":"nope"}', 1, 1)`, "curve_weight", `curve_json model "nope" is unknown`},
	{`curve_weight('{"model":"exponential","lambda":1,"extra":1}', 1, 1)`, "curve_weight", `curve_json is not a curve: json: unknown field "extra"`},
	{`curve_weight('{"model":"half_life","half_life":0}', 1, 1)`, "curve_weight", "curve_json half_life must be greater than zero"},
	{`curve_weight('{"model":"exponential","lambda":-1}', 1, 1)`, "curve_weight", "curve_json lambda must not be negative"},
	{`curve_weight('{', 1, 1)`, "curve_weight", "curve_json is not a curve"},
	{`curve_weight('{"model":"linear","rate":1} x', 1, 1)`, "curve_weight", "curve_json is not a curve"},
	{`curve_weight(x'7b7d', 1, 1)`, "curve_weight", "curve_json is a blob"},
	{`curve_weight('{"model":"linear","rate":1}', -1, 1)`, "curve_weight", "weight must not be negative"},
	{`curve_weight('{"model":"linear","rate":1}', 1, 'later')`, "curve_weight", `elapsed is not a number: "later"`},
	{`curve_horizon('{"model":"linear","rate":1}', 1, -1)`, "curve_horizon", "threshold must not be negative"},
	{`curve_horizon('{"model":"power_law","alpha":1,"scale":-1}', 1)`, "curve_horizon", "curve_json scale must not be negative"},
	{`curve_horizon('{"model":"multi_linear"}', 1)`, "curve_horizon", "curve_json has no tiers"},
	{`decay_horizon(1, 0.1, -0.5)`, "decay_horizon", "threshold must not be negative"},
	{`decay_horizon(1, 'x', 1)`, "decay_horizon", `lambda is not a number: "x"`},
	{`decay_tier('[1]', 'fact')`, "decay_tier", "tags is not a JSON array of strings"},
	{`decay_tier('[', 'fact')`, "decay_tier", "tags is not a JSON array of strings"},
	{`decay_tier(42, 'fact')`, "decay_tier", "tags must be text, not a number"},
	{`decay_tier('misc', x'00')`, "decay_tier", "category is a blob"},
	{`tier_lambda('medium')`, "tier_lambda", `tier "medium" is not a tier (want permanent, durable, standard or ephemeral)`},
	{`tier_lambda(1)`, "tier_lambda", "tier must be text, not a number"},
	{`lambda_edge('bogus', 'standard')`, "lambda_edge", `tier_a "bogus" is not a tier`},
	{`lambda_edge('standard', 'bogus')`, "lambda_edge", `tier_b "bogus" is not a tier`},
	{`lambda_edge('standard', 'standard', -1)`, "lambda_edge", "reinforcement_count must not be negative"},
	{`lambda_edge('standard', 'standard', 1, 'x')`, "lambda_edge", "established_threshold is not a number"},
	{`tideline_score(1.5, 0, 0, 0)`, "tideline_score", "importance must be between 0 and 1"},
	{`tideline_score(0.5, -0.1, 0, 0)`, "tideline_score", "decay_rate must not be negative"},
	{`tideline_score(0.5, 0.1, 0, -1)`, "tideline_score", "access_count must not be negative"},
	{`tideline_score(0.5, 0.1, 1e999, 0)`, "tideline_score", "days_since_access must be finite"},
	{`tideline_score(0.5, 0.1, 0, 0, 'forever')`, "tideline_score", `tier "forever" is not a fact tier`},
	{`tideline_score(0.5, 0.1, 0, 0, 3)`, "tideline_score", "tier must be text"},
	{`segment_tier('hobby')`, "segment_tier", `segment "hobby" is not a segment`},
	{`segment_importance('hobby')`, "segment_importance", `segment "hobby" is not a segment`},
	{`segment_decay_rate(3)`, "segment_decay_rate", "segment must be text, not a number"},
	{`segment_tier(x'00')`, "segment_tier", "segment is a blob"},
	{`lifecycle_action(0.1, 'medium', 0)`, "lifecycle_action", `tier "medium" is not a fact tier`},
	{`lifecycle_action(0.1, '', 0)`, "lifecycle_action", "tier is required"},
	{`lifecycle_action('low', 'short', 0)`, "lifecycle_action", `score is not a number: "low"`},
	{`lifecycle_action(0.1, 'short', 'yes')`, "lifecycle_action", `confirmed is not a number: "yes"`},
	{`log_normalise(4, 3)`, "log_normalise", "count must not exceed max_count"},
	{`edge_strength(-1, 0)`, "edge_strength", "weight must not be negative"},
	{`composite_score(1e999, 0, 0, 0)`, "composite_score", "confidence must be finite"},
	{`tideline_horizon(0.5, 0.1, 0, -1)`, "tideline_horizon", "threshold must not be negative"},
	{`policy_curve('sigmoid', '{}', 'wall')`, "policy_curve", "model"},
	{`policy_curve('half_life', '{"half_life":"ninety"}', 'wall')`, "policy_curve", "params half_life"},
	{`policy_curve('half_life', '{"half_life":90}', 'moon')`, "policy_curve", "clock"},
	{`policy_curve('linear', '{"rate":-1}', 'wall')`, "policy_curve", "params rate must not be negative"},
}

// functionArities is every registered function and its arities.
var functionArities = map[string][]int{
	"memdecay_version":    {0},
	"memdecay_debug":      {0},
	"decay_tier":          {2},
	"tier_lambda":         {1},
	"lambda_edge":         {2, 3, 4},
	"effective_weight":    {3},
	"half_life_weight":    {3},
	"linear_weight":       {3, 4},
	"multi_linear_weight": {2},
	"power_law_weight":    {3, 4},
	"curve_weight":        {3},
	"decay_horizon":       {3},
	"curve_horizon":       {2, 3},
	"tideline_score":      {4, 5},
	"segment_tier":        {1},
	"segment_importance":  {1},
	"segment_decay_rate":  {1},
	"lifecycle_action":    {3},
	"edge_strength":       {2},
	"log_normalise":       {2},
	"composite_score":     {4},
	"tideline_horizon":    {4, 5},
	"policy_curve":        {3},
}

// openMemDB opens an in-memory database on a single connection.
func openMemDB(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// selectValue runs SELECT <expr> and returns its single value.
func selectValue(q interface {
	QueryRow(string, ...any) *sql.Row
}, expr string) (any, error) {
	var v any
	err := q.QueryRow("SELECT " + expr).Scan(&v)
	if b, ok := v.([]byte); ok {
		v = string(b)
	}
	return v, err
}

// closeEnough compares floats with a relative tolerance.
func closeEnough(got, want float64) bool {
	if got == want {
		return true
	}
	return math.Abs(got-want) <= 1e-12*math.Max(1, math.Max(math.Abs(got), math.Abs(want)))
}

// sameValue reports whether a SQL result matches an expected value.
func sameValue(got, want any) bool {
	switch w := want.(type) {
	case nil:
		return got == nil
	case float64:
		g, ok := got.(float64)
		return ok && closeEnough(g, w)
	default:
		return got == want
	}
}

func TestValues(t *testing.T) {
	db := openMemDB(t)
	for _, tc := range valueCases {
		got, err := selectValue(db, tc.expr)
		if err != nil {
			t.Errorf("SELECT %s: %v", tc.expr, err)
			continue
		}
		if !sameValue(got, tc.want) {
			t.Errorf("SELECT %s = %#v, want %#v", tc.expr, got, tc.want)
		}
	}
}

// TestEveryFunctionHasValueCases keeps valueCases complete: each function
// is called at each of its arities (the segment functions and
// memdecay_debug have tests of their own).
func TestEveryFunctionHasValueCases(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range valueCases {
		for _, call := range calls(tc.expr) {
			seen[call] = true
		}
	}
	for name, arities := range functionArities {
		if strings.HasPrefix(name, "segment_") || name == "memdecay_debug" {
			continue
		}
		for _, n := range arities {
			if !seen[fmt.Sprintf("%s/%d", name, n)] {
				t.Errorf("no value case calls %s with %d arguments", name, n)
			}
		}
	}
}

// calls lists "name/arity" for each memdecay function called in expr.
func calls(expr string) []string {
	var out []string
	for name := range functionArities {
		for i := 0; ; {
			j := strings.Index(expr[i:], name+"(")
			if j < 0 {
				break
			}
			at := i + j
			i = at + len(name) + 1
			if at > 0 && (expr[at-1] == '_' || expr[at-1] >= 'a' && expr[at-1] <= 'z') {
				continue // a longer name such as multi_linear_weight
			}
			out = append(out, fmt.Sprintf("%s/%d", name, arity(expr[i:])))
		}
	}
	return out
}

// arity counts the arguments of a call whose text starts after its "(":
// the commas at the top level, outside quotes, up to the closing ")".
func arity(s string) int {
	depth, commas, empty := 0, 0, true
	var quote byte
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '"':
			quote = ch
		case ch == '(':
			depth++
		case ch == ')' && depth == 0:
			if empty {
				return 0
			}
			return commas + 1
		case ch == ')':
			depth--
		case ch == ',' && depth == 0:
			commas++
		}
		if ch != ' ' {
			empty = false
		}
	}
	return -1
}

func TestDebug(t *testing.T) {
	db := openMemDB(t)
	got, err := selectValue(db, "memdecay_debug()")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := got.(string)
	for _, part := range []string{"memdecay " + sqlfuncs.Version, "SQLite 3.", "linked"} {
		if !strings.Contains(s, part) {
			t.Errorf("memdecay_debug() = %q, want it to contain %q", s, part)
		}
	}
}

func TestSegmentDefaults(t *testing.T) {
	db := openMemDB(t)
	for _, s := range segmentSpec {
		for _, tc := range []exprCase{
			{fmt.Sprintf("segment_tier('%s')", s.name), s.tier},
			{fmt.Sprintf("segment_importance('%s')", s.name), s.importance},
			{fmt.Sprintf("segment_decay_rate('%s')", s.name), s.decayRate},
		} {
			got, err := selectValue(db, tc.expr)
			if err != nil || !sameValue(got, tc.want) {
				t.Errorf("SELECT %s = %#v, %v; want %#v", tc.expr, got, err, tc.want)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	db := openMemDB(t)
	for _, tc := range errorCases {
		got, err := selectValue(db, tc.expr)
		if err == nil {
			t.Errorf("SELECT %s = %#v, want an error containing %q", tc.expr, got, tc.want)
			continue
		}
		msg := err.Error()
		if prefix := "memdecay: " + tc.fn + ": "; !strings.HasPrefix(msg, prefix) {
			t.Errorf("SELECT %s: error %q does not start with %q", tc.expr, msg, prefix)
		}
		if !strings.Contains(msg, tc.want) {
			t.Errorf("SELECT %s: error %q does not contain %q", tc.expr, msg, tc.want)
		}
	}
}

// TestWrongArgumentCount checks that SQLite itself rejects calls outside
// the registered arities.
func TestWrongArgumentCount(t *testing.T) {
	db := openMemDB(t)
	for name, arities := range functionArities {
		for _, n := range []int{slices.Min(arities) - 1, slices.Max(arities) + 1} {
			if n < 0 {
				continue
			}
			args := strings.TrimSuffix(strings.Repeat("1,", n), ",")
			expr := fmt.Sprintf("%s(%s)", name, args)
			_, err := selectValue(db, expr)
			if err == nil || !strings.Contains(err.Error(), "wrong number of arguments") {
				t.Errorf("SELECT %s: err = %v, want wrong number of arguments", expr, err)
			}
		}
	}
}

// TestFunctionList checks each function's arities and registration flags.
func TestFunctionList(t *testing.T) {
	const (
		deterministic = 0x800
		innocuous     = 0x200000
	)
	db := openMemDB(t)
	for name, arities := range functionArities {
		rows, err := db.Query(`SELECT narg, flags, enc FROM pragma_function_list WHERE name = ? ORDER BY narg`, name)
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for rows.Next() {
			var narg, flags int
			var enc string
			if err := rows.Scan(&narg, &flags, &enc); err != nil {
				t.Fatal(err)
			}
			got = append(got, narg)
			if flags&deterministic == 0 || flags&innocuous == 0 {
				t.Errorf("%s/%d: flags %#x lack SQLITE_DETERMINISTIC|SQLITE_INNOCUOUS", name, narg, flags)
			}
			if enc != "utf8" {
				t.Errorf("%s/%d: enc %q, want utf8", name, narg, enc)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		if !slices.Equal(got, arities) {
			t.Errorf("%s: arities %v, want %v", name, got, arities)
		}
	}
}

// seriesSQL yields the integers 1..n as column value.
const seriesSQL = `WITH RECURSIVE series(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM series WHERE value < %d)`

// TestConstantJSONOverManyRows runs constant curves over many rows (the
// parsed curve is kept for the statement) and checks the sums against
// sqlfuncs.
func TestConstantJSONOverManyRows(t *testing.T) {
	const n = 100_000
	db := openMemDB(t)

	tiers, err := sqlfuncs.ParseTiers("multi_linear_weight", "tiers_json", twoTiers)
	if err != nil {
		t.Fatal(err)
	}
	curve, err := sqlfuncs.ParseCurve("curve_weight", "curve_json", twoTierJSON)
	if err != nil {
		t.Fatal(err)
	}
	var wantTiers, wantCurve float64
	for i := 1; i <= n; i++ {
		e := float64(i) / 20000
		w, err := sqlfuncs.MultiLinearWeight(tiers, e)
		if err != nil {
			t.Fatal(err)
		}
		wantTiers += w
		c, err := curve.Weight(0.5, e)
		if err != nil {
			t.Fatal(err)
		}
		wantCurve += c
	}

	var gotTiers, gotCurve float64
	err = db.QueryRow(fmt.Sprintf(seriesSQL, n)+`
		SELECT sum(multi_linear_weight('`+twoTiers+`', value / 20000.0)),
		       sum(curve_weight('`+twoTierJSON+`', 0.5, value / 20000.0))
		FROM series`).Scan(&gotTiers, &gotCurve)
	if err != nil {
		t.Fatal(err)
	}
	// A sum of n terms: allow n ulps of drift from a different order.
	if math.Abs(gotTiers-wantTiers) > 1e-9*wantTiers || math.Abs(gotCurve-wantCurve) > 1e-9*wantCurve {
		t.Errorf("sums = %v, %v; want %v, %v", gotTiers, gotCurve, wantTiers, wantCurve)
	}
}

// TestPerRowJSON gives each row its own curve: nothing parsed for one row
// may leak into the next.
func TestPerRowJSON(t *testing.T) {
	db := openMemDB(t)
	curves := []struct {
		json string
		want float64 // weight 1 after elapsed 2
	}{
		{`{"model":"linear","rate":0.25}`, 0.5},
		{`{"model":"half_life","half_life":2}`, 0.5},
		{`{"model":"exponential","lambda":0.5}`, math.Exp(-1)},
		{`{"model":"linear","rate":0.25}`, 0.5},
		{`{"model":"power_law","alpha":1}`, 1.0 / 3},
		{`{"model":"delayed_linear","rate":1,"hold":5}`, 1},
		{`{"model":"multi_linear","tiers":[{"weight":0.5,"rate":0.1}]}`, 0.3},
	}
	if _, err := db.Exec(`CREATE TABLE c(id INTEGER PRIMARY KEY, curve TEXT)`); err != nil {
		t.Fatal(err)
	}
	for i, c := range curves {
		if _, err := db.Exec(`INSERT INTO c VALUES (?, ?)`, i, c.json); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := db.Query(`SELECT id, curve_weight(curve, 1, 2), curve_horizon(curve, 1, 0.5) FROM c ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int
		var w float64
		var h sql.NullFloat64
		if err := rows.Scan(&id, &w, &h); err != nil {
			t.Fatal(err)
		}
		if !closeEnough(w, curves[id].want) {
			t.Errorf("row %d %s: curve_weight = %v, want %v", id, curves[id].json, w, curves[id].want)
		}
		c, err := sqlfuncs.ParseCurve("curve_horizon", "curve_json", curves[id].json)
		if err != nil {
			t.Fatal(err)
		}
		hw, err := c.Horizon(1, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		if h.Valid == hw.Never || (h.Valid && !closeEnough(h.Float64, hw.At)) {
			t.Errorf("row %d %s: curve_horizon = %v, want %+v", id, curves[id].json, h, hw)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestSchemaUses puts the functions where only deterministic, innocuous
// functions may go: a view read with trusted_schema off, an expression
// index, a generated column, a CHECK constraint and a trigger.
func TestSchemaUses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "schema.db")
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	mustExec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	mustExec(`CREATE TABLE edge(
		id INTEGER PRIMARY KEY,
		tier TEXT CHECK (tier_lambda(tier) > 0),
		w REAL, l REAL, e REAL,
		now_w REAL GENERATED ALWAYS AS (effective_weight(w, l, e)) VIRTUAL)`)
	mustExec(`CREATE INDEX edge_now ON edge(effective_weight(w, l, e))`)
	mustExec(`CREATE TABLE log(id INTEGER, action TEXT)`)
	mustExec(`CREATE TRIGGER edge_log AFTER INSERT ON edge BEGIN
		INSERT INTO log VALUES (new.id, lifecycle_action(new.now_w, 'short', 0));
	END`)
	mustExec(`CREATE VIEW edge_view AS SELECT id, decay_tier(NULL, tier) AS t, effective_weight(w, l, e) AS ew FROM edge`)
	for i := 0; i < 50; i++ {
		mustExec(`INSERT INTO edge(id, tier, w, l, e) VALUES (?, 'standard', 1, 0.1, ?)`, i, i)
	}
	if _, err := db.Exec(`INSERT INTO edge(id, tier, w, l, e) VALUES (99, 'nope', 1, 0.1, 1)`); err == nil {
		t.Error("CHECK (tier_lambda(tier) > 0) accepted tier 'nope'")
	}
	mustExec(`PRAGMA trusted_schema = OFF`)

	var n int
	var sum float64
	if err := db.QueryRow(`SELECT count(*), sum(ew) FROM edge_view WHERE ew < 0.5`).Scan(&n, &sum); err != nil {
		t.Fatal(err)
	}
	var wantSum float64
	wantN := 0
	for i := 0; i < 50; i++ {
		if w := math.Exp(-0.1 * float64(i)); w < 0.5 {
			wantN++
			wantSum += w
		}
	}
	if n != wantN || !closeEnough(sum, wantSum) {
		t.Errorf("view: count, sum = %d, %v; want %d, %v", n, sum, wantN, wantSum)
	}

	var plan strings.Builder
	rows, err := db.Query(`EXPLAIN QUERY PLAN SELECT id FROM edge WHERE effective_weight(w, l, e) < 0.5`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(detail + "\n")
	}
	rows.Close()
	if !strings.Contains(plan.String(), "INDEX edge_now") {
		t.Errorf("query plan does not use the expression index:\n%s", plan.String())
	}

	var prunes int
	if err := db.QueryRow(`SELECT count(*) FROM log WHERE action = 'prune'`).Scan(&prunes); err != nil {
		t.Fatal(err)
	}
	wantPrunes := 0
	for i := 0; i < 50; i++ {
		if math.Exp(-0.1*float64(i)) < sqlfuncs.PruneScore {
			wantPrunes++
		}
	}
	if prunes != wantPrunes {
		t.Errorf("trigger logged %d prunes, want %d", prunes, wantPrunes)
	}
}

// TestConcurrentConnections runs the functions on several connections at
// once (meant for -race): constant-JSON caching, static texts and errors
// must not cross between statements.
func TestConcurrentConnections(t *testing.T) {
	const workers, rounds = 6, 40
	db, err := sql.Open("sqlite3", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(workers)

	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range workers {
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		wg.Go(func() {
			curve := fmt.Sprintf(`{"model":"half_life","half_life":%d}`, w+1)
			for r := range rounds {
				var sum float64
				var tier, action string
				err := conn.QueryRowContext(ctx, fmt.Sprintf(seriesSQL, 1000)+`
					SELECT sum(curve_weight(?, 1, value % ?)), decay_tier(NULL, 'mind'), lifecycle_action(0.01, 'short', 0)
					FROM series`, curve, w+r+1).Scan(&sum, &tier, &action)
				if err != nil {
					t.Errorf("worker %d round %d: %v", w, r, err)
					return
				}
				want := 0.0
				for v := 1; v <= 1000; v++ {
					want += math.Exp2(-float64(v%(w+r+1)) / float64(w+1))
				}
				if math.Abs(sum-want) > 1e-9*want || tier != "durable" || action != "prune" {
					t.Errorf("worker %d round %d: got %v %q %q, want %v durable prune", w, r, sum, tier, action, want)
				}
				var v any
				err = conn.QueryRowContext(ctx, `SELECT tier_lambda(?)`, fmt.Sprintf("tier%d", w)).Scan(&v)
				if err == nil || !strings.Contains(err.Error(), fmt.Sprintf(`"tier%d" is not a tier`, w)) {
					t.Errorf("worker %d: tier_lambda error = %v", w, err)
				}
			}
		})
	}
	wg.Wait()
}
