package mapping_test

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/schema"
	"github.com/memdecay/memdecay/worker/mapping"
)

// termsSchema is the app of testdata/terms.toml.
const termsSchema = `
CREATE TABLE notes (id INTEGER PRIMARY KEY, state TEXT DEFAULT 'active', used_at INTEGER);
CREATE TABLE links (id INTEGER PRIMARY KEY, src INTEGER REFERENCES notes (id), dst INTEGER REFERENCES notes (id),
	kind TEXT NOT NULL, strength REAL, touched_at INTEGER, seen_at INTEGER, hidden INTEGER DEFAULT 0);
`

func readTerms(t *testing.T, name string) *mapping.Mapping {
	t.Helper()
	text, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	m, err := mapping.Parse(name, text)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return m
}

// The terms read the same from TOML and JSON, take their defaults, and
// become config set's writes and a row of mem_edge_policies.
func TestTermsParseAndWrite(t *testing.T) {
	fromTOML, fromJSON := readTerms(t, "terms.toml"), readTerms(t, "terms.json")
	if !reflect.DeepEqual(fromTOML, fromJSON) {
		t.Errorf("TOML and JSON differ:\n%s\n%s", fromTOML.JSON(), fromJSON.JSON())
	}
	p := fromTOML.Policies[0]
	if p.Orphans != "keep" || p.Params() != `{"half_life":"180d"}` {
		t.Errorf("policy %+v: want orphans keep, params {\"half_life\":\"180d\"}", p)
	}
	statements, err := fromTOML.TermsSQL()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range statements {
		words := make([]string, len(s.Args))
		for i, a := range s.Args {
			words[i] = fmt.Sprint(a)
		}
		got = append(got, strings.Join(words, " "))
	}
	want := []string{
		"block_prune_threshold 0.05",
		"curate_interval_hours 48", // a duration, in the key's unit (hours), as config set stores it
		"cites half_life {\"half_life\":\"180d\"} wall 0.5 exclude keep",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("writes %q, want %q", got, want)
	}
	// Stored and read back, the terms are the same.
	db := openDB(t, termsSchema)
	if _, err := schema.Up(db); err != nil {
		t.Fatal(err)
	}
	q, args := mapping.StoreSQL(fromTOML, "terms.toml", timeUnix(1795600000))
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatal(err)
	}
	d, err := mapping.Load(context.Background(), db)
	if err != nil || !reflect.DeepEqual(d.Mapping, fromTOML) {
		t.Errorf("stored and read back: %v\n%s\nwant %s", err, d.JSON(), fromTOML.JSON())
	}
}

// Every bad setting or policy is refused with one line naming its key in
// the file, before anything is read from a database.
func TestBadTermsRefused(t *testing.T) {
	text, err := os.ReadFile("testdata/terms.toml")
	if err != nil {
		t.Fatal(err)
	}
	base := string(text)
	policy := func(old, new string) string { return strings.Replace(base, old, new, 1) }
	cases := []struct {
		name, text string
		want       []string
	}{
		{"unknown setting", policy("block_prune_threshold = 0.05", "block_prune_treshold = 0.05"),
			[]string{"settings.block_prune_treshold: unknown key", "block_prune_threshold"}},
		{"value out of range", policy("block_prune_threshold = 0.05", "block_prune_threshold = 2"),
			[]string{"settings.block_prune_threshold: 2 is out of range [0, 1]"}},
		{"value not a number", policy("block_prune_threshold = 0.05", `block_prune_threshold = "low"`),
			[]string{`settings.block_prune_threshold: "low" is not a number`}},
		{"bad duration", policy(`curate_interval_hours = "2d"`, `curate_interval_hours = "2w"`),
			[]string{"settings.curate_interval_hours:", `"2w"`}},
		{"not a word it takes", policy("block_prune_threshold = 0.05", `block_archival = "never"`),
			[]string{`settings.block_archival: "never" is not one of auto, off`}},
		{"a boolean", policy("block_prune_threshold = 0.05", `block_archival = true`),
			[]string{"settings.block_archival: true is not a number or a text"}},
		{"the clock", policy("block_prune_threshold = 0.05", "active_hours = 10"),
			[]string{"settings.active_hours: the clock and what sweeps record", "memworker clock"}},
		{"no kind", policy(`kind = "cites"`, ``), []string{"policies[0]: give kind"}},
		{"no model", policy(`model = "half_life"`, ``), []string{"policies[0]: give model", "half_life"}},
		{"unknown model", policy(`model = "half_life"`, `model = "halflife"`), []string{`policies[0].model (kind "cites"): "halflife" is unknown`}},
		{"bad half-life", policy(`half_life = "180d"`, `half_life = "180 days"`), []string{`policies[0].half_life (kind "cites"): "180 days" is not a duration`}},
		{"a parameter of another model", policy(`half_life = "180d"`, `half_life = "180d"`+"\nrate = 0.1"),
			[]string{`policies[0] (kind "cites"): key "rate" does not apply to model half_life`}},
		{"missing parameter", policy(`half_life = "180d"`, ``), []string{`policies[0]`, `half_life`}},
		{"unknown parameter", policy(`half_life = "180d"`, `half_lfe = "180d"`), []string{"unknown key policies.half_lfe"}},
		{"bad clock", policy(`clock = "wall"`, `clock = "utc"`), []string{`policies[0].clock (kind "cites"): "utc" is unknown`}},
		{"bad action", policy(`action = "exclude"`, `action = "hide"`), []string{`policies[0].action: "hide" is not delete or exclude`}},
		{"bad orphans", policy(`action = "exclude"`, `action = "exclude"`+"\norphans = \"drop\""), []string{`policies[0].orphans: "drop" is not keep or delete`}},
		{"negative threshold", policy(`threshold = 0.5`, `threshold = -0.5`), []string{`policies[0].threshold (kind "cites"): -0.5 is negative`}},
		{"exclude with nowhere to mark", policy(`excluded = "hidden"`, ``), []string{"policies[0].action: exclude", "edges.excluded"}},
		{"no anchor on its clock", policy(`last_observed = "seen_at"`+"\n"+`last_observed_clock = "unix_seconds"`, ``),
			[]string{"policies[0].clock: wall counts from edges.last_observed"}},
		{"one kind twice", base + "\n[[policies]]\nkind = \"cites\"\nmodel = \"linear\"\nrate = 0.1\n",
			[]string{`policies[1]: kind "cites" is declared twice (also policies[0])`}},
		{"a bad tier", base + "\n[[policies]]\nkind = \"notes\"\nmodel = \"multi_linear\"\ntiers = [{weight = 1, hold = \"4x\", rate = 0.1}]\n",
			[]string{`policies[1].tiers[0].hold (kind "notes"): "4x" is not a duration`}},
		{"policies without edges", "[nodes]\ntable = \"notes\"\nkey = \"id\"\n[[policies]]\nkind = \"cites\"\nmodel = \"half_life\"\nhalf_life = 3\n",
			[]string{"policies: the mapping names no edges"}},
		{"JSON setting not a scalar", `{"settings": {"block_prune_threshold": [1]}, "nodes": {"table": "notes", "key": "id"}}`,
			[]string{"settings.block_prune_threshold: [1] is not a number or a text"}},
		{"JSON unknown policy key", `{"edges": {"table": "links", "key": "id", "from": "src", "to": "dst", "last_active": "touched_at"},
			"policies": [{"kind": "x", "model": "linear", "rate": 0.1, "hodl": "2h"}]}`, []string{`unknown key "hodl"`}},
		{"every setting a mapping sets", "[settings]\nedge_prune_threshold = 0.2\nedge_decay_threshold = \"auto\"\nestablished_edge_threshold = 4\n" +
			"reinforce_top_n = 3\nmax_decay_fraction = 0.5\nblock_archival = \"off\"\nevent_retention_days = \"90d\"\n[nodes]\ntable = \"notes\"\nkey = \"id\"\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := "m.toml"
			if strings.HasPrefix(c.text, "{") {
				name = "m.json"
			}
			_, err := mapping.Parse(name, []byte(c.text))
			expectRefusal(t, err, c.want)
		})
	}
}

