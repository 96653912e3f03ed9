package worker

import "github.com/memdecay/memdecay/worker/internal/nodeurl"

// ErrBadURL: --db names an rqlite node in a way memworker cannot use (it
// does not parse, or carries a path or an option memworker refuses).
// Nothing was sent.
var ErrBadURL = nodeurl.ErrBad

// parseNodeURL and redactURL are nodeurl's, where an address is read and
// shown.
var (
	parseNodeURL = nodeurl.Parse
	redactURL    = nodeurl.Redact
)
