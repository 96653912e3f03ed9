//go:build dist

// These tests take up what make dist writes, as a user takes it up: the
// wheel installed into a fresh venv, the npm package into a fresh project,
// each loaded and queried (a function and a view). Run by make test-dist
// (part of make test), with MEMDECAY_DIST naming the dist directory.
package packaging

import (
	"archive/zip"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/sqlfuncs"
)

func distDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("MEMDECAY_DIST")
	if dir == "" {
		t.Fatal("MEMDECAY_DIST is not set: run make test-dist")
	}
	return dir
}

func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// memoryFile is a memory database made by the packaged memworker, with one
// edge, for the packages' view queries.
func memoryFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "memory.db")
	mw := filepath.Join(distDir(t), "memworker")
	run(t, "", mw, "migrate", "up", "--db", path)
	run(t, "", "sqlite3", path, `INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES ('a', 'knowledge', 0), ('b', 'knowledge', 0);
		INSERT INTO mem_edges (from_id, to_id, weight, last_active_hours) VALUES ('a', 'b', 0.5, 0);
		UPDATE mem_config SET value = 500 WHERE key = 'active_hours';`)
	return path
}

// The query both packages run, and its answer: a function, and a view that
// needs the extension.
const (
	query  = `SELECT decay_tier('["self/goal"]', 'observation') || ' ' || printf('%.4f', effective_weight(0.5, 0.005, 500)) || ' ' || (SELECT printf('%.4f', effective_weight) FROM mem_edges_effective)`
	answer = "durable 0.0410 0.0410"
)

func TestWheel(t *testing.T) {
	dist := distDir(t)
	wheel := filepath.Join(dist, fmt.Sprintf("memdecay-%s-py3-none-linux_x86_64.whl", sqlfuncs.Version))
	zr, err := zip.OpenReader(wheel)
	if err != nil {
		t.Fatalf("the wheel: %v", err)
	}
	names := map[string]bool{}
	for _, f := range zr.File {
		names[f.Name] = true
	}
	zr.Close()
	info := fmt.Sprintf("memdecay-%s.dist-info/", sqlfuncs.Version)
	for _, want := range []string{"memdecay/__init__.py", "memdecay/_version.py", "memdecay/memdecay.so", info + "METADATA", info + "LICENSE"} {
		if !names[want] {
			t.Errorf("the wheel lacks %s", want)
		}
	}

	venv := filepath.Join(t.TempDir(), "venv")
	run(t, "", "/usr/bin/python3", "-m", "venv", venv)
	py := filepath.Join(venv, "bin", "python")
	run(t, "", py, "-m", "pip", "install", "--no-index", "--quiet", wheel)
	meta := run(t, "", py, "-m", "pip", "show", "memdecay")
	for _, want := range []string{"Version: " + sqlfuncs.Version, "License: MIT"} {
		if !strings.Contains(meta, want) {
			t.Errorf("pip show memdecay lacks %q:\n%s", want, meta)
		}
	}
	script := fmt.Sprintf(`
import os, sqlite3, memdecay
path = memdecay.loadable_path()
assert os.path.isabs(path) and path.endswith("memdecay.so"), path
assert memdecay.__version__ == %q, memdecay.__version__
conn = sqlite3.connect(%q)
memdecay.load(conn)
print(conn.execute(%q).fetchone()[0])

# Extension loading is left as it was: the method and the SQL function each
# refuse a file that does not exist with "not authorized" when off.
def state(conn):
    said = []
    for name, load in (("method", conn.load_extension),
                       ("sql", lambda p: conn.execute("SELECT load_extension(?)", (p,)))):
        try:
            load("/nonexistent/probe")
        except sqlite3.OperationalError as e:
            said.append(name + ("=off" if "not authorized" in str(e) else "=on"))
    return " ".join(said)
for setup in ("fresh", "on", "off"):
    c = sqlite3.connect(":memory:")
    if setup != "fresh":
        c.enable_load_extension(setup == "on")
    before = state(c)
    memdecay.load(c)
    print("%%s: %%s -> %%s" %% (setup, before, state(c)))
# A load that fails switches loading off again too.
c = sqlite3.connect(":memory:")
c.enable_load_extension(False)
found = memdecay.loadable_path
memdecay.loadable_path = lambda: "/nonexistent/memdecay.so"
try:
    memdecay.load(c)
except RuntimeError:
    pass
memdecay.loadable_path = found
print("failed: %%s" %% state(c))

# A Python whose sqlite3 cannot load extensions gets the cause and the remedy.
class NoExtensions:
    pass
try:
    memdecay.load(NoExtensions())
except RuntimeError as e:
    print(e)
`, sqlfuncs.Version, memoryFile(t), query)
	out := run(t, "", py, "-c", script)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 6 || lines[0] != answer {
		t.Fatalf("python with the wheel printed:\n%s\nwant %q, the loading states and the error", out, answer)
	}
	// Debian's SQLite lets the method load on a fresh connection; the SQL
	// function is off until the app switches loading on.
	for i, want := range []string{
		"fresh: method=on sql=off -> method=on sql=off",
		"on: method=on sql=on -> method=on sql=on",
		"off: method=off sql=off -> method=off sql=off",
		"failed: method=off sql=off",
	} {
		if got := lines[1+i]; got != want {
			t.Errorf("extension loading before -> after memdecay.load: got %q, want %q", got, want)
		}
	}
	for _, want := range []string{"memdecay.load", "cannot load extensions", "--enable-loadable-sqlite-extensions", "/usr/bin/python3"} {
		if !strings.Contains(lines[5], want) {
			t.Errorf("the error for a Python without extension loading lacks %q: %s", want, lines[5])
		}
	}
}

