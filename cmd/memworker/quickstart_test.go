package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// quickstartPage is the quickstart a newcomer follows, run as written.
const quickstartPage = "../../docs/quickstart-app-tables.md"

// quickstartStep is one command of the page's shell blocks and the lines
// it must print (the "# " lines under it; one ending in " …" is a
// prefix).
type quickstartStep struct {
	command []string
	want    []string
}

// quickstartBlocks are the page's ```sh steps, after the first block
// (which builds and sets PATH: the test does both itself), and its
// ```toml block, the mapping file.
func quickstartBlocks(t *testing.T) (steps []quickstartStep, toml string) {
	t.Helper()
	text, err := os.ReadFile(quickstartPage)
	if err != nil {
		t.Fatal(err)
	}
	var block string
	var lines []string
	shBlocks := 0
	for _, line := range strings.Split(string(text), "\n") {
		switch {
		case block == "" && (line == "```sh" || line == "```toml"):
			block, lines = strings.TrimPrefix(line, "```"), nil
		case block != "" && line == "```":
			if block == "toml" {
				toml = strings.Join(lines, "\n") + "\n"
			} else if shBlocks++; shBlocks > 1 {
				steps = append(steps, splitSteps(lines)...)
			}
			block = ""
		case block != "":
			lines = append(lines, line)
		}
	}
	if len(steps) < 8 || toml == "" {
		t.Fatalf("%s: %d shell steps and a toml block of %d bytes; the page changed shape", quickstartPage, len(steps), len(toml))
	}
	return steps, toml
}

// splitSteps splits a shell block into commands, each with the "# " lines
// that follow it.
func splitSteps(lines []string) []quickstartStep {
	var steps []quickstartStep
	var cur quickstartStep
	for _, l := range lines {
		if out, ok := strings.CutPrefix(l, "# "); ok {
			cur.want = append(cur.want, out)
			continue
		}
		if len(cur.want) > 0 {
			steps, cur = append(steps, cur), quickstartStep{}
		}
		cur.command = append(cur.command, l)
	}
	if len(cur.command) > 0 {
		steps = append(steps, cur)
	}
	return steps
}

// TestQuickstartAsWritten runs the app-tables quickstart as a newcomer
// does: its shell commands, in a fresh directory, with memworker and the
// extension on PATH, its mapping file as the page gives it; each prints
// the lines the page says, in order.
func TestQuickstartAsWritten(t *testing.T) {
	so := os.Getenv("MEMDECAY_SO")
	if so == "" {
		t.Fatal("MEMDECAY_SO is not set (make unit sets it)")
	}
	steps, toml := quickstartBlocks(t)
	bin := t.TempDir() // the page's build/: memworker beside memdecay.so
	if err := os.Symlink(binary(t), filepath.Join(bin, "memworker")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(so, filepath.Join(bin, "memdecay.so")); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "memory.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		script := strings.Join(s.command, "\n")
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
		out, err := cmd.Output()
		if err != nil {
			stderr := ""
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("the quickstart's\n%s\nfailed: %v\n%s%s", script, err, out, stderr)
		}
		got := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		i := 0
		for _, want := range s.want {
			for i < len(got) && !quickstartLineMatches(got[i], want) {
				i++
			}
			if i == len(got) {
				t.Errorf("the quickstart's\n%s\nprinted\n%s\nwithout the line (in order)\n%s", script, out, want)
				break
			}
			i++
		}
	}
}

// quickstartLineMatches says whether a printed line is the page's line:
// the same, or for a line ending in " …", starting with what comes
// before it.
func quickstartLineMatches(got, want string) bool {
	if prefix, ok := strings.CutSuffix(want, " …"); ok {
		return strings.HasPrefix(got, prefix)
	}
	return got == want
}
