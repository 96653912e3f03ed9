package daemon

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker/internal/secrettest"
)

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
	addr := secrettest.ClosedPort(t)
	for _, pw := range secrettest.Passwords() {
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
			if s := secrettest.Leaks(logs.String(), pw); s != "" {
				t.Errorf("the daemon's log shows %q:\n%s", s, logs.String())
			}
		}
	}
}
