package main

import (
	"math"
	"testing"

	"github.com/memdecay/memdecay/ext/internal/sqlcalls"
	"github.com/memdecay/memdecay/ext/shim"
)

// exprCase is an expression and its expected value: float64, string or nil (NULL).
type exprCase struct {
	expr string
	want any
}

const (
	twoTiers    = `[{"weight":0.6,"hold":0.5,"rate":0.3},{"weight":0.4,"hold":2,"rate":0.1}]`
	twoTierJSON = `{"model":"multi_linear","tiers":` + twoTiers + `}`
)

// everyFunction calls each function at each arity, with NULL and
// numeric-text arguments; the values are worked out by hand from the formulas in docs/.
var everyFunction = []exprCase{
	{`memdecay_version()`, "0.1.0"},
	{`decay_tier('["self/value","self/constitutional"]', 'observation')`, "permanent"},
	{`decay_tier('misc, self/goal', NULL)`, "durable"},
	{`decay_tier(NULL, 'mind')`, "durable"},
	{`decay_tier('[]', 'observation')`, "ephemeral"},
	{`decay_tier(NULL, NULL)`, "standard"},
	{`tier_lambda('permanent')`, 0.00001},
	{`tier_lambda('durable')`, 0.001},
	{`tier_lambda('standard')`, 0.01},
	{`tier_lambda('ephemeral')`, 0.05},
	{`tier_lambda(NULL)`, nil},
	{`tier_lambda('standard', '{"standard":"30d"}')`, 0.6931471805599453 / 720},
	{`decay_tier(NULL, 'chat', '{"chat":"ephemeral"}')`, "ephemeral"},
	{`lambda_edge('standard', 'standard', 0, 10, '{"standard":36}')`, 0.6931471805599453 / 36 * 0.5},
	{`lambda_edge('standard', 'durable')`, 0.0005},
	{`lambda_edge('standard', 'standard', 10)`, 0.0025},
	{`lambda_edge('standard', 'standard', '9')`, 0.005},
	{`lambda_edge('standard', 'standard', 3, 3)`, 0.0025},
	{`lambda_edge('standard', 'standard', NULL)`, nil},
	{`effective_weight(0.8, 0.01, 10)`, 0.8 * math.Exp(-0.1)},
	{`effective_weight('0.5', '0.1', '2')`, 0.5 * math.Exp(-0.2)},
	{`effective_weight(1, 0.5, -5)`, 1.0},
	{`effective_weight(1, NULL, 1)`, nil},
	{`half_life_weight(0.8, 30, 60)`, 0.2},
	{`half_life_weight(1, 10, NULL)`, nil},
	{`linear_weight(1, 0.1, 5)`, 0.5},
	{`linear_weight(1, 0.1, 15, 10)`, 0.5},
	{`linear_weight(1, 0.1, 5, 10)`, 1.0},
	{`multi_linear_weight('` + twoTiers + `', 1)`, 0.85},
	{`multi_linear_weight('` + twoTiers + `', '3')`, 0.3},
	{`multi_linear_weight(NULL, 1)`, nil},
	{`power_law_weight(1, 0.5, 3)`, 0.5},
	{`power_law_weight(2, 1, 9, 3)`, 0.5},
	{`curve_weight('{"model":"exponential","lambda":0.1}', 2, 10)`, 2 * math.Exp(-1)},
	{`curve_weight('{"model":"half_life","half_life":90}', 1, 180)`, 0.25},
	{`curve_weight('{"model":"linear","rate":0.25}', 1, 2)`, 0.5},
	{`curve_weight('{"model":"delayed_linear","rate":0.25,"hold":4}', 1, 6)`, 0.5},
	{`curve_weight('` + twoTierJSON + `', 0.5, 1)`, 0.425},
	{`curve_weight('{"model":"power_law","alpha":1,"scale":3}', 2, 9)`, 0.5},
	{`curve_weight(NULL, 1, 1)`, nil},
	{`decay_horizon(1, 0.1, 0.5)`, math.Ln2 / 0.1},
	{`decay_horizon(0.1, 1, 0.5)`, 0.0},
	{`decay_horizon(1, 0, 0.5)`, nil},
	{`curve_horizon('{"model":"linear","rate":0.25}', 1)`, 4.0},
	{`curve_horizon('{"model":"delayed_linear","rate":0.25,"hold":4}', 1, 0.5)`, 6.0},
	{`curve_horizon('` + twoTierJSON + `', 1, 0.5)`, 2.125},
	{`curve_horizon('{"model":"exponential","lambda":0.1}', 1)`, nil},
	{`tideline_score(0.6, 0.03, 10, 0)`, 0.6 * math.Exp(-math.Ln2/18*0.8*1.03*10)},
	{`tideline_score(0.4, 0.08, 30, 2, 'short')`, 0.4 * math.Exp(-math.Ln2/15.75*0.8*1.08*30) * (1 + math.Log(3)*0.1)},
	{`tideline_score(0.85, 0.01, 1000, 0, 'permanent')`, 1.0},
	{`tideline_score(NULL, 0.03, 10, 0)`, nil},
	{`segment_tier('identity')`, "permanent"},
	{`segment_tier('knowledge')`, "long"},
	{`segment_tier('context')`, "short"},
	{`segment_importance('correction')`, 0.8},
	{`segment_decay_rate('project')`, 0.025},
	{`lifecycle_action(0.01, 'long', 0)`, "archive"},
	{`lifecycle_action(0.04, 'short', 0)`, "prune"},
	{`lifecycle_action(0.1, 'short', 0)`, "archive"},
	{`lifecycle_action(0.01, 'short', 1)`, "keep"},
	{`lifecycle_action(NULL, 'short', 0)`, nil},
	// edge_strength = weight + ln(1 + reinforcement_count) × 0.10.
	{`edge_strength(0.5, 9)`, 0.5 + math.Log(10)*0.1},
	{`edge_strength('0.5', '0')`, 0.5},
	{`edge_strength(NULL, 1)`, nil},
	// log_normalise = ln(1 + count) / ln(1 + max_count), 0 when max_count is 0.
	{`log_normalise(1, 3)`, 0.5},
	{`log_normalise(0, 0)`, 0.0},
	{`log_normalise(3, NULL)`, nil},
	// composite_score = (0.30·confidence + 0.05·recency + 0.25·centrality + 0.30·reinforcement) / 0.90.
	{`composite_score(1, 1, 1, 1)`, 1.0},
	{`composite_score(0.5, 0.2, 0.4, '0.6')`, (0.30*0.5 + 0.05*0.2 + 0.25*0.4 + 0.30*0.6) / 0.90},
	{`composite_score(NULL, 1, 1, 1)`, nil},
	// tideline_horizon: the days d at which importance × (1 + ln(1 + access_count) × 0.1) × e^(−λd)
	// reaches threshold, λ = ln2 / (11.25 × (1 + importance)) × 0.8 × (1 + decay_rate).
	{`tideline_horizon(0.4, 0.08, 0, 0.15)`, math.Log(0.4/0.15) / (math.Ln2 / 15.75 * 0.8 * 1.08)},
	{`tideline_horizon(0.6, 0.03, 2, 0.1, 'long')`, math.Log(0.6*(1+math.Log(3)*0.1)/0.1) / (math.Ln2 / 18 * 0.8 * 1.03)},
	{`tideline_horizon(0.4, 0.08, 0, 0.5)`, 0.0},
	{`tideline_horizon(0.85, 0.01, 0, 0.05, 'permanent')`, nil},
	{`tideline_horizon(0.4, NULL, 0, 0.15)`, nil},
	// policy_curve: a relation policy as curve JSON, durations in the clock's unit.
	{`policy_curve('half_life', '{"half_life":"90d"}', 'wall')`, `{"half_life":90,"model":"half_life"}`},
	{`policy_curve('linear', '{"rate":0.01,"hold":"30m"}', 'active_hours')`, `{"hold":0.5,"model":"linear","rate":0.01}`},
	{`policy_curve('delayed_linear', '{"rate":0.25,"hold":"2d"}', 'active_hours')`, `{"hold":48,"model":"delayed_linear","rate":0.25}`},
	{`policy_curve(NULL, '{}', 'wall')`, nil},
}