// A real Python built without extension loading (pyenv's default build, on
// PATH on the machines here) gets the same error through the wheel.
func TestWheelOnPythonWithoutExtensions(t *testing.T) {
	py := pythonWithoutExtensions(t)
	target := t.TempDir()
	// Unpacked, not installed: that Python need not have pip's wheel tags.
	wheel := filepath.Join(distDir(t), fmt.Sprintf("memdecay-%s-py3-none-linux_x86_64.whl", sqlfuncs.Version))
	run(t, target, "/usr/bin/python3", "-c", fmt.Sprintf("import zipfile; zipfile.ZipFile(%q).extractall('.')", wheel))
	out := run(t, target, py, "-c", `
import sqlite3, memdecay
try:
    memdecay.load(sqlite3.connect(":memory:"))
    print("loaded")
except RuntimeError as e:
    print(e)`)
	if !strings.Contains(out, "cannot load extensions") || !strings.Contains(out, "--enable-loadable-sqlite-extensions") {
		t.Errorf("%s with the wheel printed %q, want the cause and the remedy", py, out)
	}
}

// pythonWithoutExtensions finds a python3 whose sqlite3 lacks
// enable_load_extension, building none: the test machines carry pyenv's.
func pythonWithoutExtensions(t *testing.T) string {
	t.Helper()
	var tried []string
	candidates, _ := filepath.Glob(filepath.Join(os.Getenv("HOME"), ".pyenv", "versions", "*", "bin", "python3"))
	if p, err := exec.LookPath("python3"); err == nil {
		candidates = append([]string{p}, candidates...)
	}
	for _, p := range candidates {
		out, err := exec.Command(p, "-c", "import sqlite3; print(hasattr(sqlite3.Connection, 'enable_load_extension'))").Output()
		if err == nil && strings.TrimSpace(string(out)) == "False" {
			return p
		}
		tried = append(tried, p)
	}
	t.Fatalf("no python3 without extension loading found (tried %v): install one, e.g. pyenv's default build", tried)
	return ""
}

func TestNpmPackage(t *testing.T) {
	tgz := filepath.Join(distDir(t), fmt.Sprintf("memdecay-%s.tgz", sqlfuncs.Version))
	if _, err := os.Stat(tgz); err != nil {
		t.Fatal(err)
	}
	project := t.TempDir()
	run(t, project, "npm", "init", "-y")
	run(t, project, "npm", "install", "--no-audit", "--no-fund", tgz, "better-sqlite3")
	pkg := run(t, project, "node", "-p", "JSON.stringify(require('memdecay/package.json'))")
	for _, want := range []string{`"license":"MIT"`, `"version":"` + sqlfuncs.Version + `"`} {
		if !strings.Contains(pkg, want) {
			t.Errorf("the npm package's package.json lacks %s: %s", want, pkg)
		}
	}
	script := fmt.Sprintf(`
const Database = require('better-sqlite3');
const memdecay = require('memdecay');
const path = memdecay.getLoadablePath();
if (!path.endsWith('/memdecay.so')) throw new Error(path);
const db = new Database(%q);
memdecay.load(db);
console.log(db.prepare(%q).pluck().get());
try { memdecay.load({}); } catch (e) { console.log(e.message); }
`, memoryFile(t), query)
	if err := os.WriteFile(filepath.Join(project, "use.js"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	out := run(t, project, "node", "use.js")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || lines[0] != answer || !strings.Contains(lines[1], "better-sqlite3 Database") {
		t.Errorf("node with the package printed:\n%s\nwant %q and the error for a non-database", out, answer)
	}
}

// The binaries are stripped, and the README states the lowest glibc they
// need, as read from their dynamic symbols.
func TestStrippedAndGlibc(t *testing.T) {
	dist := distDir(t)
	var need []int
	for _, name := range []string{"memdecay.so", "memworker"} {
		f, err := elf.Open(filepath.Join(dist, name))
		if err != nil {
			t.Fatal(err)
		}
		if f.Section(".symtab") != nil || f.Section(".debug_info") != nil {
			t.Errorf("%s is not stripped", name)
		}
		syms, err := f.ImportedSymbols()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range syms {
			if v, ok := strings.CutPrefix(s.Version, "GLIBC_"); ok {
				if n := glibcNumber(v); n > 0 && (need == nil || n > need[0]) {
					need = []int{n}
				}
			}
		}
		f.Close()
	}
	if need == nil {
		t.Fatal("no glibc symbol versions found")
	}
	want := fmt.Sprintf("glibc %d.%d", need[0]/1000, need[0]%1000)
	for _, readme := range []string{"../README.md", "python/README.md", "npm/README.md"} {
		text, err := os.ReadFile(readme)
		if err != nil {
			t.Fatal(err)
		}
		stated := regexp.MustCompile(`glibc \d+\.\d+`).FindAllString(string(text), -1)
		if len(stated) == 0 {
			t.Errorf("%s does not state the lowest glibc (%s)", readme, want)
		}
		for _, s := range stated {
			if s != want {
				t.Errorf("%s says %q; the binaries need %s", readme, s, want)
			}
		}
	}
}

// glibcNumber turns "2.34" into 2034.
func glibcNumber(v string) int {
	major, minor, _ := strings.Cut(v, ".")
	minor, _, _ = strings.Cut(minor, ".")
	a, err1 := strconv.Atoi(major)
	b, err2 := strconv.Atoi(minor)
	if err1 != nil || err2 != nil {
		return 0
	}
	return a*1000 + b
}
