package main

// `memworker run` as a user meets it: a child process that logs JSON lines
// to stderr, sweeps on its trigger and stops cleanly on SIGTERM and SIGINT.
// The tests step by the daemon's own log lines (with a generous deadline),
// never by sleeping.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// daemonDeadline bounds every wait on the daemon; it is a guard against a
// hang, not a timing assertion.
const daemonDeadline = 2 * time.Minute

// daemon is a running `memworker run` whose stderr is read line by line.
type daemon struct {
	cmd      *exec.Cmd
	lines    chan string // stderr lines; closed when the process closes stderr
	log      []string    // the lines received so far (test goroutine only)
	deadline <-chan time.Time
	exited   bool
}

// startDaemon starts the built memworker with args; at cleanup it is
// killed if still running.
func startDaemon(t *testing.T, args ...string) *daemon {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &daemon{cmd: cmd, lines: make(chan string), deadline: time.After(daemonDeadline)}
	go func() {
		defer close(d.lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			d.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		if !d.exited {
			cmd.Process.Kill()
			for range d.lines {
			}
			cmd.Wait()
		}
	})
	return d
}

// next returns the next log line, decoded; ok is false at EOF.
func (d *daemon) next(t *testing.T) (rec map[string]any, ok bool) {
	t.Helper()
	select {
	case line, ok := <-d.lines:
		if !ok {
			return nil, false
		}
		d.log = append(d.log, line)
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("a log line is not JSON: %v\n%s", err, line)
		}
		for _, k := range []string{"time", "level", "msg"} {
			if _, has := rec[k]; !has {
				t.Errorf("log line without %q: %s", k, line)
			}
		}
		return rec, true
	case <-d.deadline:
		t.Fatalf("memworker run: nothing more logged within %v; log so far:\n%s", daemonDeadline, strings.Join(d.log, "\n"))
	}
	return nil, false
}

// waitFor reads log lines until one has the message msg.
func (d *daemon) waitFor(t *testing.T, msg string) map[string]any {
	t.Helper()
	for {
		rec, ok := d.next(t)
		if !ok {
			t.Fatalf("memworker run ended before logging %q; log:\n%s", msg, strings.Join(d.log, "\n"))
		}
		if rec["msg"] == msg {
			return rec
		}
	}
}

// stop sends sig, reads the log to its end and returns the exit error.
func (d *daemon) stop(t *testing.T, sig syscall.Signal) (tail []map[string]any, err error) {
	t.Helper()
	if err := d.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	for {
		rec, ok := d.next(t)
		if !ok {
			break
		}
		tail = append(tail, rec)
	}
	d.exited = true
	return tail, d.cmd.Wait()
}

func number(t *testing.T, rec map[string]any, key string) float64 {
	t.Helper()
	v, ok := rec[key].(float64)
	if !ok {
		t.Fatalf("log line %v: %s is %T, want a number", rec, key, rec[key])
	}
	return v
}

// TestRunDaemonStopsOnSignal: `run --every 200ms --log-format json` sweeps
// at once and again after the interval, logging one JSON "swept" line per
// sweep; SIGTERM or SIGINT stops it with "memworker stopping" and exit 0,
// leaving no sweep marked running.
func TestRunDaemonStopsOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			path := demoDB(t)
			d := startDaemon(t, "run", "--every", "200ms", "--db", path, "--log-format", "json")
			started := d.waitFor(t, "memworker running")
			if started["db"] != path || started["every"] != "200ms" {
				t.Errorf("start line %v", started)
			}
			first := d.waitFor(t, "swept")
			if first["db"] != path || !strings.HasPrefix(fmt.Sprint(first["summary"]), "Curated:") || first["level"] != "INFO" {
				t.Errorf("swept line %v", first)
			}
			second := d.waitFor(t, "swept") // the interval repeats
			if number(t, second, "sweep_id") <= number(t, first, "sweep_id") {
				t.Errorf("second sweep %v is not newer than %v", second["sweep_id"], first["sweep_id"])
			}
			if second["edges_decayed"] != 0.0 || second["archived"] != 0.0 {
				t.Errorf("a second sweep at the same clock removed something: %v", second)
			}
			tail, err := d.stop(t, sig)
			if err != nil {
				t.Fatalf("memworker run after %v: %v, want exit status 0; log:\n%s", sig, err, strings.Join(d.log, "\n"))
			}
			stopping := 0
			for _, rec := range tail {
				if rec["msg"] == "memworker stopping" {
					stopping++
				}
			}
			if stopping != 1 {
				t.Errorf("%d \"memworker stopping\" lines after %v; log:\n%s", stopping, sig, strings.Join(d.log, "\n"))
			}
			if n := queryOne(t, path, `SELECT count(*) FROM mem_sweeps WHERE status = 'running'`); n != "0" {
				t.Errorf("%s sweeps left running", n)
			}
			done, _ := strconv.Atoi(queryOne(t, path, `SELECT count(*) FROM mem_sweeps WHERE status = 'done'`))
			if done < 3 { // the demo's own sweep and the daemon's two
				t.Errorf("%d sweeps done, want at least 3", done)
			}
		})
	}
}

