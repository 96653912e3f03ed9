package main

import (
	"net"
	"net/url"
	"strings"
	"testing"
)

// A password in --db is never printed, whatever its characters and
// whether or not the URL parses: not on stderr, not on stdout, not in
// JSON; a URL memworker cannot use is a usage error naming the problem.

func TestCommandsNeverPrintThePassword(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	const head, tail = "Zx9kQ", "Wv3mR"
	for _, c := range []string{"", "%", "/", "#", "?", "@", ":", " ", "+", "=", "!", "$", "&", "'", "(", ")", "*", ",",
		";", "[", "]", "é", "%zz", "%", "/12/"} {
		pw := head + c + tail
		for _, db := range []string{
			"http://mary:" + pw + "@" + addr,
			"http://" + url.UserPassword("mary", pw).String() + "@" + addr + "/?level=strong",
			"http://" + addr + ",http://mary:" + pw + "@" + addr,
		} {
			for _, args := range [][]string{
				{"status", "--db", db},
				{"status", "--json", "--db", db},
				{"sweep", "--json", "--db", db},
				{"migrate", "version", "--db", db},
				{"--db", db, "decayed"},
			} {
				r := mw(t, args...)
				if r.code != exitFailure && r.code != exitUsage {
					t.Errorf("memworker %q: want exit 1 or 2, got %v", args, r)
				}
				out := r.stdout + r.stderr
				for _, s := range []string{pw, head, tail} {
					if strings.Contains(out, s) {
						t.Errorf("memworker %q prints %q:\n%v", args, s, r)
					}
				}
				if strings.Count(strings.TrimSpace(r.stderr), "\n") > 1 || strings.Contains(r.stderr, `\n`) {
					t.Errorf("memworker %q: an error of more than one line:\n%v", args, r)
				}
			}
		}
	}
}

func TestURLsMemworkerCannotUseAreUsageErrors(t *testing.T) {
	for db, want := range map[string]string{
		"http://mary:se/cret@127.0.0.1:1":    "percent-encode",
		"http://127.0.0.1:1/?timeout=30":     "timeout=",
		"http://127.0.0.1:1/?level=eventual": "level=eventual",
	} {
		r := mw(t, "status", "--db", db)
		wantUsage(t, r, want)
		if strings.Contains(r.stderr, "cret") {
			t.Errorf("status --db %s prints the password:\n%v", db, r)
		}
	}
}
