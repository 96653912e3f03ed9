package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	_ "github.com/mattn/go-sqlite3" // in-process SQLite, memdecay linked in by package shim
)

// These tests load the built memdecay.so the way users do: with `.load` in
// the sqlite3 shell and with load_extension in Debian's Python. The file
// is $MEMDECAY_SO when set (the Makefile sets it), else built once here.
// The test binary itself links the same functions into mattn's SQLite
// (package shim, imported by main.go), which the shell's answers are also
// compared against.

// pythonPath is Debian's Python, whose sqlite3 module can load extensions
// (pyenv's default build cannot).
const pythonPath = "/usr/bin/python3"

var (
	buildOnce sync.Once
	builtSO   string
	buildErr  error
	buildDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// extensionPath returns the memdecay.so under test.
func extensionPath(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if p := os.Getenv("MEMDECAY_SO"); p != "" {
			if builtSO, buildErr = filepath.Abs(p); buildErr == nil {
				_, buildErr = os.Stat(builtSO)
			}
			return
		}
		goBin, err := exec.LookPath("go")
		if err != nil {
			buildErr = fmt.Errorf("MEMDECAY_SO is not set and no go command is on PATH to build it: %w", err)
			return
		}
		if buildDir, buildErr = os.MkdirTemp("", "memdecay-ext-test-"); buildErr != nil {
			return
		}
		builtSO = filepath.Join(buildDir, "memdecay.so")
		cmd := exec.Command(goBin, "build", "-buildmode=c-shared", "-tags", "memdecay_loadable", "-o", builtSO, "./ext")
		cmd.Dir = ".." // the module root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("memdecay.so: %v", buildErr)
	}
	return builtSO
}

// loadName is the extension path as users write it: without ".so".
func loadName(t testing.TB) string {
	return strings.TrimSuffix(extensionPath(t), ".so")
}

func sqlite3Shell(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Fatal("the sqlite3 shell is not on PATH: install it (Debian/Ubuntu: apt-get install sqlite3)")
	}
	return p
}

func python(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(pythonPath); err != nil {
		t.Fatalf("%s is missing: install Debian's python3 (apt-get install python3), whose sqlite3 module supports enable_load_extension", pythonPath)
	}
	return pythonPath
}

func closeEnough(got, want float64) bool {
	return got == want || math.Abs(got-want) <= 1e-12*math.Max(1, math.Max(math.Abs(got), math.Abs(want)))
}

// sameValue compares a decoded JSON or SQL value with an expected one.
func sameValue(got, want any) bool {
	switch w := want.(type) {
	case nil:
		return got == nil
	case float64:
		switch g := got.(type) {
		case float64:
			return closeEnough(g, w)
		case json.Number:
			f, err := g.Float64()
			return err == nil && closeEnough(f, w)
		}
		return false
	}
	return got == want
}

// outcome is what became of one statement: a value or an error message.
type outcome struct {
	value any
	err   string
	ran   bool
}

func (o outcome) String() string {
	switch {
	case !o.ran:
		return "no output and no error"
	case o.err != "":
		return "error: " + o.err
	}
	return fmt.Sprintf("%#v", o.value)
}

// shellRun is one sqlite3 shell process and what it printed.
type shellRun struct {
	stdout, stderr string
	exitCode       int // -1 when killed by a signal
}

// runShell runs script in the sqlite3 shell on database db, after loading
// the extension as users write it: `.load path/memdecay`.
func runShell(t *testing.T, db, script string) shellRun {
	t.Helper()
	cmd := exec.Command(sqlite3Shell(t), "-batch", db)
	cmd.Stdin = strings.NewReader(".load '" + loadName(t) + "'\n" + script)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("running sqlite3: %v", err)
	}
	return shellRun{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()}
}

// crashSigns are what a Go panic, a runtime fault or a C crash print.
var crashSigns = []string{"panic:", "goroutine ", "fatal error:", "SIGSEGV", "SIGABRT", "signal ", "runtime."}

