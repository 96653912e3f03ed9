package store

import (
	"errors"
	"fmt"

	"github.com/mattn/go-sqlite3"
	"github.com/memdecay/memdecay/worker/internal/memdb"
)

// ErrDatabaseBusy: another connection held the file's write lock longer
// than the busy timeout (BusyTimeoutMS). Like ErrSweepRunning, it means
// "try again later", and matches ErrSweepRunning too (errors.Is), so every
// caller that waits or retries for one does for the other.
var ErrDatabaseBusy = errors.New("another connection held the database's write lock")

// TryLater makes a sweep's error ErrDatabaseBusy when SQLite gave up
// waiting for the write lock.
func TryLater(err error) error {
	var se sqlite3.Error
	if errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked) {
		return &LaterError{Msg: fmt.Sprintf("%v for more than %d ms (%v); try again later", ErrDatabaseBusy, memdb.BusyTimeoutMS, err),
			Errs: []error{ErrDatabaseBusy, err}}
	}
	return err
}

// LaterError is an error that means "try again later": it matches
// ErrSweepRunning (exit 75, sweep --wait, a fleet's busy count) besides its
// own errors, with its own message.
type LaterError struct {
	Msg  string
	Errs []error
}

func (e *LaterError) Error() string   { return e.Msg }
func (e *LaterError) Unwrap() []error { return append(e.Errs, memdb.ErrSweepRunning) }
