package rqcluster

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// ModulePath is the module whose root RepoRoot looks for.
const ModulePath = "github.com/memdecay/memdecay"

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// Binaries returns the directory holding rqlited and rqlite. It is, in order:
//
//   - $RQLITE_BIN, a directory, when set;
//   - else the directory printed by the build script named by
//     $MEMDECAY_BUILD_RQLITED, when set;
//   - else the directory printed by <repository root>/../shared/tools/build-rqlited,
//     which builds rqlite once from a pinned source snapshot and caches it.
//
// The answer (or the error) is computed once per process.
func Binaries() (dir string, err error) {
	binOnce.Do(func() { binDir, binErr = findBinaries() })
	return binDir, binErr
}

func findBinaries() (string, error) {
	if dir := os.Getenv("RQLITE_BIN"); dir != "" {
		if err := checkBinaries(dir); err != nil {
			return "", fmt.Errorf("RQLITE_BIN=%s: %w", dir, err)
		}
		return dir, nil
	}
	script := os.Getenv("MEMDECAY_BUILD_RQLITED")
	how := "MEMDECAY_BUILD_RQLITED=" + script
	if script == "" {
		root, err := RepoRoot()
		if err != nil {
			return "", fmt.Errorf("RQLITE_BIN and MEMDECAY_BUILD_RQLITED are not set, and the build script beside the repository cannot be found: %w", err)
		}
		script = filepath.Join(filepath.Dir(root), "shared", "tools", "build-rqlited")
		how = "RQLITE_BIN and MEMDECAY_BUILD_RQLITED are not set; tried " + script
	}
	if _, err := os.Stat(script); err != nil {
		return "", fmt.Errorf("%s: %w", how, err)
	}
	dir, err := runBuildScript(script)
	if err != nil {
		return "", fmt.Errorf("%s: %w", how, err)
	}
	if err := checkBinaries(dir); err != nil {
		return "", fmt.Errorf("%s printed %s: %w", script, dir, err)
	}
	return dir, nil
}

// runBuildScript runs script and returns the last line it prints. Test
// binaries of several packages may ask at once; a lock file keeps them from
// building twice (the second waits and then finds the cached build).
func runBuildScript(script string) (string, error) {
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), "memdecay-build-rqlited.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err == nil {
		defer lock.Close()
		if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err == nil {
			defer func() { _ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) }()
		}
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(script)
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %v\n%s", script, err, tailLines(stderr.String(), 30))
	}
	var last string
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			last = line
		}
	}
	if last == "" {
		return "", fmt.Errorf("%s printed no directory", script)
	}
	return last, nil
}

func checkBinaries(dir string) error {
	for _, name := range []string{"rqlited", "rqlite"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if fi.IsDir() || fi.Mode()&0o111 == 0 {
			return fmt.Errorf("%s is not an executable file", filepath.Join(dir, name))
		}
	}
	return nil
}

// RepoRoot returns the repository's root: the nearest directory, from the
// working directory upwards, holding a go.mod of module ModulePath.
func RepoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && declaresModule(b, ModulePath) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of module %s in %s or any directory above it", ModulePath, wd)
		}
		dir = parent
	}
}

func declaresModule(gomod []byte, path string) bool {
	for _, line := range strings.Split(string(gomod), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "module" && strings.Trim(f[1], `"`) == path {
			return true
		}
	}
	return false
}

// Extension returns the memdecay.so to load into the nodes: $MEMDECAY_SO
// when set, else build/memdecay.so under the repository root. It is an
// error if the file does not exist.
func Extension() (string, error) {
	p := os.Getenv("MEMDECAY_SO")
	how := "MEMDECAY_SO=" + p
	if p == "" {
		root, err := RepoRoot()
		if err != nil {
			return "", fmt.Errorf("MEMDECAY_SO is not set and the repository root is unknown: %w", err)
		}
		p = filepath.Join(root, "build", "memdecay.so")
		how = "MEMDECAY_SO is not set; tried " + p
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("%s: %w", how, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("%s: no such file (run make build)", how)
		}
		return "", fmt.Errorf("%s: %w", how, err)
	}
	if fi.IsDir() {
		return "", fmt.Errorf("%s: is a directory", how)
	}
	return abs, nil
}

// tailLines returns the last n lines of s.
func tailLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	if n <= 0 || s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