// checkSurvived fails the test when the shell died or printed a crash.
func checkSurvived(t *testing.T, r shellRun) {
	t.Helper()
	if r.exitCode != 0 && r.exitCode != 1 { // 1: some statement failed
		t.Errorf("sqlite3 exited with code %d (-1: killed by a signal); stderr:\n%.2000s", r.exitCode, r.stderr)
	}
	for _, s := range crashSigns {
		if strings.Contains(r.stderr, s) {
			t.Errorf("sqlite3 stderr shows a crash (%q):\n%.4000s", s, r.stderr)
			break
		}
	}
}

var shellErrorLine = regexp.MustCompile(`^(?:Runtime|Parse) error near line (\d+): (.*)$`)

// shellCases runs SELECT <expr> for each expression, one statement per
// line, then a sentinel query, and returns each statement's outcome, the
// stderr lines that are not statement errors, and the run itself.
func shellCases(t *testing.T, exprs []string) ([]outcome, []string, shellRun) {
	t.Helper()
	const header = ".bail off\n.mode json\n"
	firstLine := 2 + strings.Count(header, "\n") // after the .load line
	var script strings.Builder
	script.WriteString(header)
	for i, e := range exprs {
		fmt.Fprintf(&script, "SELECT %d AS i, %s AS v;\n", i, e)
	}
	script.WriteString("SELECT -1 AS i, effective_weight(1, 0.1, 5) AS v;\n")
	r := runShell(t, ":memory:", script.String())

	out := make([]outcome, len(exprs))
	sentinel := false
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.UseNumber()
	for dec.More() {
		var rows []struct {
			I int `json:"i"`
			V any `json:"v"`
		}
		if err := dec.Decode(&rows); err != nil {
			t.Fatalf("decoding the shell's JSON output: %v\n%.2000s", err, r.stdout)
		}
		for _, row := range rows {
			switch {
			case row.I == -1:
				sentinel = sameValue(row.V, math.Exp(-0.5))
			case row.I >= 0 && row.I < len(out):
				out[row.I] = outcome{value: row.V, ran: true}
			}
		}
	}
	if !sentinel {
		t.Errorf("the query after all the cases did not answer: stdout tail %q", tail(r.stdout))
	}

	var other []string
	for _, line := range strings.Split(r.stderr, "\n") {
		if line == "" || strings.HasPrefix(line, " ") {
			continue // Parse errors echo the statement, indented
		}
		m := shellErrorLine.FindStringSubmatch(line)
		if m == nil {
			other = append(other, line)
			continue
		}
		n, _ := strconv.Atoi(m[1])
		if i := n - firstLine; i >= 0 && i < len(out) {
			out[i] = outcome{err: m[2], ran: true}
		} else {
			other = append(other, line)
		}
	}
	return out, other, r
}

func tail(s string) string {
	if len(s) > 200 {
		return "…" + s[len(s)-200:]
	}
	return s
}

func exprsOf(cases []exprCase) []string {
	var exprs []string
	for _, c := range cases {
		exprs = append(exprs, c.expr)
	}
	return exprs
}

// linked evaluates expressions in this process, where package shim links
// the same functions into mattn's SQLite.
func linked(t *testing.T, exprs []string) []outcome {
	t.Helper()
	db, err := sql.Open("sqlite3", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	out := make([]outcome, len(exprs))
	for i, e := range exprs {
		var v any
		if err := db.QueryRow("SELECT " + e).Scan(&v); err != nil {
			out[i] = outcome{err: err.Error(), ran: true}
			continue
		}
		if b, ok := v.([]byte); ok {
			v = string(b)
		}
		out[i] = outcome{value: v, ran: true}
	}
	return out
}

// sameOutcome compares the shell's outcome with the linked build's.
func sameOutcome(shell, linked outcome) bool {
	if shell.ran != linked.ran || shell.err != linked.err {
		return false
	}
	if f, ok := linked.value.(float64); ok {
		return sameValue(shell.value, f)
	}
	if n, ok := shell.value.(json.Number); ok { // an integer the shell printed
		f, err := n.Float64()
		return err == nil && linked.value == f
	}
	return shell.value == linked.value
}
