package shim_test

import (
	"math"

	"github.com/memdecay/memdecay/internal/spec"
	"github.com/memdecay/memdecay/sqlfuncs"
)

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

// tidelineWant is the fact score formula of docs/facts.md, written out here
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
	// an app's categories: after the tags, before the reference rules.
	{`decay_tier(NULL, 'chat', '{"chat":"ephemeral","goal":"durable"}')`, "ephemeral"},
	{`decay_tier('self/goal', 'chat', '{"chat":"ephemeral"}')`, "durable"},
	{`decay_tier(NULL, 'mind', '{"chat":"ephemeral"}')`, "durable"},
	{`(SELECT decay_tier(json_group_array(t), 'fact') FROM (SELECT 'self/constitutional' AS t UNION ALL SELECT NULL))`, "permanent"},

	// tier_lambda: rate per active hour.
	{`tier_lambda('permanent')`, 0.00001},
	{`tier_lambda('durable')`, 0.001},
	{`tier_lambda('standard')`, 0.010},
	{`tier_lambda('ephemeral')`, 0.050},
	{`tier_lambda(NULL)`, nil},
	// with declared half-lives: ln 2 / hours (durations as "30d", "2w").
	{`tier_lambda('standard', '{"standard":"30d"}')`, 0.6931471805599453 / 720},
	{`tier_lambda('ephemeral', '{"ephemeral":"1w","standard":12}')`, 0.6931471805599453 / 168},
	{`tier_lambda('durable', '{"standard":"30d"}')`, 0.001},
	{`tier_lambda('standard', NULL)`, nil},

	// lambda_edge: min(λa, λb) × 0.5, halved again once established.
	{`lambda_edge('standard', 'durable')`, 0.0005},
	{`lambda_edge('ephemeral', 'standard')`, 0.005},
	{`lambda_edge('permanent', 'ephemeral')`, 0.000005},
	{`lambda_edge('standard', 'standard', 9)`, 0.005},
	{`lambda_edge('standard', 'standard', 10)`, 0.0025},
	{`lambda_edge('standard', 'durable', 0, 10, '{"durable":"10h","standard":"100h"}')`, 0.6931471805599453 / 100 * 0.5},
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

