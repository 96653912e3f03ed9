// Package nodeurl reads --db as an rqlite node's address: what memworker
// accepts (Parse), and how messages and logs show it (Redact: never a
// password, whether the URL parses or not).
package nodeurl

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Is reports whether --db names an rqlite node rather than a file.
func Is(db string) bool {
	return strings.HasPrefix(db, "http://") || strings.HasPrefix(db, "https://")
}

// ErrBad: --db names an rqlite node in a way memworker cannot use (it
// does not parse, or carries a path or an option memworker refuses).
// Nothing was sent.
var ErrBad = errors.New("not an rqlite node's address memworker can use")

// encodeHint is how to write a password that does not parse.
const encodeHint = "percent-encode the password's reserved characters (% as %25, / as %2F, # as %23, ? as %3F, @ as %40, space as %20) or set MEMWORKER_RQLITE_PASSWORD"

// options are the URL options memworker hands to its rqlite client,
// each with the values it takes. Others are refused rather than ignored:
// timeout= in particular makes the client send a request that timed out
// again to the next node, which applies a write twice; memworker bounds
// each request itself (worker/internal/memdb/rqlite.go).
var options = map[string]struct {
	valid func(string) bool
	want  string
}{
	"level": {func(v string) bool { return slices.Contains([]string{"none", "weak", "linearizable", "strong"}, v) },
		"none, weak, linearizable or strong"},
	"disableClusterDiscovery": {func(v string) bool { _, err := strconv.ParseBool(v); return err == nil }, "true or false"},
}

// Parse checks --db as an rqlite node's address: http or https, a
// host, no path but /, no fragment, and only the options of
// options. Its errors show the URL as Redact does and never
// url.Parse's own, which quotes the URL whole.
func Parse(raw string) (*url.URL, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("--db %s: %w: %s", Redact(raw), ErrBad, fmt.Sprintf(format, a...))
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil && credentialsIn(raw):
		return nil, bad("it does not parse as a URL; %s", encodeHint)
	case err != nil:
		return nil, bad("it does not parse as a URL (want http://HOST:PORT)")
	case !authorityHolds(raw):
		return nil, bad("an @ after the host: %s", encodeHint)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, bad("want http://HOST:PORT or https://HOST:PORT")
	case u.Host == "" || u.Opaque != "":
		return nil, bad("no host (want http://HOST:PORT)")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return nil, bad("a # fragment (want http://HOST:PORT)")
	case u.Path != "" && u.Path != "/":
		return nil, bad("a node's address has no path (want http://HOST:PORT)")
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, bad("its options do not parse")
	}
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		opt, known := options[name]
		switch {
		case name == "timeout":
			return nil, bad("timeout= is refused: the client would send a request that timed out again to another node, applying a write twice; memworker bounds each request itself")
		case !known:
			return nil, bad("unknown option %q (memworker takes level= and disableClusterDiscovery=)", name)
		}
		for _, v := range q[name] {
			if !opt.valid(v) {
				return nil, bad("%s=%s: want %s", name, v, opt.want)
			}
		}
	}
	return u, nil
}

// Redact is a node's URL as messages and logs show it: with its
// password hidden. A URL that does not parse, or whose @ comes after
// where the host seems to end (a password with an unescaped / ? or #),
// shows nothing of what comes before its last @: whatever that is, it may
// be a password.
func Redact(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		if credentialsIn(raw) {
			return "xxxxx@" + raw[strings.LastIndex(raw, "@")+1:]
		}
		return raw
	}
	u, err := url.Parse(raw)
	if err == nil && authorityHolds(raw) {
		if u.User == nil {
			return raw
		}
		if _, set := u.User.Password(); set {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		return u.String()
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		return scheme + "://xxxxx@" + rest[i+1:]
	}
	return raw
}

// credentialsIn reports whether raw has an @, which may end credentials.
func credentialsIn(raw string) bool { return strings.Contains(raw, "@") }

// authorityHolds reports whether every @ of raw lies in its authority
// (before the first / ? or # after the scheme): one that comes later means
// the URL parses, but not as it was meant.
func authorityHolds(raw string) bool {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return !credentialsIn(raw)
	}
	end := strings.IndexAny(rest, "/?#")
	return end < 0 || !strings.Contains(rest[end:], "@")
}
