package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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

// exprCase is an expression and its expected value: float64, string or nil (NULL).
type exprCase struct {
	expr string
	want any
}

const (
	twoTiers    = `[{"weight":0.6,"hold":0.5,"rate":0.3},{"weight":0.4,"hold":2,"rate":0.1}]`
	twoTierJSON = `{"model":"multi_linear","tiers":` + twoTiers + `}`
)

// everyFunction calls each function at each arity, with NULL and
// numeric-text arguments; the values are worked out by hand from SPEC §2.
var everyFunction = []exprCase{
	{`memdecay_version()`, "0.1.0"},
	{`decay_tier('["self/value","self/constitutional"]', 'observation')`, "permanent"},
	{`decay_tier('misc, self/goal', NULL)`, "durable"},
	{`decay_tier(NULL, 'mind')`, "durable"},
	{`decay_tier('[]', 'observation')`, "ephemeral"},
	{`decay_tier(NULL, NULL)`, "standard"},
	{`tier_lambda('permanent')`, 0.00001},
	{`tier_lambda('durable')`, 0.001},
	{`tier_lambda('standard')`, 0.01},
	{`tier_lambda('ephemeral')`, 0.05},
	{`tier_lambda(NULL)`, nil},
	{`lambda_edge('standard', 'durable')`, 0.0005},
	{`lambda_edge('standard', 'standard', 10)`, 0.0025},
	{`lambda_edge('standard', 'standard', '9')`, 0.005},
	{`lambda_edge('standard', 'standard', 3, 3)`, 0.0025},
	{`lambda_edge('standard', 'standard', NULL)`, nil},
	{`effective_weight(0.8, 0.01, 10)`, 0.8 * math.Exp(-0.1)},
	{`effective_weight('0.5', '0.1', '2')`, 0.5 * math.Exp(-0.2)},
	{`effective_weight(1, 0.5, -5)`, 1.0},
	{`effective_weight(1, NULL, 1)`, nil},
	{`half_life_weight(0.8, 30, 60)`, 0.2},
	{`half_life_weight(1, 10, NULL)`, nil},
	{`linear_weight(1, 0.1, 5)`, 0.5},
	{`linear_weight(1, 0.1, 15, 10)`, 0.5},
	{`linear_weight(1, 0.1, 5, 10)`, 1.0},
	{`multi_linear_weight('` + twoTiers + `', 1)`, 0.85},
	{`multi_linear_weight('` + twoTiers + `', '3')`, 0.3},
	{`multi_linear_weight(NULL, 1)`, nil},
	{`power_law_weight(1, 0.5, 3)`, 0.5},
	{`power_law_weight(2, 1, 9, 3)`, 0.5},
	{`curve_weight('{"model":"exponential","lambda":0.1}', 2, 10)`, 2 * math.Exp(-1)},
	{`curve_weight('{"model":"half_life","half_life":90}', 1, 180)`, 0.25},
	{`curve_weight('{"model":"linear","rate":0.25}', 1, 2)`, 0.5},
	{`curve_weight('{"model":"delayed_linear","rate":0.25,"hold":4}', 1, 6)`, 0.5},
	{`curve_weight('` + twoTierJSON + `', 0.5, 1)`, 0.425},
	{`curve_weight('{"model":"power_law","alpha":1,"scale":3}', 2, 9)`, 0.5},
	{`curve_weight(NULL, 1, 1)`, nil},
	{`decay_horizon(1, 0.1, 0.5)`, math.Ln2 / 0.1},
	{`decay_horizon(0.1, 1, 0.5)`, 0.0},
	{`decay_horizon(1, 0, 0.5)`, nil},
	{`curve_horizon('{"model":"linear","rate":0.25}', 1)`, 4.0},
	{`curve_horizon('{"model":"delayed_linear","rate":0.25,"hold":4}', 1, 0.5)`, 6.0},
	{`curve_horizon('` + twoTierJSON + `', 1, 0.5)`, 2.125},
	{`curve_horizon('{"model":"exponential","lambda":0.1}', 1)`, nil},
	{`tideline_score(0.6, 0.03, 10, 0)`, 0.6 * math.Exp(-math.Ln2/18*0.8*1.03*10)},
	{`tideline_score(0.4, 0.08, 30, 2, 'short')`, 0.4 * math.Exp(-math.Ln2/15.75*0.8*1.08*30) * (1 + math.Log(3)*0.1)},
	{`tideline_score(0.85, 0.01, 1000, 0, 'permanent')`, 1.0},
	{`tideline_score(NULL, 0.03, 10, 0)`, nil},
	{`segment_tier('identity')`, "permanent"},
	{`segment_tier('knowledge')`, "long"},
	{`segment_tier('context')`, "short"},
	{`segment_importance('correction')`, 0.8},
	{`segment_decay_rate('project')`, 0.025},
	{`lifecycle_action(0.01, 'long', 0)`, "archive"},
	{`lifecycle_action(0.04, 'short', 0)`, "prune"},
	{`lifecycle_action(0.1, 'short', 0)`, "archive"},
	{`lifecycle_action(0.01, 'short', 1)`, "keep"},
	{`lifecycle_action(NULL, 'short', 0)`, nil},
}

