package worker

import (
	"strconv"
	"strings"

	"github.com/memdecay/memdecay/worker/internal/nodeurl"
)

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

// oneLine joins the lines of a message (rqlite's answers may span
// several) with "; ".
func oneLine(s string) string {
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}

// sizeText is a number of bytes as messages show it.
func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