// The terms in force mark what the file declared, what changed since, and
// the rows it does not name, which declaring leaves as they are.
func TestTermsInForce(t *testing.T) {
	ctx := context.Background()
	m := readTerms(t, "terms.toml")
	db := openDB(t, termsSchema)
	if _, err := schema.Up(db); err != nil {
		t.Fatal(err)
	}
	mark := func() (map[string]string, map[string]string) {
		t.Helper()
		terms, err := mapping.TermsInForce(ctx, db, m)
		if err != nil {
			t.Fatal(err)
		}
		settings, policies := map[string]string{}, map[string]string{}
		for _, s := range terms.Settings {
			switch {
			case s.FromFile:
				settings[s.Key] = "file " + s.Value
			case s.FileValue != "":
				settings[s.Key] = "changed " + s.Value + ", file " + s.FileValue
			}
		}
		for _, p := range terms.Policies {
			policies[p.Kind] = map[[3]bool]string{{true, false, false}: "file", {false, true, false}: "changed",
				{false, false, true}: "missing", {false, false, false}: "other"}[[3]bool{p.FromFile, p.Changed, p.Missing}]
		}
		return settings, policies
	}
	s, p := mark()
	if !reflect.DeepEqual(s, map[string]string{"block_prune_threshold": "file 0.05", "curate_interval_hours": "changed 40, file 2d"}) ||
		!reflect.DeepEqual(p, map[string]string{"cites": "missing"}) {
		t.Errorf("before the writes: %v %v (block_prune_threshold's default is the file's)", s, p)
	}
	statements, err := m.TermsSQL()
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range statements {
		if _, err := db.Exec(st.Query, st.Args...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`INSERT INTO mem_edge_policies (relation_type, model, params) VALUES ('mentions', 'half_life', '{"half_life": "3d"}')`); err != nil {
		t.Fatal(err)
	}
	s, p = mark()
	if !reflect.DeepEqual(s, map[string]string{"block_prune_threshold": "file 0.05", "curate_interval_hours": "file 48.0"}) ||
		!reflect.DeepEqual(p, map[string]string{"cites": "file", "mentions": "other"}) {
		t.Errorf("after the writes: %v %v", s, p)
	}
	if _, err := db.Exec(`UPDATE mem_config SET value = 0.07 WHERE key = 'block_prune_threshold';
		UPDATE mem_edge_policies SET action = 'delete' WHERE relation_type = 'cites'`); err != nil {
		t.Fatal(err)
	}
	s, p = mark()
	if s["block_prune_threshold"] != "changed 0.07, file 0.05" || p["cites"] != "changed" {
		t.Errorf("changed since: %v %v", s, p)
	}
}
