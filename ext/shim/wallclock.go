package shim

/*
#include <sqlite3.h>
#include "memdecay.h"
*/
import "C"

import "github.com/memdecay/memdecay/sqlfuncs"

// unix_seconds(value) and try_unix_seconds(value): a wall-clock value as
// unix seconds (sqlfuncs/wallclock.go has the forms taken). memdecay.c has
// already read numeric text as a number and answered NULL for a NULL.

// wallClock reads the value: a finite number is itself, a text is parsed,
// anything else is an error.
func (c *call) wallClock() (float64, error) {
	a, name := c.args[0], c.fn.Args[0].Name
	switch a.sqltype {
	case C.SQLITE_INTEGER, C.SQLITE_FLOAT:
		return sqlfuncs.WallClockNumber(c.fn.Name, name, float64(a.num))
	case C.SQLITE_TEXT:
		return sqlfuncs.ParseWallClock(c.fn.Name, name, c.str(0))
	case C.SQLITE_BLOB:
		return 0, c.argError(name, "is a blob, not a time")
	}
	return 0, c.argError(name, "is NULL")
}

// unixSeconds errs on a value that is not a time, as every function does.
func (c *call) unixSeconds() (result, error) {
	return c.number(c.wallClock())
}

// tryUnixSeconds answers NULL for a value that is not a time, so a view or
// a validity test can call it on every row without failing on a bad one.
func (c *call) tryUnixSeconds() (result, error) {
	v, err := c.wallClock()
	if err != nil {
		return null, nil
	}
	return number(v), nil
}