// errorCase must fail with "memdecay: <fn>: " followed by a message
// containing want.
type errorCase struct {
	expr, fn, want string
}

var someErrors = []errorCase{
	{`effective_weight(x'00', 0.1, 1)`, "effective_weight", "weight is a blob"},
	{`effective_weight(1, 'fast', 1)`, "effective_weight", `lambda is not a number: "fast"`},
	{`effective_weight(-1, 0.1, 1)`, "effective_weight", "weight must not be negative"},
	{`effective_weight(1e999, 0.1, 1)`, "effective_weight", "weight must be finite"},
	{`half_life_weight(1, 0, 1)`, "half_life_weight", "half_life must be greater than zero"},
	{`linear_weight(1, -0.1, 1)`, "linear_weight", "rate must not be negative"},
	{`multi_linear_weight('[{', 1)`, "multi_linear_weight", "tiers_json is not a JSON array of tiers"},
	{`power_law_weight(1, 1, 1, 0)`, "power_law_weight", "scale must be greater than zero"},
	{`curve_weight('{"model":"nope"}', 1, 1)`, "curve_weight", `curve_json model "nope" is unknown`},
	{`curve_horizon('{"model":"linear","rate":1}', 1, -1)`, "curve_horizon", "threshold must not be negative"},
	{`decay_horizon(1, -0.1, 0.5)`, "decay_horizon", "lambda must not be negative"},
	{`decay_tier('[1]', 'fact')`, "decay_tier", "tags is not a JSON array of strings"},
	{`tier_lambda('medium')`, "tier_lambda", `tier "medium" is not a tier`},
	{`lambda_edge('standard', 7)`, "lambda_edge", "tier_b must be text, not a number"},
	{`tideline_score(0.5, 0.1, 0, 0, 'forever')`, "tideline_score", `tier "forever" is not a fact tier`},
	{`segment_importance('hobby')`, "segment_importance", `segment "hobby" is not a segment`},
	{`lifecycle_action(0.1, 'short', 'yes')`, "lifecycle_action", `confirmed is not a number: "yes"`},
}

