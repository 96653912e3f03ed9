package daemon

import (
	"context"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"
)

// A password is never printed, whether its URL parses or not; the options
// that would re-send a write are refused; a node that never answers, or
// answers without end, fails the request within its bounds; every error is
// one line without the client's internal query string.

// secretParts are the text of every test password around its special
// character: neither part may appear in any message.
const secretHead, secretTail = "Zx9kQ", "Wv3mR"

// passwordChars is one password per character class: letters, digits,
// each reserved or sub-delimiter character, non-ASCII, bad escapes.
var passwordChars = []string{"", "7", "%", "/", "#", "?", "@", ":", " ", "+", "=", "!", "$", "&", "'", "(", ")",
	"*", ",", ";", "[", "]", "é", "日本", "%zz", "%4", "%%", "/12/", "@@", "\t", "\\", "\"", "<>", "`", "^", "|", "{}"}

func secretPasswords() []string {
	var out []string
	for _, c := range passwordChars {
		out = append(out, secretHead+c+secretTail)
	}
	// A password that starts with digits and a slash parses as a port and
	// a path: http://user:12/...@host.
	out = append(out, "12/"+secretHead+secretTail, "4001?"+secretHead+"@"+secretTail, "1#"+secretHead+secretTail)
	return out
}

// leaks reports the secret's text found in msg, "" when none is.
func leaks(msg, pw string) string {
	for _, s := range []string{pw, url.QueryEscape(pw), url.PathEscape(pw), secretHead, secretTail} {
		if s != "" && strings.Contains(msg, s) {
			return s
		}
	}
	return ""
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// stopAt collects a log and calls stop once it holds text.
type stopAt struct {
	strings.Builder
	text string
	stop func()
}

func (w *stopAt) Write(p []byte) (int, error) {
	n, err := w.Builder.Write(p)
	if strings.Contains(w.String(), w.text) {
		w.stop()
	}
	return n, err
}

// The daemon logs every round's failure: with the database's name, never
// its password.
func TestRunLogsHidePasswords(t *testing.T) {
	addr := closedPort(t)
	for _, pw := range secretPasswords() {
		for _, mode := range []RunOptions{{Every: time.Hour}, {WhenDue: true}} {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			logs := &stopAt{text: "round failed", stop: cancel}
			mode.Logger = slog.New(slog.NewTextHandler(logs, nil))
			raw := "http://mary:" + pw + "@" + addr + ",http://" + addr
			if err := Run(ctx, raw, mode); err != nil {
				t.Fatal(err)
			}
			if ctx.Err() == context.DeadlineExceeded {
				t.Fatalf("no round failed:\n%s", logs)
			}
			cancel()
			if s := leaks(logs.String(), pw); s != "" {
				t.Errorf("the daemon's log shows %q:\n%s", s, logs.String())
			}
		}
	}
}