// errorCase must fail with "memdecay: <fn>: " followed by a message
// containing want.
type errorCase struct {
	expr, fn, want string
}

var someErrors = []errorCase{
	{`effective_weight(x'00', 0.1, 1)`, "effective_weight", "weight is a blob"},
	{`effective_weight(1, 'fast', 1)`, "effective_weight", `lambda is not a number: "fast"`},
	{`effective_weight(-1, 0.1, 1)`, "effective_weight", "weight must not be negative"},
	{`effective_weight(1e999, 0.1, 1)`, "effective_weight", "weight must be finite"},
	{`half_life_weight(1, 0, 1)`, "half_life_weight", "half_life must be greater than zero"},
	{`linear_weight(1, -0.1, 1)`, "linear_weight", "rate must not be negative"},
	{`multi_linear_weight('[{', 1)`, "multi_linear_weight", "tiers_json is not valid JSON"},
	{`multi_linear_weight('[{}]', 7)`, "multi_linear_weight", "tiers_json tier 0 has no weight"},
	{`multi_linear_weight('[null]', 7)`, "multi_linear_weight", "tiers_json tier 0 must be an object with weight, hold and rate (got null)"},
	{`curve_weight('{"model":"power_law","alpha":1,"scale":0}', 1, 1)`, "curve_weight", "curve_json scale must be greater than zero"},
	{`curve_weight('{"model":"half_life","half_life":90,"half_life":9}', 1, 90)`, "curve_weight", `curve_json has the key "half_life" twice`},
	{`curve_weight('{"model":"exponential","lambda":"x"}', 1, 1)`, "curve_weight", `curve_json lambda must be a number (got text "x")`},
	{`log_normalise(3, 0)`, "log_normalise", "count must not exceed max_count (3 > 0)"},
	{`composite_score(2, 0, 0, 0)`, "composite_score", "confidence must be between 0 and 1 (got 2)"},
	{`power_law_weight(1, 1, 1, 0)`, "power_law_weight", "scale must be greater than zero"},
	{`curve_weight('{"model":"nope"}', 1, 1)`, "curve_weight", `curve_json model "nope" is unknown`},
	{`curve_horizon('{"model":"linear","rate":1}', 1, -1)`, "curve_horizon", "threshold must not be negative"},
	{`decay_horizon(1, -0.1, 0.5)`, "decay_horizon", "lambda must not be negative"},
	{`decay_tier('[1]', 'fact')`, "decay_tier", "tags is not a JSON array of strings"},
	{`tier_lambda('medium')`, "tier_lambda", `tier "medium" is not a tier`},
	{`lambda_edge('standard', 7)`, "lambda_edge", "tier_b must be text, not a number"},
	{`tier_lambda('standard', '{"permanent":"9d"}')`, "tier_lambda", "half_lives permanent never fades"},
	{`decay_tier(NULL, 'chat', '{"chat":"short"}')`, "decay_tier", `category_tiers category "chat": text "short" is not a tier`},
	{`tideline_score(0.5, 0.1, 0, 0, 'forever')`, "tideline_score", `tier "forever" is not a fact tier`},
	{`segment_importance('hobby')`, "segment_importance", `segment "hobby" is not a segment`},
	{`lifecycle_action(0.1, 'short', 'yes')`, "lifecycle_action", `confirmed is not a number: "yes"`},
}

// TestEveryFunctionInTable keeps everyFunction, the table the shell and
// Python run, complete: each function of the registry must be called there
// at each of its arities. memdecay_debug, whose answer depends on the
// build, is checked on its own in TestShellEveryFunction and TestPython.
func TestEveryFunctionInTable(t *testing.T) {
	for _, call := range sqlcalls.Missing(exprsOf(everyFunction), shim.Functions(), "memdecay_debug") {
		t.Errorf("everyFunction has no row calling %s (name/number of arguments)", call)
	}
}
