package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestBadPolicyParamsSaidPlainly: a relation policy whose params JSON is
// wrong fails the sweep with a message that names the policy, the key and
// what is wrong with it in the user's terms (never a Go type), and the
// sweep is recorded as failed.
func TestBadPolicyParamsSaidPlainly(t *testing.T) {
	for _, c := range []struct{ model, params, want string }{
		{"half_life", `{"half_life":[90]}`, `params half_life must be a number or a duration such as "90d" (got an array)`},
		{"linear", `{"rate":"fast"}`, `params rate must be a number (got text "fast")`},
		{"half_life", `{"half_life":"90d","half_life":"9d"}`, `params has the key "half_life" twice`},
		{"multi_linear", `{"tiers":[{}]}`, "params tier 0 has no weight"},
		{"multi_linear", `{"tiers":{"weight":1}}`, "params tiers must be a JSON array of tiers"},
		{"power_law", `{"alpha":1,"scale":0}`, "params scale must be greater than zero"},
		{"exponential", `["lambda",1]`, "params must be a JSON object"},
		{"linear", `{"rate":0.1`, "params is not valid JSON"},
	} {
		path := filepath.Join(t.TempDir(), "m.db")
		ok(t, "migrate", "up", "--db", path)
		exec1(t, path, `INSERT INTO mem_edge_policies (relation_type, model, params) VALUES ('works_on', ?, ?)`, c.model, c.params)
		r := mw(t, "sweep", "--now", "1", "--db", path)
		wantExit(t, r, exitFailure, `mem_edge_policies row "works_on"`, "memdecay: policy_curve: "+c.want, "nothing was swept")
		for _, leak := range []string{"Go value", "Go struct", "json:", "sqlfuncs.", "RawMessage", "float64"} {
			if strings.Contains(r.stderr, leak) {
				t.Errorf("%s %s: message says %q: %s", c.model, c.params, leak, r.stderr)
			}
		}
		if st := queryRows(t, path, `SELECT status FROM mem_sweeps`); len(st) != 1 || st[0] != "failed" {
			t.Errorf("%s %s: sweeps recorded %v, want one failed", c.model, c.params, st)
		}
	}
}
