package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/ext/shim"
)

// The pages in docs/ are tested as they are read. Every ```sql block of a
// page is a list of examples: SQL, then the shell's output, one line per
// `-- → ` line, or `-- → error: <part of the message>`. A ```sql setup
// block runs without a result to check. Each page runs in one sqlite3
// shell process, in the order it is written, on a fresh file that the
// worker's migrations installed, with the extension loaded and
// `.nullvalue NULL` (list mode otherwise, as the shell starts).

var updateDocs = flag.Bool("update-docs", false, "rewrite the results of the examples in docs/*.md from the sqlite3 shell's output")

// docsDir is docs/ at the module root, seen from ext/.
const docsDir = "../docs"

// docsPages are the pages docs/ must hold; any other page is tested too.
var docsPages = []string{"tiers-and-edges.md", "curves.md", "facts.md", "graph-scores.md",
	"policies.md", "schema.md", "running.md", "sweep.md", "mapping.md", "quickstart-app-tables.md", "design.md"}

const resultMark = "-- → "

// docChunk is one example (SQL and the lines it must print) or one setup
// block.
type docChunk struct {
	line    int      // line of the page where its SQL starts (1-based)
	sql     []string // its SQL lines, comments included
	want    []string // expected output lines
	wantErr string   // expected part of an error message
	setup   bool
	results [2]int // the page's result lines [from, to) (0-based), for -update-docs
}

func (c *docChunk) isExample() bool { return !c.setup }

// docPage is one page and its chunks.
type docPage struct {
	name   string
	lines  []string
	chunks []*docChunk
}

var sqlFence = regexp.MustCompile("^```sql(?:[ \t]+(setup))?[ \t]*$")

// parseDocPage splits a page's ```sql blocks into chunks. It fails on SQL
// that has no result line, a result line with no SQL before it, and a
// setup block that holds a result line.
func parseDocPage(name, text string) (*docPage, error) {
	p := &docPage{name: name, lines: strings.Split(text, "\n")}
	var (
		inFence, inSQL, setup bool
		cur                   *docChunk
	)
	// flush closes the chunk in progress; SQL with nothing but blanks and
	// comments is not a chunk.
	flush := func() error {
		if cur == nil {
			return nil
		}
		c := cur
		cur = nil
		if c.results[1] == 0 && !c.setup {
			if strings.TrimSpace(stripComments(c.sql)) == "" {
				return nil
			}
			return fmt.Errorf("%s:%d: SQL without a result line (%q…) — write one, or put it in a ```sql setup block", name, c.line, resultMark)
		}
		p.chunks = append(p.chunks, c)
		return nil
	}
	for i, line := range p.lines {
		trimmed := strings.TrimSpace(line)
		switch {
		case !inFence && strings.HasPrefix(trimmed, "```"):
			inFence = true
			if m := sqlFence.FindStringSubmatch(trimmed); m != nil {
				inSQL, setup = true, m[1] == "setup"
			} else if strings.HasPrefix(trimmed, "```sql") {
				return nil, fmt.Errorf("%s:%d: unknown block %q (want ```sql or ```sql setup)", name, i+1, trimmed)
			}
			continue
		case inFence && trimmed == "```":
			if inSQL {
				if err := flush(); err != nil {
					return nil, err
				}
			}
			inFence, inSQL = false, false
			continue
		case !inSQL:
			continue
		}
		isResult := strings.HasPrefix(line, strings.TrimSpace(resultMark))
		if isResult && setup {
			return nil, fmt.Errorf("%s:%d: a setup block has no results", name, i+1)
		}
		if isResult {
			if cur == nil || len(cur.sql) == 0 {
				return nil, fmt.Errorf("%s:%d: a result line with no SQL before it", name, i+1)
			}
			value := strings.TrimPrefix(strings.TrimPrefix(line, strings.TrimSpace(resultMark)), " ")
			if cur.results[1] == 0 {
				cur.results[0] = i
			}
			cur.results[1] = i + 1
			if msg, ok := strings.CutPrefix(value, "error: "); ok && len(cur.want) == 0 && cur.wantErr == "" {
				cur.wantErr = msg
			} else if cur.wantErr != "" {
				return nil, fmt.Errorf("%s:%d: an error result stands alone", name, i+1)
			} else {
				cur.want = append(cur.want, value)
			}
			continue
		}
		if cur != nil && cur.results[1] != 0 { // SQL after results: the next example
			if err := flush(); err != nil {
				return nil, err
			}
		}
		if cur == nil {
			if trimmed == "" && !setup {
				continue // blank lines between examples
			}
			cur = &docChunk{line: i + 1, setup: setup}
		}
		cur.sql = append(cur.sql, line)
	}
	if inFence {
		return nil, fmt.Errorf("%s: a ``` block is not closed", name)
	}
	return p, nil
}

