// Package scripts holds the project's shell scripts; its tests run them as
// make test and .ci/run do.
package scripts

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// stub writes an executable shell script named name into dir.
func stub(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// prereqsRun runs prereqs.sh with args and env from a directory that holds
// the project's build/ folder with a Python package of that name in it, on a
// machine where Debian's python3-build and g++ are missing: python3 is the
// real one but for -m build, and g++ fails. apt-get and sudo only record
// their arguments, in the file it returns.
func prereqsRun(t *testing.T, env []string, args ...string) (stderr string, err error, calls string) {
	t.Helper()
	script, err := filepath.Abs("prereqs.sh")
	if err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cwd, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cwd, "build", "__init__.py"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	// From cwd, "import build" would find the build/ folder and pass.
	py := stub(t, bin, "python3", `if [ "$1" = -m ] && [ "$2" = build ]; then echo "python3: No module named build" >&2; exit 1; fi
exec /usr/bin/python3 "$@"`)
	stub(t, bin, "g++", "exit 127")
	calls = filepath.Join(t.TempDir(), "calls")
	for _, name := range []string{"apt-get", "sudo"} {
		stub(t, bin, name, `echo "`+name+` DEBIAN_FRONTEND=$DEBIAN_FRONTEND $*" >>`+calls)
	}

	cmd := exec.Command("bash", append([]string{script}, args...)...)
	cmd.Dir = cwd
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "MEMDECAY_PYTHON="+py, "MEMDECAY_NO_INSTALL=", "DEBIAN_FRONTEND=")
	cmd.Env = append(cmd.Env, env...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err = cmd.Run()
	return out.String(), err, calls
}

// Checking only, the script names every missing package and the command
// that installs them, on one line, and installs nothing.
func TestPrereqsCheckOnlyNamesTheMissingPackages(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
		args []string
	}{
		{"flag", nil, []string{"--check-only"}},
		{"env", []string{"MEMDECAY_NO_INSTALL=1"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err, calls := prereqsRun(t, tc.env, tc.args...)
			if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 {
				t.Fatalf("prereqs.sh: %v, want exit status 1\n%s", err, out)
			}
			if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 1 {
				t.Errorf("prereqs.sh printed %d lines, want one:\n%s", len(lines), out)
			}
			for _, want := range []string{"python3-build", "g++", "apt-get install -y --no-install-recommends "} {
				if !strings.Contains(out, want) {
					t.Errorf("prereqs.sh printed %q, want it to name %q", out, want)
				}
			}
			if strings.Contains(out, "python3-wheel") || strings.Contains(out, "python3-venv") {
				t.Errorf("prereqs.sh names a package that is there: %q", out)
			}
			if data, err := os.ReadFile(calls); err == nil {
				t.Errorf("checking only, prereqs.sh ran:\n%s", data)
			}
		})
	}
}

// As root, the script installs exactly the missing packages, without
// questions, and fails if they still are missing after.
func TestPrereqsInstallsAsRoot(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("installs only as root")
	}
	out, err, calls := prereqsRun(t, nil)
	if err == nil {
		t.Fatalf("prereqs.sh passed, though the install (a stub) added nothing:\n%s", out)
	}
	data, _ := os.ReadFile(calls)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "apt-get DEBIAN_FRONTEND= update") ||
		!strings.HasPrefix(lines[1], "apt-get DEBIAN_FRONTEND=noninteractive install -y --no-install-recommends ") ||
		!strings.Contains(lines[1], " python3-build") || !strings.Contains(lines[1], " g++") {
		t.Errorf("prereqs.sh ran:\n%s\nwant apt-get update, then apt-get install of python3-build and g++", data)
	}
	if !strings.Contains(out, "python3-build") {
		t.Errorf("after an install that added nothing, prereqs.sh printed %q, want python3-build named", out)
	}
}
