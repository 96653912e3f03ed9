//go:build dist

// These tests take up what make dist writes, as a user takes it up: the
// wheel installed into a fresh venv, the npm package into a fresh project,
// each loaded and queried (a function and a view); the linux/arm64 files run
// under qemu, the Windows library under wine. Run by make test-dist (part of
// make test), with MEMDECAY_DIST naming the dist directory.
package packaging

import (
	"archive/zip"
	"crypto/sha256"
	"debug/elf"
	"debug/pe"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
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
	mw := filepath.Join(distDir(t), "linux-amd64", "memworker")
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

// wheelFor is the path of the platform's wheel ("linux-amd64"), after
// checking its contents: the package, that platform's library alone,
// memworker as a script, and the manylinux tag of the binaries' glibc floor.
func wheelFor(t *testing.T, platform string) string {
	t.Helper()
	arch := map[string]string{"linux-amd64": "x86_64", "linux-arm64": "aarch64"}[platform]
	dir := filepath.Join(distDir(t), platform)
	tag := fmt.Sprintf("py3-none-manylinux_2_%d_%s", glibcFloor(t, filepath.Join(dir, "memdecay.so"), filepath.Join(dir, "memworker"))%1000, arch)
	wheel := filepath.Join(distDir(t), fmt.Sprintf("memdecay-%s-%s.whl", sqlfuncs.Version, tag))
	zr, err := zip.OpenReader(wheel)
	if err != nil {
		t.Fatalf("the %s wheel: %v", platform, err)
	}
	defer zr.Close()
	names := map[string]bool{}
	var wheelInfo string
	for _, f := range zr.File {
		names[f.Name] = true
		if strings.HasSuffix(f.Name, ".dist-info/WHEEL") {
			r, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(r)
			r.Close()
			wheelInfo = string(b)
		}
		if strings.HasSuffix(f.Name, "/scripts/memworker") && f.Mode()&0o111 == 0 {
			t.Errorf("%s: %s is not executable (%v)", filepath.Base(wheel), f.Name, f.Mode())
		}
	}
	info := fmt.Sprintf("memdecay-%s.dist-info/", sqlfuncs.Version)
	for _, want := range []string{"memdecay/__init__.py", "memdecay/_version.py", "memdecay/" + platform + "/memdecay.so",
		fmt.Sprintf("memdecay-%s.data/scripts/memworker", sqlfuncs.Version), info + "METADATA", info + "LICENSE", info + "RECORD"} {
		if !names[want] {
			t.Errorf("%s lacks %s", filepath.Base(wheel), want)
		}
	}
	for name := range names {
		if strings.HasSuffix(name, "/memdecay.so") && name != "memdecay/"+platform+"/memdecay.so" {
			t.Errorf("%s carries another platform's library: %s", filepath.Base(wheel), name)
		}
	}
	if !strings.Contains(wheelInfo, "Tag: "+tag+"\n") {
		t.Errorf("%s: WHEEL does not say Tag: %s:\n%s", filepath.Base(wheel), tag, wheelInfo)
	}
	return wheel
}

func TestWheel(t *testing.T) {
	wheel := wheelFor(t, "linux-amd64")

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
assert os.path.isabs(path) and path.endswith("/linux-amd64/memdecay.so"), path
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

# A machine the wheel has no library for is named, with the one it has.
import platform
platform.machine = lambda: "riscv64"
try:
    memdecay.loadable_path()
except FileNotFoundError as e:
    print(e)
`, sqlfuncs.Version, memoryFile(t), query)
	out := run(t, "", py, "-c", script)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 7 || lines[0] != answer {
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
	for _, want := range []string{"no bundled extension for linux-riscv64", "carries linux-amd64)"} {
		if !strings.Contains(lines[6], want) {
			t.Errorf("the error on a machine the wheel does not fit lacks %q: %s", want, lines[6])
		}
	}

	// memworker comes with the wheel, on the venv's PATH.
	if out := run(t, "", filepath.Join(venv, "bin", "memworker"), "version"); !strings.HasPrefix(out, "memworker "+sqlfuncs.Version+" ") {
		t.Errorf("memworker version from the wheel printed %q", out)
	}
}

// A real Python built without extension loading (pyenv's default build, on
// PATH on the machines here) gets the same error through the wheel.
func TestWheelOnPythonWithoutExtensions(t *testing.T) {
	py := pythonWithoutExtensions(t)
	target := t.TempDir()
	// Unpacked, not installed: that Python need not have pip's wheel tags.
	wheel := wheelFor(t, "linux-amd64")
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
	db := memoryFile(t)
	script := fmt.Sprintf(`
const Database = require('better-sqlite3');
const memdecay = require('memdecay');
const path = memdecay.getLoadablePath();
if (!path.endsWith('/lib/linux-amd64/memdecay.so')) throw new Error(path);
const db = new Database(%q);
memdecay.load(db);
console.log(db.prepare(%q).pluck().get());
try { memdecay.load({}); } catch (e) { console.log(e.message); }
`, db, query)
	if err := os.WriteFile(filepath.Join(project, "use.js"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	out := run(t, project, "node", "use.js")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || lines[0] != answer || !strings.Contains(lines[1], "better-sqlite3 Database") {
		t.Errorf("node with the package printed:\n%s\nwant %q and the error for a non-database", out, answer)
	}

	// The other platforms' choice, with process.platform and process.arch
	// set as node sets them there (node runs here as linux/x64 only); the
	// linux/arm64 library it picks is then loaded by an arm64 host.
	picked := func(platform, arch string) string {
		return strings.TrimSpace(run(t, project, "node", "-e", fmt.Sprintf(`
Object.defineProperty(process, 'platform', {value: %q});
Object.defineProperty(process, 'arch', {value: %q});
try { console.log(require('memdecay').getLoadablePath()); } catch (e) { console.log(e.message); }`, platform, arch)))
	}
	lib := filepath.Join(project, "node_modules", "memdecay", "lib")
	for _, tc := range []struct{ platform, arch, want string }{
		{"linux", "arm64", filepath.Join(lib, "linux-arm64", "memdecay.so")},
		{"win32", "x64", filepath.Join(lib, "windows-amd64", "memdecay.dll")},
		{"linux", "ppc64", "memdecay: no bundled extension for linux-ppc64; this package carries linux-x64, linux-arm64, win32-x64"},
		{"darwin", "arm64", "memdecay: no bundled extension for darwin-arm64; this package carries linux-x64, linux-arm64, win32-x64"},
	} {
		if got := picked(tc.platform, tc.arch); got != tc.want {
			t.Errorf("getLoadablePath on %s/%s: %q, want %q", tc.platform, tc.arch, got, tc.want)
		}
	}
	if got := loadArm64(t, db, filepath.Join(lib, "linux-arm64", "memdecay.so"), query); got != answer {
		t.Errorf("the npm package's linux-arm64 library, loaded on arm64, answered %q, want %q", got, answer)
	}
}

// The linux/arm64 wheel, installed as pip installs it for an arm64 machine
// (pip's --platform: this machine has no arm64 Python), then used as an
// arm64 machine uses it: memworker and the extension run under qemu, and
// memdecay.loadable_path() picks the arm64 library when the machine is
// aarch64.
func TestWheelArm64(t *testing.T) {
	wheel := wheelFor(t, "linux-arm64")
	floor := glibcFloor(t, filepath.Join(distDir(t), "linux-arm64", "memdecay.so"), filepath.Join(distDir(t), "linux-arm64", "memworker")) % 1000
	pip := func(target string, glibc int) error {
		cmd := exec.Command("/usr/bin/python3", "-m", "pip", "install", "--no-index", "--no-deps", "--quiet",
			"--target", target, "--only-binary=:all:", "--implementation", "cp", "--python-version", "3.11",
			"--platform", fmt.Sprintf("manylinux_2_%d_aarch64", glibc), wheel)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	}
	target := t.TempDir()
	if err := pip(target, floor); err != nil {
		t.Fatalf("pip install for manylinux_2_%d_aarch64: %v", floor, err)
	}
	// An older glibc is refused: the tag is the floor, not below it.
	if err := pip(t.TempDir(), floor-1); err == nil {
		t.Errorf("pip installed the arm64 wheel for glibc 2.%d, below the binaries' floor 2.%d", floor-1, floor)
	}

	memworker := filepath.Join(target, "bin", "memworker")
	if out := qemu(t, memworker, "version"); !strings.HasPrefix(out, "memworker "+sqlfuncs.Version+" ") {
		t.Errorf("the wheel's arm64 memworker version printed %q", out)
	}
	path := strings.TrimSpace(run(t, "", "/usr/bin/python3", "-c", fmt.Sprintf(`
import sys, platform
sys.path.insert(0, %q)
platform.machine = lambda: "aarch64"
import memdecay
print(memdecay.loadable_path())`, target)))
	if want := filepath.Join(target, "memdecay", "linux-arm64", "memdecay.so"); path != want {
		t.Fatalf("loadable_path on aarch64: %q, want %q", path, want)
	}
	if got := loadArm64(t, memoryFile(t), path, query); got != answer {
		t.Errorf("the arm64 wheel's library, loaded on arm64, answered %q, want %q", got, answer)
	}
}

// dist/linux-arm64 as it is: memworker builds a memory database and runs
// the demo under qemu, and an arm64 SQLite host loads memdecay.so and
// queries that database.
func TestLinuxArm64(t *testing.T) {
	dir := filepath.Join(distDir(t), "linux-arm64")
	for name, want := range map[string]elf.Machine{"memdecay.so": elf.EM_AARCH64, "memworker": elf.EM_AARCH64} {
		f, err := elf.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if f.Machine != want {
			t.Errorf("linux-arm64/%s is for %v", name, f.Machine)
		}
		f.Close()
	}
	db := filepath.Join(t.TempDir(), "demo.db")
	if out := qemu(t, filepath.Join(dir, "memworker"), "demo", "--db", db); !strings.Contains(out, "decayed") {
		t.Errorf("memworker demo on arm64 printed:\n%s", out)
	}
	got := loadArm64(t, db, filepath.Join(dir, "memdecay.so"), demoQuery)
	if want := amd64Answer(t, db); got != want {
		t.Errorf("the arm64 extension on the demo's database: %q; the amd64 extension: %q", got, want)
	}
	if got := loadArm64(t, memoryFile(t), filepath.Join(dir, "memdecay.so"), query); got != answer {
		t.Errorf("the arm64 extension answered %q, want %q", got, answer)
	}
}

// demoQuery reads the demo's graph through the extension's functions and
// views, for the same answer from amd64 and arm64.
const demoQuery = `SELECT count(*) || ' ' || printf('%.6f', sum(effective_weight)) FROM mem_edges_effective`

// amd64Answer answers demoQuery from the amd64 extension (the sqlite3 shell).
func amd64Answer(t *testing.T, db string) string {
	t.Helper()
	so := strings.TrimSuffix(filepath.Join(distDir(t), "linux-amd64", "memdecay.so"), ".so")
	return strings.TrimSpace(run(t, "", "sqlite3", "-cmd", ".load "+so, db, demoQuery))
}

// memdecay.dll loaded by a Windows SQLite host under wine, and queried.
func TestWindowsAmd64(t *testing.T) {
	dll := filepath.Join(distDir(t), "windows-amd64", "memdecay.dll")
	f, err := pe.Open(dll)
	if err != nil {
		t.Fatal(err)
	}
	if f.Machine != pe.IMAGE_FILE_MACHINE_AMD64 || f.Characteristics&pe.IMAGE_FILE_DLL == 0 {
		t.Errorf("memdecay.dll: machine %#x, characteristics %#x; want an amd64 DLL", f.Machine, f.Characteristics)
	}
	for _, s := range f.Sections {
		if strings.HasPrefix(s.Name, ".debug") || strings.HasPrefix(s.Name, "/") {
			t.Errorf("memdecay.dll is not stripped: section %s", s.Name)
		}
	}
	f.Close()

	wine, err := exec.LookPath("wine64")
	if err != nil {
		wine = "/usr/lib/wine/wine64" // Debian's wine64 without the wine package
	}
	if _, err := os.Stat(wine); err != nil {
		t.Fatalf("wine64: %v (apt-get install -y wine64; make prereqs)", err)
	}
	work := t.TempDir()
	host := filepath.Join(work, "loadext.exe")
	amalgamation := mattnDir(t)
	run(t, "", "x86_64-w64-mingw32-gcc", "-O0", "-DSQLITE_THREADSAFE=0", "-I", amalgamation, "-o", host,
		filepath.Join("testdata", "loadext.c"), filepath.Join(amalgamation, "sqlite3-binding.c"))
	prng := filepath.Join(work, "bcryptprimitives.dll")
	run(t, "", "x86_64-w64-mingw32-gcc", "-shared", "-O2", "-o", prng, filepath.Join("testdata", "processprng.c"), "-ladvapi32")

	prefix := filepath.Join(work, "prefix")
	wineRun := func(args ...string) (string, error) {
		cmd := exec.Command(wine, args...)
		cmd.Env = append(os.Environ(), "WINEPREFIX="+prefix, "WINEDEBUG=-all", "WINEDLLOVERRIDES=mscoree,mshtml=", "DISPLAY=")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := wineRun("wineboot", "--init"); err != nil {
		t.Fatalf("wineboot: %v\n%s", err, out)
	}
	data, err := os.ReadFile(prng)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(prefix, "drive_c", "windows", "system32", "bcryptprimitives.dll"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	// Under wine, / is drive Z:.
	out, err := wineRun(host, "Z:"+memoryFile(t), "Z:"+dll, query)
	if err != nil || strings.TrimSpace(out) != answer {
		t.Errorf("loadext.exe under wine: %v\n%s\nwant %q", err, out, answer)
	}
}

// TestLayout: dist/ holds these files and no others, and SHA256SUMS gives
// each one's sum, in sha256sum's format.
func TestLayout(t *testing.T) {
	dist := distDir(t)
	v := sqlfuncs.Version
	amd64, arm64 := dist+"/linux-amd64/", dist+"/linux-arm64/"
	want := []string{
		"SHA256SUMS",
		"linux-amd64/memdecay.so", "linux-amd64/memworker",
		"linux-arm64/memdecay.so", "linux-arm64/memworker",
		fmt.Sprintf("memdecay-%s-py3-none-manylinux_2_%d_aarch64.whl", v, glibcFloor(t, arm64+"memdecay.so", arm64+"memworker")%1000),
		fmt.Sprintf("memdecay-%s-py3-none-manylinux_2_%d_x86_64.whl", v, glibcFloor(t, amd64+"memdecay.so", amd64+"memworker")%1000),
		fmt.Sprintf("memdecay-%s.tgz", v),
		"windows-amd64/memdecay.dll",
	}
	var got []string
	err := filepath.WalkDir(dist, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dist, path)
			got = append(got, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("dist/ holds:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, line := range strings.Split(strings.TrimSuffix(string(sums), "\n"), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("SHA256SUMS: %q is not in sha256sum's format", line)
		}
		data, err := os.ReadFile(filepath.Join(dist, name))
		if err != nil {
			t.Errorf("SHA256SUMS names %s: %v", name, err)
			continue
		}
		if h := sha256.Sum256(data); hex.EncodeToString(h[:]) != sum {
			t.Errorf("SHA256SUMS: %s has another sum", name)
		}
		listed = append(listed, name)
	}
	if strings.Join(listed, "\n") != strings.Join(want[1:], "\n") {
		t.Errorf("SHA256SUMS lists:\n%s\nwant:\n%s", strings.Join(listed, "\n"), strings.Join(want[1:], "\n"))
	}
}

// The binaries are stripped, and the READMEs state the lowest glibc they
// need, as read from their dynamic symbols (the same on amd64 and arm64).
func TestStrippedAndGlibc(t *testing.T) {
	dist := distDir(t)
	floors := map[int][]string{}
	for _, platform := range []string{"linux-amd64", "linux-arm64"} {
		var files []string
		for _, name := range []string{"memdecay.so", "memworker"} {
			path := filepath.Join(dist, platform, name)
			f, err := elf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if f.Section(".symtab") != nil || f.Section(".debug_info") != nil {
				t.Errorf("%s/%s is not stripped", platform, name)
			}
			f.Close()
			files = append(files, path)
		}
		n := glibcFloor(t, files...)
		floors[n] = append(floors[n], platform)
	}
	if len(floors) != 1 {
		t.Fatalf("the platforms need different glibc floors (%v): the READMEs must say which needs which", floors)
	}
	var need int
	for n := range floors {
		need = n
	}
	want := fmt.Sprintf("glibc %d.%d", need/1000, need%1000)
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

// glibcFloor is the highest GLIBC_x.y symbol version the ELF files import,
// as x*1000+y: the lowest glibc they run on.
func glibcFloor(t *testing.T, files ...string) int {
	t.Helper()
	need := 0
	for _, path := range files {
		f, err := elf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		syms, err := f.ImportedSymbols()
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, s := range syms {
			if v, ok := strings.CutPrefix(s.Version, "GLIBC_"); ok {
				need = max(need, glibcNumber(v))
			}
		}
	}
	if need == 0 {
		t.Fatalf("no glibc symbol versions found in %v", files)
	}
	return need
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

// qemu runs a linux/arm64 program against the cross C library.
func qemu(t *testing.T, program string, args ...string) string {
	t.Helper()
	return run(t, "", "qemu-aarch64-static", append([]string{"-L", "/usr/aarch64-linux-gnu", program}, args...)...)
}

// mattnDir is mattn/go-sqlite3's module directory: its sqlite3-binding.c is
// SQLite's amalgamation, the SQLite the cross-built hosts link.
func mattnDir(t *testing.T) string {
	t.Helper()
	return strings.TrimSpace(run(t, "..", "go", "list", "-m", "-f", "{{.Dir}}", "github.com/mattn/go-sqlite3"))
}

var arm64Host string

// loadArm64 loads the linux/arm64 extension into an arm64 SQLite host (our
// testdata/loadext.c, cross-built once) under qemu and answers sql on db.
func loadArm64(t *testing.T, db, extension, sql string) string {
	t.Helper()
	if arm64Host == "" {
		dir, err := os.MkdirTemp("", "memdecay-loadext")
		if err != nil {
			t.Fatal(err)
		}
		amalgamation := mattnDir(t)
		host := filepath.Join(dir, "loadext")
		run(t, "", "aarch64-linux-gnu-gcc", "-O0", "-DSQLITE_THREADSAFE=0", "-I", amalgamation, "-o", host,
			filepath.Join("testdata", "loadext.c"), filepath.Join(amalgamation, "sqlite3-binding.c"), "-ldl", "-lm")
		arm64Host = host
	}
	return strings.TrimSpace(qemu(t, arm64Host, db, extension, sql))
}

func TestMain(m *testing.M) {
	code := m.Run()
	if arm64Host != "" {
		os.RemoveAll(filepath.Dir(arm64Host))
	}
	os.Exit(code)
}
