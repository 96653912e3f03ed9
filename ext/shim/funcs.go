package shim

import (
	"math"
	"runtime/cgo"
	"sync"

	"github.com/memdecay/memdecay/sqlfuncs"
)

// The argument decoding of each SQL function; the maths is in sqlfuncs.

func (c *call) decayTier() (result, error) {
	tags, err := c.text(0, "tags")
	if err != nil {
		return null, err
	}
	category, err := c.text(1, "category")
	if err != nil {
		return null, err
	}
	tier, err := sqlfuncs.DecayTier(tags, category)
	if err != nil {
		return null, err
	}
	return text(tier), nil
}

func (c *call) lambdaEdge() (result, error) {
	a, err := c.text(0, "tier_a")
	if err != nil {
		return null, err
	}
	b, err := c.text(1, "tier_b")
	if err != nil {
		return null, err
	}
	count, err := c.optNum(2, "reinforcement_count", 0)
	if err != nil {
		return null, err
	}
	threshold, err := c.optNum(3, "established_threshold", sqlfuncs.EstablishedEdgeThreshold)
	if err != nil {
		return null, err
	}
	return c.number(sqlfuncs.LambdaEdge(a, b, count, threshold))
}

// parsed returns argument 0 parsed by parse: from the statement's cache
// when SQLite kept it (a constant argument), else from the process-wide
// cache of recent texts (a column, such as a policy's curve joined to each
// edge), else parsed now. A fresh parse is handed back for the statement.
func parsed[T any](c *call, r *result, parse func(fn, arg, text string) (T, error)) (T, error) {
	if c.aux != 0 {
		return cgo.Handle(c.aux).Value().(T), nil
	}
	var zero T
	arg := "curve_json"
	if c.fn == "multi_linear_weight" {
		arg = "tiers_json"
	}
	s, err := c.text(0, arg)
	if err != nil {
		return zero, err
	}
	key := c.fn + "\x00" + s
	if v, ok := recentParses.get(key); ok {
		return v.(T), nil
	}
	v, err := parse(c.fn, arg, s)
	if err != nil {
		return zero, err
	}
	recentParses.put(key, v)
	r.handle = cgo.NewHandle(v)
	return v, nil
}

// parseCache keeps a bounded set of parsed JSON arguments; parsed values
// are never modified, so sharing them between connections is safe.
type parseCache struct {
	mu sync.RWMutex
	m  map[string]any
}

const parseCacheSize = 256

var recentParses = &parseCache{m: map[string]any{}}

func (p *parseCache) get(key string) (any, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	v, ok := p.m[key]
	return v, ok
}

func (p *parseCache) put(key string, v any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.m) >= parseCacheSize {
		clear(p.m)
	}
	p.m[key] = v
}

func (c *call) policyCurve() (result, error) {
	var v [3]string
	for i, name := range [3]string{"model", "params", "clock"} {
		s, err := c.text(i, name)
		if err != nil {
			return null, err
		}
		v[i] = s
	}
	curve, err := sqlfuncs.PolicyCurve(v[0], v[1], v[2])
	if err != nil {
		return null, err
	}
	return text(curve), nil
}

func (c *call) multiLinearWeight() (result, error) {
	var r result
	tiers, err := parsed(c, &r, sqlfuncs.ParseTiers)
	if err != nil {
		return r, err
	}
	e, err := c.num(1, "elapsed")
	if err != nil {
		return r, err
	}
	w, err := sqlfuncs.MultiLinearWeight(tiers, e)
	r.num, r.kind = w, number(0).kind
	return r, err
}

func (c *call) curve(id int) (result, error) {
	var r result
	curve, err := parsed(c, &r, sqlfuncs.ParseCurve)
	if err != nil {
		return r, err
	}
	w, err := c.num(1, "weight")
	if err != nil {
		return r, err
	}
	if id == funcCurveWeight {
		e, err := c.num(2, "elapsed")
		if err != nil {
			return r, err
		}
		v, err := curve.Weight(w, e)
		r.num, r.kind = v, number(0).kind
		return r, err
	}
	threshold, err := c.optNum(2, "threshold", 0)
	if err != nil {
		return r, err
	}
	h, err := curve.Horizon(w, threshold)
	hr := horizon(h)
	hr.handle = r.handle
	return hr, err
}

// tideline serves tideline_score(importance, decay_rate, days_since_access,
// access_count [, tier]) and tideline_horizon(importance, decay_rate,
// access_count, threshold [, tier]).
func (c *call) tideline(id int) (result, error) {
	names := [4]string{"importance", "decay_rate", "days_since_access", "access_count"}
	if id == funcTidelineHorizon {
		names = [4]string{"importance", "decay_rate", "access_count", "threshold"}
	}
	var v [4]float64
	for i, name := range names {
		x, err := c.num(i, name)
		if err != nil {
			return null, err
		}
		v[i] = x
	}
	tier := ""
	if len(c.args) > 4 {
		var err error
		if tier, err = c.text(4, "tier"); err != nil {
			return null, err
		}
	}
	if id == funcTidelineHorizon {
		h, err := sqlfuncs.TidelineHorizon(v[0], v[1], v[2], v[3], tier)
		return horizon(h), err
	}
	return c.number(sqlfuncs.TidelineScore(v[0], v[1], v[2], v[3], tier))
}

func (c *call) segment(id int) (result, error) {
	name, err := c.text(0, "segment")
	if err != nil {
		return null, err
	}
	s, err := sqlfuncs.SegmentDefaults(c.fn, name)
	if err != nil {
		return null, err
	}
	switch id {
	case funcSegmentTier:
		return text(s.Tier), nil
	case funcSegmentImportance:
		return number(s.Importance), nil
	}
	return number(s.DecayRate), nil
}

func (c *call) lifecycleAction() (result, error) {
	score, err := c.num(0, "score")
	if err != nil {
		return null, err
	}
	tier, err := c.text(1, "tier")
	if err != nil {
		return null, err
	}
	confirmed, err := c.num(2, "confirmed")
	if err != nil {
		return null, err
	}
	if math.IsInf(confirmed, 0) {
		return null, c.argError("confirmed", "must be finite (got %v)", confirmed)
	}
	action, err := sqlfuncs.LifecycleAction(score, tier, confirmed != 0)
	if err != nil {
		return null, err
	}
	return text(action), nil
}