// TestRunDaemonWhenDue: `run --when-due` leaves a freshly swept memory
// alone and sweeps it once the clock has moved curate_interval_hours.
func TestRunDaemonWhenDue(t *testing.T) {
	path := demoDB(t)
	clock, _ := strconv.ParseFloat(strings.TrimSpace(ok(t, "clock", "show", "--db", path).stdout), 64)
	d := startDaemon(t, "run", "--when-due", "--poll", "100ms", "--db", path, "--log-format", "json")
	d.waitFor(t, "memworker running")
	ok(t, "clock", "advance", "40", "--db", path)
	swept := d.waitFor(t, "swept")
	if got := number(t, swept, "clock_hours"); got != clock+40 {
		t.Errorf("first sweep at clock %v, want %v (none before the clock moved)", got, clock+40)
	}
	if _, err := d.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit: %v", err)
	}
	if got := queryOne(t, path, `SELECT group_concat(clock_hours) FROM mem_sweeps`); got != fmt.Sprintf("%.1f,%.1f", clock, clock+40) {
		t.Errorf("sweeps at %s, want the demo's at %v and one at %v", got, clock, clock+40)
	}
}

// TestRunUsage: a run that cannot start is a usage error (exit 2 with a
// hint) and touches nothing.
func TestRunUsage(t *testing.T) {
	path := demoDB(t)
	before := fileHash(t, path)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no trigger", []string{"run", "--db", path}, "exactly one of --schedule, --every, --when-due"},
		{"two triggers", []string{"run", "--every", "1h", "--when-due", "--db", path}, "exactly one of"},
		{"schedule and every", []string{"run", "--schedule", "30 4 * * 0", "--every", "1h", "--db", path}, "exactly one of"},
		{"log format", []string{"run", "--every", "1h", "--log-format", "xml", "--db", path}, `--log-format "xml"`},
		{"log level", []string{"run", "--every", "1h", "--log-level", "loud", "--db", path}, `--log-level "loud"`},
		{"bad cron", []string{"run", "--schedule", "61 * * * *", "--db", path}, "--schedule"},
		{"bad duration", []string{"run", "--every", "soon", "--db", path}, "every"},
		{"interval too short", []string{"run", "--every", "1ns", "--db", path}, "--every 1ns is under 100ms"},
		{"stray argument", []string{"run", "--every", "1h", "--db", path, "now"}, `unexpected argument "now"`},
		{"no database", []string{"run", "--every", "1h"}, "no database"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := bin(t, c.args...)
			wantUsage(t, r, c.want, "run")
			if strings.Contains(r.stderr, "memworker running") {
				t.Errorf("the daemon started:\n%s", r.stderr)
			}
		})
	}
	if fileHash(t, path) != before {
		t.Error("a refused run changed the database")
	}
}

// TestRunDaemonKeepsGoing: a round that fails (the file is not SQLite) is
// logged as an error and retried; the daemon does not exit.
func TestRunDaemonKeepsGoing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.db")
	if err := os.WriteFile(path, []byte("not a database\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, "run", "--every", "1h", "--db", path, "--log-format", "json")
	failed := d.waitFor(t, "sweep failed")
	if failed["level"] != "ERROR" || !strings.Contains(fmt.Sprint(failed["err"]), "not a SQLite database") {
		t.Errorf("failure line %v", failed)
	}
	backoff := d.waitFor(t, "round failed; backing off")
	if backoff["retry_in"] != "5s" {
		t.Errorf("first backoff %v, want the 5s default", backoff["retry_in"])
	}
	tail, err := d.stop(t, syscall.SIGTERM)
	if err != nil {
		t.Fatalf("exit after failed rounds: %v, want exit status 0", err)
	}
	if len(tail) == 0 || tail[len(tail)-1]["msg"] != "memworker stopping" {
		t.Errorf("log does not end with the stop line:\n%s", strings.Join(d.log, "\n"))
	}
}

// TestRunDaemonOutlivesSIGHUP: a hangup (a closed terminal, systemd's
// reload) neither kills the daemon nor leaves its lease held: it says
// so in the log and sweeps on; SIGTERM then stops it cleanly.
func TestRunDaemonOutlivesSIGHUP(t *testing.T) {
	path := demoDB(t)
	d := startDaemon(t, "run", "--every", "200ms", "--db", path, "--log-format", "json")
	d.waitFor(t, "swept")
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	hup := d.waitFor(t, "SIGHUP: nothing to reload (each sweep reads its settings, policies and mapping from the database); the schedule goes on")
	if hup["level"] != "INFO" {
		t.Errorf("SIGHUP line %v", hup)
	}
	d.waitFor(t, "swept") // it sweeps on
	if _, err := d.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("memworker run after SIGHUP then SIGTERM: %v; log:\n%s", err, strings.Join(d.log, "\n"))
	}
	if n := queryOne(t, path, `SELECT count(*) FROM mem_sweeps WHERE status = 'running'`); n != "0" {
		t.Errorf("%s sweeps left running", n)
	}
}
