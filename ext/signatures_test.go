package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/ext/shim"
)

// Each function's signature is written once, in the registry: the docs'
// headings and the sqlfuncs package comment must say exactly that.
func TestSignaturesMatchTheRegistry(t *testing.T) {
	want := map[string]string{}
	for _, f := range shim.Functions() {
		want[f.Name] = f.Signature()
	}
	heading := regexp.MustCompile("`([a-z_]+)\\(([^`]*)\\)`")
	documented := map[string]bool{}
	for _, p := range readDocPages(t) {
		for _, l := range p.lines {
			if !strings.HasPrefix(l, "## ") {
				continue
			}
			for _, m := range heading.FindAllStringSubmatch(l, -1) {
				sig, ok := want[m[1]]
				if !ok {
					continue // a command or a view, not a function
				}
				documented[m[1]] = true
				if got := m[1] + "(" + m[2] + ")"; got != sig {
					t.Errorf("%s: heading %s, the registry says %s", p.name, got, sig)
				}
			}
		}
	}
	for name, sig := range want {
		if !documented[name] && name != "memdecay_version" && name != "memdecay_debug" {
			t.Errorf("no docs page has a heading for %s", sig)
		}
	}

	text, err := os.ReadFile("../sqlfuncs/doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, l := range strings.Split(string(text), "\n") {
		if sig, ok := strings.CutPrefix(l, "//\t"); ok {
			listed = append(listed, sig)
		}
	}
	var block strings.Builder
	for _, f := range shim.Functions() {
		block.WriteString("//\t" + f.Signature() + "\n")
	}
	if strings.Join(listed, "\n")+"\n" != strings.ReplaceAll(block.String(), "//\t", "") {
		t.Errorf("sqlfuncs/doc.go lists the signatures\n%s\nthe registry's, in its order, are\n%s", strings.Join(listed, "\n"), block.String())
	}
}
