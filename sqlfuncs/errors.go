package sqlfuncs

import (
	"fmt"
	"math"
)

// ArgError is a rejected argument. Its message follows the SQL convention
// "memdecay: <function>: <argument> <what is wrong>".
type ArgError struct {
	Func    string
	Arg     string
	Problem string
}

func (e *ArgError) Error() string {
	return fmt.Sprintf("memdecay: %s: %s %s", e.Func, e.Arg, e.Problem)
}

func argErr(fn, arg, format string, a ...any) error {
	return &ArgError{Func: fn, Arg: arg, Problem: fmt.Sprintf(format, a...)}
}

// finite rejects NaN and ±Inf.
func finite(fn, arg string, v float64) error {
	if math.IsNaN(v) {
		return argErr(fn, arg, "is not a number")
	}
	if math.IsInf(v, 0) {
		return argErr(fn, arg, "must be finite (got %v)", v)
	}
	return nil
}

// nonNegative rejects non-finite and negative values: weights, rates,
// half-lives and counts can never be below zero.
func nonNegative(fn, arg string, v float64) error {
	if err := finite(fn, arg, v); err != nil {
		return err
	}
	if v < 0 {
		return argErr(fn, arg, "must not be negative (got %g)", v)
	}
	return nil
}

// positive rejects non-finite, negative and zero values (half-lives, scales).
func positive(fn, arg string, v float64) error {
	if err := nonNegative(fn, arg, v); err != nil {
		return err
	}
	if v == 0 {
		return argErr(fn, arg, "must be greater than zero")
	}
	return nil
}

// elapsedOf validates an elapsed time and clamps it at zero: a clock that
// runs behind an anchor never amplifies a weight.
func elapsedOf(fn string, v float64) (float64, error) {
	if err := finite(fn, "elapsed", v); err != nil {
		return 0, err
	}
	return math.Max(0, v), nil
}
