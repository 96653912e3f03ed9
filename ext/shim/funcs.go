package shim

import (
	"math"
	"runtime/cgo"
	"sync"

	"github.com/memdecay/memdecay/sqlfuncs"
)

// The argument decoding of each SQL function that registry.go names as an
// impl; argument names come from its registry row, the maths from sqlfuncs.

func (c *call) version() (result, error) { return text(sqlfuncs.Version), nil }

func (c *call) decayTier() (result, error) {
	tags, err := c.text(0)
	if err != nil {
		return null, err
	}
	category, err := c.text(1)
	if err != nil {
		return null, err
	}
	var r result
	var categories sqlfuncs.CategoryTiers
	if len(c.args) > 2 {
		if categories, err = parsed(c, &r, sqlfuncs.ParseCategoryTiers); err != nil {
			return r, err
		}
	}
	tier, err := sqlfuncs.DecayTierMapped(tags, category, categories)
	r.text, r.kind = tier, text("").kind
	return r, err
}

// halfLives is the optional half_lives argument at i (nil when not given),
// parsed once per statement.
func (c *call) halfLives(r *result, i int) (sqlfuncs.TierRates, error) {
	if len(c.args) <= i {
		return nil, nil
	}
	return parsed(c, r, sqlfuncs.ParseHalfLives)
}

func (c *call) tierLambda() (result, error) {
	tier, err := c.text(0)
	if err != nil {
		return null, err
	}
	var r result
	rates, err := c.halfLives(&r, 1)
	if err != nil {
		return r, err
	}
	l, err := sqlfuncs.TierLambdaMapped(tier, rates)
	r.num, r.kind = l, number(0).kind
	return r, err
}

func (c *call) lambdaEdge() (result, error) {
	a, err := c.text(0)
	if err != nil {
		return null, err
	}
	b, err := c.text(1)
	if err != nil {
		return null, err
	}
	count, err := c.optNum(2, 0)
	if err != nil {
		return null, err
	}
	threshold, err := c.optNum(3, sqlfuncs.EstablishedEdgeThreshold)
	if err != nil {
		return null, err
	}
	var r result
	rates, err := c.halfLives(&r, 4)
	if err != nil {
		return r, err
	}
	l, err := sqlfuncs.LambdaEdgeMapped(a, b, count, threshold, rates)
	r.num, r.kind = l, number(0).kind
	return r, err
}

// parsed returns the JSON argument parsed by parse: from the statement's cache
// when SQLite kept it (a constant argument), else from the process-wide
// cache of recent texts (a column, such as a policy's curve joined to each
// edge), else parsed now. A fresh parse is handed back for the statement.
func parsed[T any](c *call, r *result, parse func(fn, arg, text string) (T, error)) (T, error) {
	if c.aux != 0 {
		return cgo.Handle(c.aux).Value().(T), nil
	}
	var zero T
	i := c.fn.AuxArg()
	s, err := c.text(i)
	if err != nil {
		return zero, err
	}
	key := c.fn.Name + "\x00" + s
	if v, ok := recentParses.get(key); ok {
		return v.(T), nil
	}
	v, err := parse(c.fn.Name, c.fn.Args[i].Name, s)
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
	for i := range v {
		s, err := c.text(i)
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
	e, err := c.num(1)
	if err != nil {
		return r, err
	}
	w, err := sqlfuncs.MultiLinearWeight(tiers, e)
	r.num, r.kind = w, number(0).kind
	return r, err
}

// curveAndWeight decodes the curve and the weight that curve_weight and
// curve_horizon both start with.
func (c *call) curveAndWeight(r *result) (*sqlfuncs.Curve, float64, error) {
	curve, err := parsed(c, r, sqlfuncs.ParseCurve)
	if err != nil {
		return curve, 0, err
	}
	w, err := c.num(1)
	return curve, w, err
}

func (c *call) curveWeight() (result, error) {
	var r result
	curve, w, err := c.curveAndWeight(&r)
	if err != nil {
		return r, err
	}
	e, err := c.num(2)
	if err != nil {
		return r, err
	}
	v, err := curve.Weight(w, e)
	r.num, r.kind = v, number(0).kind
	return r, err
}

func (c *call) curveHorizon() (result, error) {
	var r result
	curve, w, err := c.curveAndWeight(&r)
	if err != nil {
		return r, err
	}
	threshold, err := c.optNum(2, 0)
	if err != nil {
		return r, err
	}
	h, err := curve.Horizon(w, threshold)
	hr := horizon(h)
	hr.handle = r.handle
	return hr, err
}

// tidelineArgs decodes the four numbers and the optional tier shared by
// tideline_score and tideline_horizon.
func (c *call) tidelineArgs() (v [4]float64, tier string, err error) {
	for i := range v {
		if v[i], err = c.num(i); err != nil {
			return v, "", err
		}
	}
	if len(c.args) > 4 {
		tier, err = c.text(4)
	}
	return v, tier, err
}

func (c *call) tidelineScore() (result, error) {
	v, tier, err := c.tidelineArgs()
	if err != nil {
		return null, err
	}
	return c.number(sqlfuncs.TidelineScore(v[0], v[1], v[2], v[3], tier))
}

func (c *call) tidelineHorizon() (result, error) {
	v, tier, err := c.tidelineArgs()
	if err != nil {
		return null, err
	}
	h, err := sqlfuncs.TidelineHorizon(v[0], v[1], v[2], v[3], tier)
	return horizon(h), err
}

func (c *call) segment() (sqlfuncs.Segment, error) {
	name, err := c.text(0)
	if err != nil {
		return sqlfuncs.Segment{}, err
	}
	return sqlfuncs.SegmentDefaults(c.fn.Name, name)
}

func (c *call) segmentTier() (result, error) {
	s, err := c.segment()
	if err != nil {
		return null, err
	}
	return text(s.Tier), nil
}

func (c *call) segmentImportance() (result, error) {
	s, err := c.segment()
	if err != nil {
		return null, err
	}
	return number(s.Importance), nil
}

func (c *call) segmentDecayRate() (result, error) {
	s, err := c.segment()
	if err != nil {
		return null, err
	}
	return number(s.DecayRate), nil
}

func (c *call) lifecycleAction() (result, error) {
	score, err := c.num(0)
	if err != nil {
		return null, err
	}
	tier, err := c.text(1)
	if err != nil {
		return null, err
	}
	confirmed, err := c.num(2)
	if err != nil {
		return null, err
	}
	if math.IsInf(confirmed, 0) {
		return null, c.argError(c.fn.Args[2].Name, "must be finite (got %v)", confirmed)
	}
	action, err := sqlfuncs.LifecycleAction(score, tier, confirmed != 0)
	if err != nil {
		return null, err
	}
	return text(action), nil
}
