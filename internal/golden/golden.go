// Package golden compares what a test produced with a golden file in
// testdata/, or rewrites that file when the test is run to update it.
package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Check compares got with file, or writes got to file when update is set.
// A difference is reported at its first line, with how to accept it (how);
// whole adds all of got to the report.
func Check(t testing.TB, file, got string, update, whole bool, how string) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (%s writes it)", err, how)
	}
	want := string(b)
	if got == want {
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	i := 0
	for i < len(gl) && i < len(wl) && gl[i] == wl[i] {
		i++
	}
	line := func(l []string) string {
		if i < len(l) {
			return l[i]
		}
		return "(end of output)"
	}
	all := ""
	if whole {
		all = "the whole output:\n" + got
	}
	t.Errorf("%s differs at line %d:\n want: %s\n got:  %s\n%s(if the change is meant: %s)", file, i+1, line(wl), line(gl), all, how)
}
