// Package shim exposes the sqlfuncs formulas as SQLite functions through a
// small C layer (memdecay.c) that decodes arguments and calls one exported Go
// dispatcher per row. Every function is one row of the registry in
// registry.go, which also generates memdecay.c's table (registry.h).
//
// The package is built two ways. With the build tag memdecay_loadable it is
// the body of the loadable extension memdecay.so (see ext/). Without it, it
// links against mattn/go-sqlite3's SQLite and registers the functions in
// every connection a Go program opens: import it for its side effect,
//
//	import _ "github.com/memdecay/memdecay/ext/shim"
package shim

/*
#include <stdlib.h>
#include <sqlite3.h>
#include "memdecay.h"
*/
import "C"

import (
	"fmt"
	"math"
	"runtime"
	"runtime/cgo"
	"strconv"
	"unsafe"

	"github.com/memdecay/memdecay/sqlfuncs"
)

// call is one invocation: the function and its decoded arguments. Text
// arguments point into SQLite's memory and are valid only during it.
type call struct {
	fn   *Function
	args []C.md_arg
	aux  uintptr
}

// result is what a function returns: a number, a text, NULL, and a parsed
// constant argument to cache for the rest of the statement.
type result struct {
	num    float64
	text   string
	kind   int
	handle cgo.Handle
}

func number(v float64) result { return result{num: v, kind: C.MD_RESULT_DOUBLE} }
func text(s string) result    { return result{text: s, kind: C.MD_RESULT_TEXT} }

var null = result{kind: C.MD_RESULT_NULL}

func horizon(h sqlfuncs.Horizon) result {
	if h.Never {
		return null
	}
	return number(h.At)
}

// lookup returns the function with this id (its index in the registry), or
// nil.
func lookup(id C.int) *Function {
	if id < 0 || int(id) >= len(registry) {
		return nil
	}
	return &registry[id]
}

// eval runs the function. A numeric function comes this way only when some
// argument is not a number (memdecay.c's long path), so the error names it.
func (c *call) eval() (result, error) {
	if c.fn.numeric != nil {
		return c.numeric()
	}
	return c.fn.impl(c)
}

//export memdecayCall
func memdecayCall(id C.int, argc C.int, argv *C.md_arg, aux C.uintptr_t, res *C.md_result) {
	fn := lookup(id)
	if fn == nil {
		setError(res, fmt.Sprintf("memdecay: unknown function id %d", id))
		return
	}
	c := &call{fn: fn, args: unsafe.Slice(argv, int(argc)), aux: uintptr(aux)}
	defer func() {
		// A Go panic must never unwind into SQLite's C frames.
		if p := recover(); p != nil {
			setError(res, fmt.Sprintf("memdecay: %s: internal error: %v", fn.Name, p))
		}
	}()
	r, err := c.eval()
	if err != nil {
		if r.handle != 0 {
			r.handle.Delete()
		}
		setError(res, err.Error())
		return
	}
	res.kind = C.int(r.kind)
	switch r.kind {
	case C.MD_RESULT_DOUBLE:
		if math.IsNaN(r.num) || math.IsInf(r.num, 0) {
			setError(res, fmt.Sprintf("memdecay: %s: result is not finite (%v)", fn.Name, r.num))
			return
		}
		res.num = C.double(r.num)
	case C.MD_RESULT_TEXT:
		if s, ok := staticTexts[r.text]; ok {
			res.kind = C.MD_RESULT_STATIC_TEXT
			res.text = s
		} else {
			res.text = C.CString(r.text)
		}
	}
	res.handle = C.uintptr_t(r.handle)
}

//export memdecayRelease
func memdecayRelease(h C.uintptr_t) {
	cgo.Handle(h).Delete()
}

func setError(res *C.md_result, msg string) {
	res.kind = C.MD_RESULT_ERROR
	res.text = C.CString(msg)
	res.handle = 0
}

// staticTexts holds every fixed text result in C memory, allocated once,
// so returning a tier or an action costs no allocation per row.
var staticTexts = func() map[string]*C.char {
	m := map[string]*C.char{}
	for _, s := range []string{
		sqlfuncs.Version,
		sqlfuncs.TierPermanent, sqlfuncs.TierDurable, sqlfuncs.TierStandard, sqlfuncs.TierEphemeral,
		sqlfuncs.FactLong, sqlfuncs.FactShort,
		sqlfuncs.ActionKeep, sqlfuncs.ActionArchive, sqlfuncs.ActionPrune,
	} {
		m[s] = C.CString(s)
	}
	return m
}()

// debug serves memdecay_debug(): the versions and how this build is linked.
func (c *call) debug() (result, error) {
	return text(fmt.Sprintf("memdecay %s; %s %s/%s; SQLite %s; %s build",
		sqlfuncs.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH,
		C.GoString(C.md_sqlite_version()), buildMode)), nil
}

// number turns a formula's (value, error) into a result.
func (c *call) number(v float64, err error) (result, error) {
	if err != nil {
		return null, err
	}
	return number(v), nil
}

// num reads argument i as a number; C has already turned numeric text into
// a number and answered NULL for a NULL number.
func (c *call) num(i int) (float64, error) {
	a, name := c.args[i], c.fn.Args[i].Name
	switch a.sqltype {
	case C.SQLITE_INTEGER, C.SQLITE_FLOAT:
		return float64(a.num), nil
	case C.SQLITE_TEXT:
		return 0, c.argError(name, "is not a number: %s", quote(c.str(i)))
	case C.SQLITE_BLOB:
		return 0, c.argError(name, "is a blob, not a number")
	}
	return 0, c.argError(name, "is NULL")
}

// optNum reads an optional numeric argument, def when it is absent.
func (c *call) optNum(i int, def float64) (float64, error) {
	if i >= len(c.args) {
		return def, nil
	}
	return c.num(i)
}

// text reads argument i as text; NULL reads as "".
func (c *call) text(i int) (string, error) {
	a, name := c.args[i], c.fn.Args[i].Name
	switch a.sqltype {
	case C.SQLITE_TEXT:
		return c.str(i), nil
	case C.SQLITE_NULL:
		return "", nil
	case C.SQLITE_BLOB:
		return "", c.argError(name, "is a blob, not text")
	}
	return "", c.argError(name, "must be text, not a number (%s)", strconv.FormatFloat(float64(a.num), 'g', -1, 64))
}

func (c *call) str(i int) string {
	a := c.args[i]
	if a.len == 0 {
		return ""
	}
	return unsafe.String((*byte)(unsafe.Pointer(a.text)), int(a.len))
}

func (c *call) argError(arg, format string, a ...any) error {
	return &sqlfuncs.ArgError{Func: c.fn.Name, Arg: arg, Problem: fmt.Sprintf(format, a...)}
}

func quote(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strconv.Quote(s)
}
