package shim

import (
	"slices"
	"strings"
)

// The function registry: the one list of SQL functions. memdecay.c
// registers the table that ./gen writes from it into registry.h (run
// go generate ./ext/shim after editing it), the dispatchers call a function
// by its index here (its id on the C side), and the tests call every
// function it lists. Adding a function is its formula in sqlfuncs, a row
// here and the method (or numeric function) that decodes its arguments.
//
// The generator builds this package as the loadable extension's body,
// which links without any SQLite library.
//go:generate go run -tags memdecay_loadable ./gen

// ArgKind says how the C layer hands an argument to Go.
type ArgKind int

const (
	// ArgNumber is a number: a text that looks like a number is read as
	// one, and a NULL gives a NULL result.
	ArgNumber ArgKind = iota
	// ArgText is a text; a NULL gives a NULL result.
	ArgText
	// ArgTextOrNull is a text where NULL is allowed and reads as "".
	ArgTextOrNull
	// ArgJSON is a JSON text parsed once per statement when it is
	// constant (sqlite3_set_auxdata); a NULL gives a NULL result.
	ArgJSON
	// ArgTime is a wall-clock time: unix seconds as a number (numeric text
	// is read as one, as for ArgNumber) or an ISO-8601 / SQLite datetime
	// text; a NULL gives a NULL result.
	ArgTime
)

// Arg is one argument of a SQL function; Name is what errors call it.
type Arg struct {
	Name string
	Kind ArgKind
}

// NullGivesNull reports whether a NULL in this argument makes the result NULL.
func (a Arg) NullGivesNull() bool { return a.Kind != ArgTextOrNull }

// ReadsNumericText reports whether a text that looks like a number reaches
// the function as that number (memdecay.c converts it).
func (a Arg) ReadsNumericText() bool { return a.Kind == ArgNumber || a.Kind == ArgTime }

// Function is one SQL function the package registers.
type Function struct {
	Name    string
	Args    []Arg    // every argument; those from MinArgs on are optional
	MinArgs int      // how many arguments are required
	Example []string // a valid call's arguments as SQL literals, one per Arg; tests vary them

	// BadGivesNull marks a function that answers NULL, never an error, for
	// any argument it cannot read: the form a view or a validity test
	// calls, where one bad row must not fail the whole query.
	BadGivesNull bool

	// Exactly one of these evaluates the function. numeric takes the
	// decoded numbers of a function whose arguments and result are all
	// numbers, so memdecay.c can call it with no decoding at all.
	impl    func(c *call) (result, error)
	numeric func(a []float64) (v float64, null bool, err error)
}

// Signature is the function as the docs write it: its arguments, the
// optional ones in nested brackets, e.g. "linear_weight(weight, rate,
// elapsed [, hold])". The docs' headings and sqlfuncs' package comment are
// tested against it.
func (f *Function) Signature() string {
	var b strings.Builder
	b.WriteString(f.Name + "(")
	for i, a := range f.Args {
		switch {
		case i >= f.MinArgs:
			b.WriteString(" [, " + a.Name)
		case i > 0:
			b.WriteString(", " + a.Name)
		default:
			b.WriteString(a.Name)
		}
	}
	b.WriteString(strings.Repeat("]", max(0, len(f.Args)-f.MinArgs)) + ")")
	s := b.String()
	return strings.Replace(s, "( [, ", "([", 1) // every argument optional
}

// MaxArgs is the number of arguments at the largest arity.
func (f *Function) MaxArgs() int { return len(f.Args) }

// NumericOnly reports whether every argument and the result are numbers,
// which lets memdecay.c take its short path.
func (f *Function) NumericOnly() bool { return f.numeric != nil }

// AuxArg is the index of the JSON argument kept parsed for the statement,
// or -1.
func (f *Function) AuxArg() int {
	return slices.IndexFunc(f.Args, func(a Arg) bool { return a.Kind == ArgJSON })
}

// Functions lists every SQL function the package registers, in id order.
func Functions() []Function {
	fs := slices.Clone(registry)
	for i := range fs {
		fs[i].Args = slices.Clone(fs[i].Args)
		fs[i].Example = slices.Clone(fs[i].Example)
	}
	return fs
}

func numArg(name string) Arg        { return Arg{name, ArgNumber} }
func textArg(name string) Arg       { return Arg{name, ArgText} }
func textOrNullArg(name string) Arg { return Arg{name, ArgTextOrNull} }
func jsonArg(name string) Arg       { return Arg{name, ArgJSON} }
func timeArg(name string) Arg       { return Arg{name, ArgTime} }