// stripComments drops the lines that are only a -- comment.
func stripComments(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		if !strings.HasPrefix(strings.TrimSpace(l), "--") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func readDocPages(t *testing.T) []*docPage {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(docsDir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range docsPages {
		if !slices.Contains(names, filepath.Join(docsDir, want)) {
			t.Errorf("docs/%s is missing", want)
		}
	}
	var pages []*docPage
	for _, path := range names {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		p, err := parseDocPage("docs/"+filepath.Base(path), string(text))
		if err != nil {
			t.Error(err)
			continue
		}
		pages = append(pages, p)
	}
	return pages
}

// docOutcome is what one chunk printed, and the errors it raised.
type docOutcome struct {
	lines  []string
	errors []string
}

// TestDocsExamples runs every example of every page in the sqlite3 shell
// and compares what it prints.
func TestDocsExamples(t *testing.T) {
	pages := readDocPages(t)
	for _, p := range pages {
		t.Run(strings.TrimSuffix(filepath.Base(p.name), ".md"), func(t *testing.T) {
			examples := 0
			for _, c := range p.chunks {
				if c.isExample() {
					examples++
				}
			}
			if examples == 0 {
				t.Fatalf("%s has no examples", p.name)
			}
			got := runDocPage(t, p)
			for i, c := range p.chunks {
				o := got[i]
				where := fmt.Sprintf("%s:%d", p.name, c.line)
				sqlText := strings.TrimSpace(strings.Join(c.sql, "\n"))
				switch {
				case c.setup:
					if len(o.errors) > 0 {
						t.Errorf("%s: setup failed: %s\n%s", where, strings.Join(o.errors, "; "), sqlText)
					}
				case c.wantErr != "":
					if !slices.ContainsFunc(o.errors, func(e string) bool { return strings.Contains(e, c.wantErr) }) {
						t.Errorf("%s: want an error containing %q, got %s\n%s", where, c.wantErr, o, sqlText)
					}
				case len(o.errors) > 0 || !slices.Equal(o.lines, c.want):
					t.Errorf("%s: got %s\nwant:\n  %s\n%s", where, o, strings.Join(c.want, "\n  "), sqlText)
				}
			}
			if *updateDocs {
				rewriteDocPage(t, p, got)
			}
		})
	}
}

func (o docOutcome) String() string {
	if len(o.errors) > 0 {
		return "error: " + strings.Join(o.errors, "; ")
	}
	if len(o.lines) == 0 {
		return "no output"
	}
	return "\n  " + strings.Join(o.lines, "\n  ")
}

// runDocPage runs a page's chunks in order in one shell on a freshly
// migrated file, and returns what each printed.
func runDocPage(t *testing.T, p *docPage) []docOutcome {
	t.Helper()
	path, db := migratedFile(t)
	db.Close()

	const marker, end = "@@docs-chunk ", "@@docs-end"
	var script strings.Builder
	script.WriteString(".bail off\n.nullvalue NULL\n")
	line := 1 + 3 // runShell's .load, then the two lines above: the next line is 4
	spans := make([][2]int, len(p.chunks))
	for i, c := range p.chunks {
		fmt.Fprintf(&script, ".print %s%d\n", marker, i)
		line++
		spans[i] = [2]int{line, line + len(c.sql)}
		for _, l := range c.sql {
			script.WriteString(l + "\n")
		}
		line += len(c.sql)
	}
	script.WriteString(".print " + end + "\n")
	r := runShell(t, path, script.String())
	checkSurvived(t, r)

	out := make([]docOutcome, len(p.chunks))
	current, ended := -1, false
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if n, ok := strings.CutPrefix(l, marker); ok {
			var err error
			if current, err = strconv.Atoi(n); err != nil {
				t.Fatalf("shell output: %q", l)
			}
			continue
		}
		if l == end {
			ended = true
			current = -1
			continue
		}
		if current < 0 {
			t.Errorf("shell printed %q outside any example", l)
			continue
		}
		out[current].lines = append(out[current].lines, l)
	}
	if !ended {
		t.Errorf("the shell stopped before the end of %s; stderr:\n%s", p.name, r.stderr)
	}
	for _, l := range strings.Split(r.stderr, "\n") {
		if l == "" || strings.HasPrefix(l, " ") {
			continue // a parse error echoes the statement, indented
		}
		m := shellErrorLine.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("unexpected stderr line: %s", l)
			continue
		}
		n, _ := strconv.Atoi(m[1])
		i := slices.IndexFunc(spans, func(s [2]int) bool { return n >= s[0] && n < s[1] })
		if i < 0 {
			t.Errorf("an error outside any example: %s", l)
			continue
		}
		out[i].errors = append(out[i].errors, m[2])
	}
	return out
}

