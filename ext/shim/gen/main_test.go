package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/ext/shim"
)

// TestRegistryHeaderIsCurrent fails when registry.go has changed since
// registry.h was last generated.
func TestRegistryHeaderIsCurrent(t *testing.T) {
	want, err := render(shim.Functions())
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../registry.h")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(got, want) {
		return
	}
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	i := 0
	for i < len(g) && i < len(w) && g[i] == w[i] {
		i++
	}
	line := func(lines []string) string {
		if i < len(lines) {
			return lines[i]
		}
		return "(end of file)"
	}
	t.Errorf("ext/shim/registry.h is stale (run go generate ./ext/shim): line %d is\n\t%s\nwant\n\t%s", i+1, line(g), line(w))
}

func TestRenderRejects(t *testing.T) {
	fs := shim.Functions()
	for _, tc := range []struct {
		name   string
		change func(f *shim.Function)
		want   string
	}{
		{"name", func(f *shim.Function) { f.Name = "Bad-Name" }, "not a lowercase SQL identifier"},
		{"duplicate", func(f *shim.Function) { f.Name = fs[0].Name }, "listed twice"},
		{"arity", func(f *shim.Function) { f.MinArgs = f.MaxArgs() + 1 }, "MinArgs"},
		{"two JSON arguments", func(f *shim.Function) {
			f.Args = append(f.Args, shim.Arg{Name: "a", Kind: shim.ArgJSON}, shim.Arg{Name: "b", Kind: shim.ArgJSON})
		}, "only one argument"},
	} {
		bad := shim.Functions()
		tc.change(&bad[len(bad)-1])
		if _, err := render(bad); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: render error %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}

func TestSignature(t *testing.T) {
	for name, want := range map[string]string{
		"memdecay_version": "memdecay_version()",
		"decay_tier":       "decay_tier(tags, category [, category_tiers])",
		"linear_weight":    "linear_weight(weight, rate, elapsed [, hold])",
		"lambda_edge":      "lambda_edge(tier_a, tier_b [, reinforcement_count [, established_threshold [, half_lives]]])",
	} {
		for _, f := range shim.Functions() {
			if f.Name == name {
				if got := signature(f); got != want {
					t.Errorf("signature(%s) = %q, want %q", name, got, want)
				}
			}
		}
	}
}