var registry = []Function{
	{Name: "memdecay_version", impl: (*call).version},
	{Name: "memdecay_debug", impl: (*call).debug},
	{
		Name: "decay_tier", MinArgs: 2, impl: (*call).decayTier,
		Args:    []Arg{textOrNullArg("tags"), textOrNullArg("category"), jsonArg("category_tiers")},
		Example: []string{`'["self/value"]'`, `'mind'`, `'{"goal":"durable"}'`},
	},
	{
		Name: "tier_lambda", MinArgs: 1, impl: (*call).tierLambda,
		Args:    []Arg{textArg("tier"), jsonArg("half_lives")},
		Example: []string{`'standard'`, `'{"standard":"30d"}'`},
	},
	{
		Name: "lambda_edge", MinArgs: 2, impl: (*call).lambdaEdge,
		Args:    []Arg{textArg("tier_a"), textArg("tier_b"), numArg("reinforcement_count"), numArg("established_threshold"), jsonArg("half_lives")},
		Example: []string{`'standard'`, `'durable'`, `10`, `10`, `'{"standard":"30d"}'`},
	},
	{
		Name: "effective_weight", MinArgs: 3, numeric: effectiveWeight,
		Args:    []Arg{numArg("weight"), numArg("lambda"), numArg("elapsed")},
		Example: []string{`1`, `0.1`, `5`},
	},
	{
		Name: "half_life_weight", MinArgs: 3, numeric: halfLifeWeight,
		Args:    []Arg{numArg("weight"), numArg("half_life"), numArg("elapsed")},
		Example: []string{`1`, `10`, `5`},
	},
	{
		Name: "linear_weight", MinArgs: 3, numeric: linearWeight,
		Args:    []Arg{numArg("weight"), numArg("rate"), numArg("elapsed"), numArg("hold")},
		Example: []string{`1`, `0.1`, `5`, `2`},
	},
	{
		Name: "multi_linear_weight", MinArgs: 2, impl: (*call).multiLinearWeight,
		Args:    []Arg{jsonArg("tiers_json"), numArg("elapsed")},
		Example: []string{`'[{"weight":0.6,"hold":0.5,"rate":0.3},{"weight":0.4,"hold":2,"rate":0.1}]'`, `1`},
	},
	{
		Name: "power_law_weight", MinArgs: 3, numeric: powerLawWeight,
		Args:    []Arg{numArg("weight"), numArg("alpha"), numArg("elapsed"), numArg("scale")},
		Example: []string{`1`, `0.5`, `3`, `2`},
	},
	{
		Name: "curve_weight", MinArgs: 3, impl: (*call).curveWeight,
		Args:    []Arg{jsonArg("curve_json"), numArg("weight"), numArg("elapsed")},
		Example: []string{`'{"model":"half_life","half_life":10}'`, `1`, `5`},
	},
	{
		Name: "decay_horizon", MinArgs: 3, numeric: decayHorizon,
		Args:    []Arg{numArg("weight"), numArg("lambda"), numArg("threshold")},
		Example: []string{`1`, `0.1`, `0.5`},
	},
	{
		Name: "curve_horizon", MinArgs: 2, impl: (*call).curveHorizon,
		Args:    []Arg{jsonArg("curve_json"), numArg("weight"), numArg("threshold")},
		Example: []string{`'{"model":"multi_linear","tiers":[{"weight":0.6,"hold":0.5,"rate":0.3},{"weight":0.4,"hold":2,"rate":0.1}]}'`, `1`, `0.5`},
	},
	{
		Name: "tideline_score", MinArgs: 4, impl: (*call).tidelineScore,
		Args:    []Arg{numArg("importance"), numArg("decay_rate"), numArg("days_since_access"), numArg("access_count"), textOrNullArg("tier")},
		Example: []string{`0.6`, `0.03`, `10`, `2`, `'long'`},
	},
	{
		Name: "segment_tier", MinArgs: 1, impl: (*call).segmentTier,
		Args:    []Arg{textArg("segment")},
		Example: []string{`'knowledge'`},
	},
	{
		Name: "segment_importance", MinArgs: 1, impl: (*call).segmentImportance,
		Args:    []Arg{textArg("segment")},
		Example: []string{`'knowledge'`},
	},
	{
		Name: "segment_decay_rate", MinArgs: 1, impl: (*call).segmentDecayRate,
		Args:    []Arg{textArg("segment")},
		Example: []string{`'knowledge'`},
	},
	{
		Name: "lifecycle_action", MinArgs: 3, impl: (*call).lifecycleAction,
		Args:    []Arg{numArg("score"), textArg("tier"), numArg("confirmed")},
		Example: []string{`0.1`, `'short'`, `0`},
	},
	{
		Name: "edge_strength", MinArgs: 2, numeric: edgeStrength,
		Args:    []Arg{numArg("weight"), numArg("reinforcement_count")},
		Example: []string{`0.5`, `3`},
	},
	{
		Name: "log_normalise", MinArgs: 2, numeric: logNormalise,
		Args:    []Arg{numArg("count"), numArg("max_count")},
		Example: []string{`3`, `7`},
	},
	{
		Name: "composite_score", MinArgs: 4, numeric: compositeScore,
		Args:    []Arg{numArg("confidence"), numArg("recency"), numArg("centrality"), numArg("reinforcement")},
		Example: []string{`0.5`, `0.5`, `0.5`, `0.5`},
	},
	{
		Name: "policy_curve", MinArgs: 3, impl: (*call).policyCurve,
		Args:    []Arg{textArg("model"), textOrNullArg("params"), textArg("clock")},
		Example: []string{`'half_life'`, `'{"half_life":"90d"}'`, `'wall'`},
	},
	{
		Name: "tideline_horizon", MinArgs: 4, impl: (*call).tidelineHorizon,
		Args:    []Arg{numArg("importance"), numArg("decay_rate"), numArg("access_count"), numArg("threshold"), textOrNullArg("tier")},
		Example: []string{`0.6`, `0.03`, `2`, `0.1`, `'long'`},
	},
	{
		Name: "unix_seconds", MinArgs: 1, impl: (*call).unixSeconds,
		Args:    []Arg{timeArg("value")},
		Example: []string{`'2026-01-05T10:00:00+02:00'`},
	},
	{
		Name: "try_unix_seconds", MinArgs: 1, impl: (*call).tryUnixSeconds, BadGivesNull: true,
		Args:    []Arg{timeArg("value")},
		Example: []string{`'2026-01-05 10:00:00.5'`},
	},
}