// rewriteDocPage writes what the shell printed as each example's result
// lines (-update-docs); an error result keeps its text while it still
// matches.
func rewriteDocPage(t *testing.T, p *docPage, got []docOutcome) {
	t.Helper()
	var lines []string
	next := 0
	for i, c := range p.chunks {
		if c.setup {
			continue
		}
		lines = append(lines, p.lines[next:c.results[0]]...)
		o := got[i]
		switch {
		case len(o.errors) > 0:
			msg := o.errors[0]
			if c.wantErr != "" && strings.Contains(msg, c.wantErr) {
				msg = c.wantErr
			}
			lines = append(lines, resultMark+"error: "+msg)
		case len(o.lines) == 0:
			t.Errorf("%s:%d: prints nothing; give it a result or move it to a setup block", p.name, c.line)
			lines = append(lines, p.lines[c.results[0]:c.results[1]]...)
		default:
			for _, l := range o.lines {
				lines = append(lines, strings.TrimRight(resultMark+l, " "))
			}
		}
		next = c.results[1]
	}
	lines = append(lines, p.lines[next:]...)
	path := filepath.Join(docsDir, filepath.Base(p.name))
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDocsCoverEveryFunction: every SQL function memdecay registers has a
// section in docs/ (a heading that names it, as `name(`) and an example
// that calls it. The names are the registry's and, independently, those
// that pragma_function_list lists once the extension is loaded and not
// before.
func TestDocsCoverEveryFunction(t *testing.T) {
	names := map[string]bool{}
	for _, f := range shim.Functions() {
		names[f.Name] = true
	}
	const list = "SELECT DISTINCT name FROM pragma_function_list ORDER BY name;\n"
	r := runShell(t, ":memory:", list)
	if r.exitCode != 0 {
		t.Fatalf("sqlite3: %s", r.stderr)
	}
	cmd := exec.Command(sqlite3Shell(t), "-batch", ":memory:")
	cmd.Stdin = strings.NewReader(list)
	bare, err := cmd.Output()
	if err != nil {
		t.Fatalf("sqlite3 without the extension: %v", err)
	}
	builtin := map[string]bool{}
	for _, n := range strings.Fields(string(bare)) {
		builtin[n] = true
	}
	for _, n := range strings.Fields(r.stdout) {
		if !builtin[n] {
			names[n] = true
		}
	}
	if len(names) < len(shim.Functions()) || len(names) == 0 {
		t.Fatalf("found %d function names", len(names))
	}

	var headings, examples strings.Builder
	for _, p := range readDocPages(t) {
		for _, l := range p.lines {
			if strings.HasPrefix(l, "#") {
				headings.WriteString(l + "\n")
			}
		}
		for _, c := range p.chunks {
			if c.isExample() {
				examples.WriteString(strings.Join(c.sql, "\n") + "\n")
			}
		}
	}
	var sorted []string
	for n := range names {
		sorted = append(sorted, n)
	}
	slices.Sort(sorted)
	for _, n := range sorted {
		call := regexp.MustCompile(`\b` + n + `\(`)
		if !strings.Contains(headings.String(), "`"+n+"(") {
			t.Errorf("%s has no section in docs/ (a heading with `%s(…)`)", n, n)
		}
		if !call.MatchString(examples.String()) {
			t.Errorf("no example in docs/ calls %s", n)
		}
	}
}

var (
	docLink     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	slugDropped = regexp.MustCompile(`[^\p{L}\p{N}\s_-]`)
)

// TestDocsLinks: every relative link between the pages names a page that
// exists and, after #, one of its headings (as GitHub makes their anchors).
func TestDocsLinks(t *testing.T) {
	pages := readDocPages(t)
	anchors := map[string]map[string]bool{}
	for _, p := range pages {
		set := map[string]bool{}
		inFence := false
		for _, l := range p.lines {
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				inFence = !inFence
			}
			if inFence || !strings.HasPrefix(l, "#") {
				continue
			}
			heading := strings.ToLower(strings.TrimSpace(strings.TrimLeft(l, "#")))
			set[strings.ReplaceAll(slugDropped.ReplaceAllString(heading, ""), " ", "-")] = true
		}
		anchors[filepath.Base(p.name)] = set
	}
	for _, p := range pages {
		for i, l := range p.lines {
			for _, m := range docLink.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") {
					continue
				}
				page, anchor, _ := strings.Cut(target, "#")
				if page == "" {
					page = filepath.Base(p.name)
				}
				set, ok := anchors[page]
				switch {
				case !ok:
					t.Errorf("%s:%d: link to %s: no such page in docs/", p.name, i+1, target)
				case anchor != "" && !set[anchor]:
					t.Errorf("%s:%d: link to %s: %s has no heading with that anchor", p.name, i+1, target, page)
				}
			}
		}
	}
}