// arities is every function the extension registers, with its arities.
var arities = map[string][]int{
	"memdecay_version":    {0},
	"memdecay_debug":      {0},
	"decay_tier":          {2},
	"tier_lambda":         {1},
	"lambda_edge":         {2, 3, 4},
	"effective_weight":    {3},
	"half_life_weight":    {3},
	"linear_weight":       {3, 4},
	"multi_linear_weight": {2},
	"power_law_weight":    {3, 4},
	"curve_weight":        {3},
	"decay_horizon":       {3},
	"curve_horizon":       {2, 3},
	"tideline_score":      {4, 5},
	"segment_tier":        {1},
	"segment_importance":  {1},
	"segment_decay_rate":  {1},
	"lifecycle_action":    {3},
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

func TestShellEveryFunction(t *testing.T) {
	exprs := exprsOf(everyFunction)
	got, other, r := shellCases(t, exprs)
	checkSurvived(t, r)
	if len(other) > 0 {
		t.Errorf("unexpected stderr:\n%s", strings.Join(other, "\n"))
	}
	want := linked(t, exprs)
	for i, c := range everyFunction {
		if !got[i].ran || got[i].err != "" || !sameValue(got[i].value, c.want) {
			t.Errorf("shell: SELECT %s = %v, want %#v", c.expr, got[i], c.want)
		}
		if !sameOutcome(got[i], want[i]) {
			t.Errorf("SELECT %s: shell %v, linked build %v", c.expr, got[i], want[i])
		}
	}

	r = runShell(t, ":memory:", "SELECT memdecay_debug();\n")
	for _, part := range []string{"memdecay 0.1.0", "SQLite 3.", "loadable extension"} {
		if !strings.Contains(r.stdout, part) {
			t.Errorf("memdecay_debug() = %q, want it to contain %q", r.stdout, part)
		}
	}
}

func TestShellFunctionList(t *testing.T) {
	const (
		deterministic = 0x800
		innocuous     = 0x200000
	)
	var names []string
	for name := range arities {
		names = append(names, "'"+name+"'")
	}
	r := runShell(t, ":memory:", fmt.Sprintf(".mode json\n"+
		"SELECT name, narg, flags, enc FROM pragma_function_list WHERE name IN (%s) ORDER BY name, narg;\n",
		strings.Join(names, ", ")))
	if r.exitCode != 0 {
		t.Fatalf("sqlite3 exited %d: %s", r.exitCode, r.stderr)
	}
	var rows []struct {
		Name  string `json:"name"`
		Narg  int    `json:"narg"`
		Flags int    `json:"flags"`
		Enc   string `json:"enc"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("%v: %q", err, r.stdout)
	}
	got := map[string][]int{}
	for _, row := range rows {
		got[row.Name] = append(got[row.Name], row.Narg)
		if row.Flags&deterministic == 0 || row.Flags&innocuous == 0 {
			t.Errorf("%s/%d: flags %#x lack SQLITE_DETERMINISTIC|SQLITE_INNOCUOUS", row.Name, row.Narg, row.Flags)
		}
		if row.Enc != "utf8" {
			t.Errorf("%s/%d: enc %q, want utf8", row.Name, row.Narg, row.Enc)
		}
	}
	for name, want := range arities {
		if !slices.Equal(got[name], want) {
			t.Errorf("%s: arities %v in pragma_function_list, want %v", name, got[name], want)
		}
	}
}

// TestShellSchema uses the functions in a view and an expression index of
// a file database, then reopens the file in a second shell process.
func TestShellSchema(t *testing.T) {
	db := filepath.Join(t.TempDir(), "memory.db")
	r := runShell(t, db, `.bail on
CREATE TABLE edge(id INTEGER PRIMARY KEY, tags TEXT, category TEXT, w REAL, l REAL, e REAL);
CREATE INDEX edge_weight ON edge(effective_weight(w, l, e));
CREATE VIEW edge_now AS
  SELECT id, decay_tier(tags, category) AS tier, effective_weight(w, l, e) AS ew FROM edge;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 99)
INSERT INTO edge SELECT i, CASE WHEN i % 2 THEN '["self/value"]' END, 'fact', 1, 0.1, i FROM n;
`)
	if r.exitCode != 0 {
		t.Fatalf("creating the schema: exit %d: %s", r.exitCode, r.stderr)
	}

	// Rows 7..99 have exp(-0.1 i) < 0.5; odd ids are durable.
	const query = `PRAGMA trusted_schema = OFF;
SELECT count(*) || '|' || printf('%.9f', sum(ew)) || '|' || group_concat(DISTINCT tier) FROM (SELECT * FROM edge_now WHERE ew < 0.5 ORDER BY tier);
EXPLAIN QUERY PLAN SELECT id FROM edge WHERE effective_weight(w, l, e) < 0.5;
`
	sum := 0.0
	for i := 7; i < 100; i++ {
		sum += math.Exp(-0.1 * float64(i))
	}
	want := fmt.Sprintf("93|%.9f|durable,standard", sum)
	for _, process := range []string{"first", "second"} {
		r := runShell(t, db, ".bail on\n"+query)
		if r.exitCode != 0 {
			t.Fatalf("%s reader: exit %d: %s", process, r.exitCode, r.stderr)
		}
		if !strings.Contains(r.stdout, want) {
			t.Errorf("%s reader: view gave %q, want %q", process, r.stdout, want)
		}
		if !strings.Contains(r.stdout, "INDEX edge_weight") {
			t.Errorf("%s reader: query plan does not use the expression index:\n%s", process, r.stdout)
		}
	}

	// Without the extension the view cannot be read: it really uses it.
	cmd := exec.Command(sqlite3Shell(t), "-batch", db, "SELECT count(*) FROM edge_now")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "no such function") {
		t.Errorf("reading the view without the extension: %v %s", err, out)
	}
}

// hostileValues are argument values meant to break things.
var hostileValues = []string{
	`NULL`, `x''`, `x'00'`, `x'ffffffffffff'`, `zeroblob(100000)`,
	`''`, `' '`, `'abc'`, `'nan'`, `'inf'`, `'1e999'`, `'0x10'`, `'a' || char(0) || 'b'`, `CAST(x'ff00fe' AS TEXT)`,
	`printf('%.100000c', 'x')`,
	`0`, `-0.0`, `-1`, `1e308`, `-1e308`, `1e999`, `-1e999`, `4.9e-324`,
	`9223372036854775807`, `-9223372036854775808`,
	`'standard'`, `'permanent'`, `'short'`, `'identity'`,
	`'[{'`, `'{'`, `'{"model":"nope"}'`, `'null'`, `'[]'`, `'{}'`, `'[null]'`, `'[1]'`, `'"x"'`,
	`'[{"weight":1e308},{"weight":1e308}]'`,
	`'[{"weight":1,"hold":-1}]'`,
	`'{"model":"multi_linear","tiers":[{"weight":1,"rate":1e308}]}'`,
	`'{"model":"power_law","alpha":1e308,"scale":4.9e-324}'`,
	`'{"model":"half_life","half_life":0}'`,
	`'{"model":"exponential","lambda":1e999}'`,
	`'` + strings.Repeat("[", 50000) + `'`,
	`'` + strings.Repeat(`{"tiers":`, 12000) + `'`,
}

// validArgs are arguments that work, for each function at its largest
// arity; a hostile value replaces one of them at a time.
var validArgs = map[string][]string{
	"memdecay_version":    {},
	"memdecay_debug":      {},
	"decay_tier":          {`'["self/value"]'`, `'mind'`},
	"tier_lambda":         {`'standard'`},
	"lambda_edge":         {`'standard'`, `'durable'`, `10`, `10`},
	"effective_weight":    {`1`, `0.1`, `5`},
	"half_life_weight":    {`1`, `10`, `5`},
	"linear_weight":       {`1`, `0.1`, `5`, `2`},
	"multi_linear_weight": {`'` + twoTiers + `'`, `1`},
	"power_law_weight":    {`1`, `0.5`, `3`, `2`},
	"curve_weight":        {`'{"model":"half_life","half_life":10}'`, `1`, `5`},
	"decay_horizon":       {`1`, `0.1`, `0.5`},
	"curve_horizon":       {`'` + twoTierJSON + `'`, `1`, `0.5`},
	"tideline_score":      {`0.6`, `0.03`, `10`, `2`, `'long'`},
	"segment_tier":        {`'knowledge'`},
	"segment_importance":  {`'knowledge'`},
	"segment_decay_rate":  {`'knowledge'`},
	"lifecycle_action":    {`0.1`, `'short'`, `0`},
}

type hostileCase struct {
	expr, fn string
	value    string // the hostile value, "" for a valid call or a wrong arity
	pos      int    // the hostile value's argument position
	badArity bool
}

// hostileCases calls every function at every arity, first with valid
// arguments, then with each hostile value in each position, then with one
// argument too few and one too many.
func hostileCases() []hostileCase {
	var cases []hostileCase
	call := func(fn string, args []string) string { return fn + "(" + strings.Join(args, ", ") + ")" }
	for _, fn := range slices.Sorted(maps.Keys(arities)) {
		valid := validArgs[fn]
		for _, n := range arities[fn] {
			cases = append(cases, hostileCase{expr: call(fn, valid[:n]), fn: fn})
			for pos := range n {
				for _, v := range hostileValues {
					args := slices.Clone(valid[:n])
					args[pos] = v
					cases = append(cases, hostileCase{expr: call(fn, args), fn: fn, value: v, pos: pos})
				}
			}
		}
		lo, hi := slices.Min(arities[fn]), slices.Max(arities[fn])
		if lo > 0 {
			cases = append(cases, hostileCase{expr: call(fn, valid[:lo-1]), fn: fn, badArity: true})
		}
		cases = append(cases, hostileCase{expr: call(fn, append(slices.Clone(valid[:hi]), "1")), fn: fn, badArity: true})
	}
	return cases
}

// TestShellHostileInputs throws every hostile value at every argument of
// every function in one sqlite3 process: it must answer each with a value
// or a memdecay error, never crash, and still work afterwards. The linked
// build must give the very same answers.
func TestShellHostileInputs(t *testing.T) {
	cases := hostileCases()
	exprs := make([]string, len(cases))
	for i, c := range cases {
		exprs[i] = c.expr
	}
	got, other, r := shellCases(t, exprs)
	checkSurvived(t, r)
	if len(other) > 0 {
		t.Errorf("unexpected stderr lines:\n%.4000s", strings.Join(other, "\n"))
	}
	want := linked(t, exprs)

	short := func(s string) string {
		if len(s) > 160 {
			return s[:160] + "…"
		}
		return s
	}
	for i, c := range cases {
		o := got[i]
		switch {
		case !o.ran:
			t.Errorf("SELECT %s: %v", short(c.expr), o)
			continue
		case c.badArity:
			if !strings.HasPrefix(o.err, "wrong number of arguments to function "+c.fn+"()") {
				t.Errorf("SELECT %s: %v, want SQLite's wrong number of arguments", short(c.expr), o)
			}
			continue
		case o.err != "" && !strings.HasPrefix(o.err, "memdecay: "+c.fn+": "):
			t.Errorf("SELECT %s: error %q does not start with %q", short(c.expr), o.err, "memdecay: "+c.fn+": ")
		case c.value == "":
			if o.err != "" {
				t.Errorf("valid call SELECT %s failed: %s", short(c.expr), o.err)
			}
		case strings.HasPrefix(c.value, "x'") || strings.HasPrefix(c.value, "zeroblob"):
			if !strings.Contains(o.err, "is a blob") {
				t.Errorf("SELECT %s: %v, want a blob error", short(c.expr), o)
			}
		case c.value == "1e999" || c.value == "-1e999":
			// Not asserted for lifecycle_action's confirmed flag, which
			// today reads ±Inf as true.
			if o.err == "" && (c.fn != "lifecycle_action" || c.pos != 2) {
				t.Errorf("SELECT %s: %v, want an error for an infinite argument", short(c.expr), o)
			}
		case c.value == "NULL":
			if o.err != "" {
				t.Errorf("SELECT %s: %v, want no error for NULL", short(c.expr), o)
			}
		}
		if c.fn != "memdecay_debug" && !sameOutcome(o, want[i]) {
			t.Errorf("SELECT %s: shell %v, linked build %v", short(c.expr), o, want[i])
		}
	}
	t.Logf("%d hostile statements in one sqlite3 process, exit code %d", len(cases), r.exitCode)
}

// pythonScript loads the extension the way the README shows and runs
// SELECT <expr> for each expression read from stdin, printing a JSON list
// of {"value": …} or {"error": …, "type": …}.
const pythonScript = `
import json, sqlite3, sys
conn = sqlite3.connect(":memory:")
conn.enable_load_extension(True)
conn.load_extension(sys.argv[1])
conn.enable_load_extension(False)
out = []
for expr in json.load(sys.stdin):
    try:
        (value,) = conn.execute("SELECT " + expr).fetchone()
        out.append({"value": value})
    except sqlite3.Error as e:
        out.append({"error": str(e), "type": type(e).__name__})
json.dump(out, sys.stdout)
`

type pythonResult struct {
	Value any    `json:"value"`
	Error string `json:"error"`
	Type  string `json:"type"`
}

func runPython(t *testing.T, exprs []string) []pythonResult {
	t.Helper()
	in, err := json.Marshal(exprs)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python(t), "-c", pythonScript, loadName(t))
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if strings.Contains(stderr.String(), "enable_load_extension") {
			t.Fatalf("%s cannot load extensions (install Debian's python3): %s", pythonPath, stderr.String())
		}
		t.Fatalf("%s: %v\n%s", pythonPath, err, stderr.String())
	}
	var out []pythonResult
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("decoding Python's output: %v\n%s", err, stdout.String())
	}
	if len(out) != len(exprs) {
		t.Fatalf("Python answered %d of %d expressions", len(out), len(exprs))
	}
	return out
}

func TestPython(t *testing.T) {
	var exprs []string
	exprs = append(exprs, exprsOf(everyFunction)...)
	for _, c := range someErrors {
		exprs = append(exprs, c.expr)
	}
	exprs = append(exprs, "memdecay_debug()", "effective_weight(1, 2)")
	got := runPython(t, exprs)
	want := linked(t, exprs)

	for i, c := range everyFunction {
		if got[i].Error != "" || !sameValue(got[i].Value, c.want) {
			t.Errorf("python: SELECT %s = %#v (error %q), want %#v", c.expr, got[i].Value, got[i].Error, c.want)
		}
	}
	for j, c := range someErrors {
		i := len(everyFunction) + j
		g := got[i]
		switch {
		case g.Type != "OperationalError":
			t.Errorf("python: SELECT %s raised %q (%q), want sqlite3.OperationalError", c.expr, g.Type, g.Error)
		case !strings.HasPrefix(g.Error, "memdecay: "+c.fn+": ") || !strings.Contains(g.Error, c.want):
			t.Errorf("python: SELECT %s: error %q, want \"memdecay: %s: …%s…\"", c.expr, g.Error, c.fn, c.want)
		case g.Error != want[i].err:
			t.Errorf("python: SELECT %s: error %q, linked build says %q", c.expr, g.Error, want[i].err)
		}
	}
	n := len(everyFunction) + len(someErrors)
	if s, _ := got[n].Value.(string); !strings.Contains(s, "memdecay 0.1.0") || !strings.Contains(s, "loadable extension") {
		t.Errorf("python: memdecay_debug() = %#v", got[n].Value)
	}
	if g := got[n+1]; g.Type != "OperationalError" || !strings.Contains(g.Error, "wrong number of arguments to function effective_weight()") {
		t.Errorf("python: effective_weight(1, 2): %s %q", g.Type, g.Error)
	}
}
