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

// The functions whose arguments and result are all numbers (the numeric
// field of their registry row). memdecay.c sends them the doubles directly
// when every argument is a number.

func effectiveWeight(a []float64) (float64, bool, error) {
	return value(sqlfuncs.EffectiveWeight(a[0], a[1], a[2]))
}

func halfLifeWeight(a []float64) (float64, bool, error) {
	return value(sqlfuncs.HalfLifeWeight(a[0], a[1], a[2]))
}

func linearWeight(a []float64) (float64, bool, error) {
	return value(sqlfuncs.LinearWeight(a[0], a[1], a[2], opt(a, 3, 0)))
}

func powerLawWeight(a []float64) (float64, bool, error) {
	return value(sqlfuncs.PowerLawWeight(a[0], a[1], a[2], opt(a, 3, 1)))
}

func decayHorizon(a []float64) (float64, bool, error) {
	h, err := sqlfuncs.DecayHorizon(a[0], a[1], a[2])
	return h.At, h.Never, err
}

func edgeStrength(a []float64) (float64, bool, error) {
	return value(sqlfuncs.EdgeStrength(a[0], a[1]))
}

func logNormalise(a []float64) (float64, bool, error) {
	return value(sqlfuncs.LogNormalise(a[0], a[1]))
}

func compositeScore(a []float64) (float64, bool, error) {
	return value(sqlfuncs.CompositeScore(a[0], a[1], a[2], a[3]))
}

// value is a formula's (value, error) as a numeric function's result.
func value(v float64, err error) (float64, bool, error) { return v, false, err }

// opt is optional argument i, def when the call leaves it out.
func opt(a []float64, i int, def float64) float64 {
	if i < len(a) {
		return a[i]
	}
	return def
}

//export memdecayNumeric
func memdecayNumeric(id, argc C.int, argv *C.double, out *C.double, errOut **C.char) (kind C.int) {
	fn := lookup(id)
	if fn == nil || fn.numeric == nil {
		*errOut = C.CString(fmt.Sprintf("memdecay: function id %d is not numeric", id))
		return C.MD_RESULT_ERROR
	}
	defer func() {
		// A Go panic must never unwind into SQLite's C frames.
		if p := recover(); p != nil {
			*errOut = C.CString(fmt.Sprintf("memdecay: %s: internal error: %v", fn.Name, p))
			kind = C.MD_RESULT_ERROR
		}
	}()
	args := unsafe.Slice((*float64)(unsafe.Pointer(argv)), int(argc))
	v, null, err := fn.numeric(args)
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
func (c *call) numeric() (result, error) {
	a := make([]float64, len(c.args))
	for i := range c.args {
		x, err := c.num(i)
		if err != nil {
			return null, err
		}
		a[i] = x
	}
	v, isNull, err := c.fn.numeric(a)
	if err != nil || isNull {
		return null, err
	}
	return number(v), nil
}