// segmentSpec is the segment defaults table of docs/facts.md, written out
// in internal/spec.
var segmentSpec = spec.Segments

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
	{`multi_linear_weight('[{', 1)`, "multi_linear_weight", "tiers_json is not valid JSON: it ends before the value is complete"},
	{`multi_linear_weight('{"weight":1}', 1)`, "multi_linear_weight", "tiers_json must be a JSON array of tiers"},
	{`multi_linear_weight('[{}]', 7)`, "multi_linear_weight", "tiers_json tier 0 has no weight"},
	{`multi_linear_weight('[null]', 7)`, "multi_linear_weight", "tiers_json tier 0 must be an object with weight, hold and rate (got null)"},
	{`multi_linear_weight('[{"weight":1,"rate":0.1,"rate":0}]', 7)`, "multi_linear_weight", `tiers_json has the key "rate" twice (in [0])`},
	{`multi_linear_weight('[{"weight":"1"}]', 7)`, "multi_linear_weight", `tiers_json tier 0 weight must be a number (got text "1")`},
	{`multi_linear_weight('[]', 1)`, "multi_linear_weight", "tiers_json has no tiers"},
	{`multi_linear_weight('[{"weight":-1}]', 1)`, "multi_linear_weight", "tiers_json tier 0 weight must not be negative"},
	{`multi_linear_weight('[{"weight":1,"speed":2}]', 1)`, "multi_linear_weight", `tiers_json tier 0 key "speed" is unknown (want weight, hold, rate)`},
	{`multi_linear_weight(x'5b5d', 1)`, "multi_linear_weight", "tiers_json is a blob"},
	{`multi_linear_weight(5, 1)`, "multi_linear_weight", "tiers_json must be text"},
	{`multi_linear_weight('[{"weight":1}]', 'soon')`, "multi_linear_weight", `elapsed is not a number: "soon"`},
	{`multi_linear_weight('[{"weight":1e308},{"weight":1e308}]', 0)`, "multi_linear_weight", "tiers_json sums to more than a float can hold"},
	{`power_law_weight(1, -1, 1)`, "power_law_weight", "alpha must not be negative"},
	{`power_law_weight(1, 1, 1, 0)`, "power_law_weight", "scale must be greater than zero"},
	{`curve_weight('{"model":"nope"}', 1, 1)`, "curve_weight", `curve_json model "nope" is unknown`},
	{`curve_weight('{"model":"exponential","lambda":1,"extra":1}', 1, 1)`, "curve_weight", `curve_json key "extra" does not apply to model exponential (want lambda)`},
	{`curve_weight('{"model":"exponential","lambda":"x"}', 1, 1)`, "curve_weight", `curve_json lambda must be a number (got text "x")`},
	{`curve_weight('{"model":"power_law","alpha":1,"scale":0}', 1, 1)`, "curve_weight", "curve_json scale must be greater than zero"},
	{`curve_weight('{"model":"half_life","half_life":90,"half_life":9}', 1, 90)`, "curve_weight", `curve_json has the key "half_life" twice`},
	{`curve_weight('{"model":"half_life","half_life":0}', 1, 1)`, "curve_weight", "curve_json half_life must be greater than zero"},
	{`curve_weight('{"model":"exponential","lambda":-1}', 1, 1)`, "curve_weight", "curve_json lambda must not be negative"},
	{`curve_weight('{', 1, 1)`, "curve_weight", "curve_json is not valid JSON"},
	{`curve_weight('{"model":"linear","rate":1} x', 1, 1)`, "curve_weight", "curve_json is not valid JSON: more follows the value"},
	{`curve_weight(x'7b7d', 1, 1)`, "curve_weight", "curve_json is a blob"},
	{`curve_weight('{"model":"linear","rate":1}', -1, 1)`, "curve_weight", "weight must not be negative"},
	{`curve_weight('{"model":"linear","rate":1}', 1, 'later')`, "curve_weight", `elapsed is not a number: "later"`},
	{`curve_horizon('{"model":"linear","rate":1}', 1, -1)`, "curve_horizon", "threshold must not be negative"},
	{`curve_horizon('{"model":"power_law","alpha":1,"scale":-1}', 1)`, "curve_horizon", "curve_json scale must not be negative"},
	{`curve_horizon('{"model":"multi_linear"}', 1)`, "curve_horizon", "curve_json has no tiers"},
	{`decay_horizon(1, 0.1, -0.5)`, "decay_horizon", "threshold must not be negative"},
	{`decay_horizon(1, 'x', 1)`, "decay_horizon", `lambda is not a number: "x"`},
	{`decay_tier('[1]', 'fact')`, "decay_tier", "tags is not a JSON array of strings: item 0 is 1"},
	{`decay_tier('[', 'fact')`, "decay_tier", "tags is not valid JSON: it ends before the value is complete (want a JSON array of strings)"},
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
	{`log_normalise(3, 0)`, "log_normalise", "count must not exceed max_count (3 > 0)"},
	{`composite_score(2, 0, 0, 0)`, "composite_score", "confidence must be between 0 and 1 (got 2)"},
	{`composite_score(0, 0, 0, '-0.5')`, "composite_score", "reinforcement must be between 0 and 1 (got -0.5)"},
	{`edge_strength(-1, 0)`, "edge_strength", "weight must not be negative"},
	{`composite_score(1e999, 0, 0, 0)`, "composite_score", "confidence must be finite"},
	{`tideline_horizon(0.5, 0.1, 0, -1)`, "tideline_horizon", "threshold must not be negative"},
	{`policy_curve('sigmoid', '{}', 'wall')`, "policy_curve", "model"},
	{`policy_curve('half_life', '{"half_life":"ninety"}', 'wall')`, "policy_curve", "params half_life"},
	{`policy_curve('half_life', '{"half_life":90}', 'moon')`, "policy_curve", "clock"},
	{`policy_curve('linear', '{"rate":-1}', 'wall')`, "policy_curve", "params rate must not be negative"},
	{`policy_curve('power_law', '{"alpha":1,"scale":0}', 'wall')`, "policy_curve", "params scale must be greater than zero"},
	{`policy_curve('half_life', '{"half_life":1,"half_life":2}', 'wall')`, "policy_curve", `params has the key "half_life" twice`},
	{`policy_curve('half_life', '[1]', 'wall')`, "policy_curve", "params must be a JSON object"},
}
