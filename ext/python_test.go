package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

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
