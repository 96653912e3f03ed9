package shim

/*
#include "memdecay.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/memdecay/memdecay/sqlfuncs"
)

// numericArgs names the arguments of the functions that take and return
// only numbers; memdecay.c sends them down the short path when every
// argument is a number.
var numericArgs = map[int][]string{
	C.MD_EFFECTIVE_WEIGHT: {"weight", "lambda", "elapsed"},
	C.MD_HALF_LIFE_WEIGHT: {"weight", "half_life", "elapsed"},
	C.MD_LINEAR_WEIGHT:    {"weight", "rate", "elapsed", "hold"},
	C.MD_POWER_LAW_WEIGHT: {"weight", "alpha", "elapsed", "scale"},
	C.MD_DECAY_HORIZON:    {"weight", "lambda", "threshold"},
	C.MD_EDGE_STRENGTH:    {"weight", "reinforcement_count"},
	C.MD_LOG_NORMALISE:    {"count", "max_count"},
	C.MD_COMPOSITE_SCORE:  {"confidence", "recency", "centrality", "reinforcement"},
}

// numericCall evaluates a numeric function; null reports a NULL result.
func numericCall(id int, a []float64) (v float64, null bool, err error) {
	opt := func(i int, def float64) float64 {
		if i < len(a) {
			return a[i]
		}
		return def
	}
	switch id {
	case C.MD_EFFECTIVE_WEIGHT:
		v, err = sqlfuncs.EffectiveWeight(a[0], a[1], a[2])
	case C.MD_HALF_LIFE_WEIGHT:
		v, err = sqlfuncs.HalfLifeWeight(a[0], a[1], a[2])
	case C.MD_LINEAR_WEIGHT:
		v, err = sqlfuncs.LinearWeight(a[0], a[1], a[2], opt(3, 0))
	case C.MD_POWER_LAW_WEIGHT:
		v, err = sqlfuncs.PowerLawWeight(a[0], a[1], a[2], opt(3, 1))
	case C.MD_DECAY_HORIZON:
		var h sqlfuncs.Horizon
		h, err = sqlfuncs.DecayHorizon(a[0], a[1], a[2])
		v, null = h.At, h.Never
	case C.MD_EDGE_STRENGTH:
		v, err = sqlfuncs.EdgeStrength(a[0], a[1])
	case C.MD_LOG_NORMALISE:
		v, err = sqlfuncs.LogNormalise(a[0], a[1])
	case C.MD_COMPOSITE_SCORE:
		v, err = sqlfuncs.CompositeScore(a[0], a[1], a[2], a[3])
	default:
		err = fmt.Errorf("memdecay: function id %d is not numeric", id)
	}
	return v, null, err
}

//export memdecayNumeric
func memdecayNumeric(id, argc C.int, argv *C.double, out *C.double, errOut **C.char) (kind C.int) {
	defer func() {
		// A Go panic must never unwind into SQLite's C frames.
		if p := recover(); p != nil {
			*errOut = C.CString(fmt.Sprintf("memdecay: %s: internal error: %v", funcNames[id], p))
			kind = C.MD_RESULT_ERROR
		}
	}()
	args := unsafe.Slice((*float64)(unsafe.Pointer(argv)), int(argc))
	v, null, err := numericCall(int(id), args)
	switch {
	case err != nil:
		*errOut = C.CString(err.Error())
		return C.MD_RESULT_ERROR
	case null:
		return C.MD_RESULT_NULL
	}
	*out = C.double(v)
	return C.MD_RESULT_DOUBLE
}

// numeric decodes every argument as a number (naming the bad one) and
// evaluates the function: the long path, taken when an argument is not a
// number, so the error can say which.
func (c *call) numeric(id int, names []string) (result, error) {
	var a [C.MD_MAX_ARGS]float64
	for i := range c.args {
		x, err := c.num(i, names[i])
		if err != nil {
			return null, err
		}
		a[i] = x
	}
	v, isNull, err := numericCall(id, a[:len(c.args)])
	if err != nil || isNull {
		return null, err
	}
	return number(v), nil
}
