package packaging

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pathWithout is a PATH holding only the commands dist.sh reads before it
// checks its tools: the cross compilers, readelf and npm are not on it.
func pathWithout(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, c := range []string{"bash", "sed", "uname", "mktemp", "rm", "mkdir", "dirname"} {
		p, err := exec.LookPath(c)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if err := os.Symlink(p, filepath.Join(dir, c)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// distWith runs dist.sh in mode with PATH path; it must fail before it
// builds or removes anything.
func distWith(t *testing.T, path, mode string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(path, "bash"), "dist.sh", mode)
	cmd.Env = append(os.Environ(), "PATH="+path)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("dist.sh %s without its tools succeeded:\n%s", mode, out)
	}
	return string(out)
}

// TestDistNamesEveryMissingTool: make dist names every missing tool, and
// the Debian packages that bring them, in one message; make wheel and
// make npm need no cross compiler.
func TestDistNamesEveryMissingTool(t *testing.T) {
	path := pathWithout(t)
	all := distWith(t, path, "all")
	if strings.Count(all, "\n") != 1 {
		t.Errorf("make dist said more than one line:\n%s", all)
	}
	for _, want := range []string{"aarch64-linux-gnu-gcc", "x86_64-w64-mingw32-gcc", "readelf", "npm",
		"gcc-aarch64-linux-gnu", "libc6-dev-arm64-cross", "gcc-mingw-w64-x86-64", "binutils"} {
		if !strings.Contains(all, want) {
			t.Errorf("make dist's message does not name %s:\n%s", want, all)
		}
	}
	for _, mode := range []string{"wheel", "npm"} {
		msg := distWith(t, path, mode)
		if strings.Contains(msg, "aarch64") || strings.Contains(msg, "mingw") {
			t.Errorf("make %s asks for a cross compiler:\n%s", mode, msg)
		}
		if !strings.HasPrefix(msg, "make "+mode+": missing ") {
			t.Errorf("make %s: %s", mode, msg)
		}
	}
}
