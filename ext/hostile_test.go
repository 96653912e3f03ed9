package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/ext/shim"
)

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

type hostileCase struct {
	expr, fn  string
	value     string   // the hostile value, "" for a valid call or a wrong arity
	arg       shim.Arg // the argument the hostile value replaces
	emptyText int      // the index of the same call with '' for the hostile value
	badArity  bool
	neverErrs bool // a BadGivesNull function: NULL, never an error, for any value
}

// hostileCases calls every function of the registry at every arity, first
// with its example arguments, then with each hostile value in each
// position, then with one argument too few and one too many.
func hostileCases() []hostileCase {
	var cases []hostileCase
	call := func(fn string, args []string) string { return fn + "(" + strings.Join(args, ", ") + ")" }
	for _, f := range shim.Functions() {
		valid := f.Example
		for n := f.MinArgs; n <= f.MaxArgs(); n++ {
			cases = append(cases, hostileCase{expr: call(f.Name, valid[:n]), fn: f.Name})
			for pos := range n {
				emptyText := len(cases) + slices.Index(hostileValues, "''")
				for _, v := range hostileValues {
					args := slices.Clone(valid[:n])
					args[pos] = v
					cases = append(cases, hostileCase{expr: call(f.Name, args), fn: f.Name, value: v, arg: f.Args[pos],
						emptyText: emptyText, neverErrs: f.BadGivesNull})
				}
			}
		}
		if f.MinArgs > 0 {
			cases = append(cases, hostileCase{expr: call(f.Name, valid[:f.MinArgs-1]), fn: f.Name, badArity: true})
		}
		cases = append(cases, hostileCase{expr: call(f.Name, append(slices.Clone(valid), "1")), fn: f.Name, badArity: true})
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
		case c.neverErrs:
			if o.err != "" {
				t.Errorf("SELECT %s: %v, want a value or NULL, never an error", short(c.expr), o)
			}
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
			if o.err == "" {
				t.Errorf("SELECT %s: %v, want an error for an infinite argument", short(c.expr), o)
			}
		case c.value == "NULL" && c.arg.NullGivesNull():
			if o.err != "" || o.value != nil {
				t.Errorf("SELECT %s: %v, want NULL", short(c.expr), o)
			}
		case c.value == "NULL": // read as ''
			if e := got[c.emptyText]; o.err != e.err || o.value != e.value {
				t.Errorf("SELECT %s: %v, want what '' gives: %v", short(c.expr), o, e)
			}
		case c.value == "'abc'" && c.arg.Kind == shim.ArgNumber:
			if want := c.arg.Name + ` is not a number: "abc"`; !strings.Contains(o.err, want) {
				t.Errorf("SELECT %s: %v, want an error containing %q", short(c.expr), o, want)
			}
		case c.value == "-1" && !c.arg.ReadsNumericText():
			if want := c.arg.Name + " must be text, not a number"; !strings.Contains(o.err, want) {
				t.Errorf("SELECT %s: %v, want an error containing %q", short(c.expr), o, want)
			}
		}
		if c.fn != "memdecay_debug" && !sameOutcome(o, want[i]) {
			t.Errorf("SELECT %s: shell %v, linked build %v", short(c.expr), o, want[i])
		}
	}
	t.Logf("%d hostile statements in one sqlite3 process, exit code %d", len(cases), r.exitCode)
}
