package mapping_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/memdecay/memdecay/worker/mapping"
)

// decayTerms is a mapping with every decay term, in TOML and in JSON.
const (
	decayTermsTOML = `
[tiers]
durable = "90d"
standard = 720
ephemeral = "5d"

[nodes]
table = "notes"
key = "id"
last_used = "used_at"
last_used_clock = "unix_seconds"
category = "kind"
category_tiers = { goal = "durable", chat = "ephemeral" }
status = "state"
status_active = ["active"]
status_archived = "archived"
reinforcement_count = "recalls"
writes = ["last_used", "status"]

[facts]
table = "facts"
key = "id"
segment = "topic"
last_access = "seen_at"
segment_map = { smalltalk = "context", work = "project" }
`
	decayTermsJSON = `{
  "tiers": {"durable": "90d", "standard": 720, "ephemeral": "5d"},
  "nodes": {"table": "notes", "key": "id", "last_used": "used_at", "last_used_clock": "unix_seconds",
            "category": "kind", "category_tiers": {"goal": "durable", "chat": "ephemeral"},
            "status": "state", "status_active": ["active"], "status_archived": "archived",
            "reinforcement_count": "recalls", "writes": ["last_used", "status"]},
  "facts": {"table": "facts", "key": "id", "segment": "topic", "last_access": "seen_at",
            "segment_map": {"smalltalk": "context", "work": "project"}}
}`
)

// The decay terms read the same from TOML and JSON and reach the SQL
// functions as their JSON arguments.
func TestDecayTermsParse(t *testing.T) {
	fromTOML, err := mapping.Parse("m.toml", []byte(decayTermsTOML))
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := mapping.Parse("m.json", []byte(decayTermsJSON))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromTOML, fromJSON) {
		t.Errorf("TOML and JSON differ:\n%s\n%s", fromTOML.JSON(), fromJSON.JSON())
	}
	if got, want := fromTOML.HalfLives(), `{"durable":"90d","ephemeral":"5d","standard":"720"}`; got != want {
		t.Errorf("HalfLives = %s, want %s", got, want)
	}
	if got, want := fromTOML.CategoryTiersJSON(), `{"chat":"ephemeral","goal":"durable"}`; got != want {
		t.Errorf("CategoryTiersJSON = %s, want %s", got, want)
	}
	n := fromTOML.Nodes
	if !n.MayWrite(mapping.WriteStatus) || !n.MayWrite(mapping.WriteLastUsed) || n.MayWrite(mapping.WriteReinforcement) {
		t.Errorf("writes %q: want status and last_used alone", n.Writes)
	}
	if !fromTOML.Reinforces() || !fromTOML.WallClock() {
		t.Errorf("Reinforces %v, WallClock %v: want both", fromTOML.Reinforces(), fromTOML.WallClock())
	}
	// Stored and read back, the terms are the same.
	again, err := mapping.Parse("m.json", []byte(fromTOML.JSON()))
	if err != nil || !reflect.DeepEqual(again, fromTOML) {
		t.Errorf("read back: %v\n%s", err, again.JSON())
	}
	if got := mapping.MappedValues("f.topic", fromTOML.Facts.SegmentMap); got != "(CASE f.topic WHEN 'smalltalk' THEN 'context' WHEN 'work' THEN 'project' ELSE f.topic END)" {
		t.Errorf("MappedValues = %s", got)
	}
}

func TestBadDecayTermsRefused(t *testing.T) {
	with := func(old, new string) string { return strings.Replace(decayTermsTOML, old, new, 1) }
	for name, c := range map[string]struct {
		text string
		want []string
	}{
		"permanent half-life":   {with(`durable = "90d"`, `permanent = "90d"`), []string{"tiers: permanent never fades"}},
		"unknown tier":          {with(`durable = "90d"`, `lasting = "90d"`), []string{`tiers: "lasting" is not a tier`}},
		"zero half-life":        {with(`durable = "90d"`, `durable = "0d"`), []string{"tiers durable: must be a finite half-life above 0"}},
		"bad unit":              {with(`durable = "90d"`, `durable = "3y"`), []string{"tiers durable", `"3y" is not a duration`}},
		"a boolean half-life":   {with(`durable = "90d"`, `durable = true`), []string{"tiers.durable: true is not a number or a text"}},
		"tiers of nothing":      {"[tiers]\nstandard = \"30d\"\n[facts]\ntable = \"facts\"\nkey = \"id\"\nsegment = \"topic\"\nlast_access = \"seen_at\"\n", []string{"tiers: the mapping names no nodes or edges"}},
		"category tiers alone":  {with(`category = "kind"`, ``), []string{"nodes.category_tiers: give nodes.category"}},
		"category to no tier":   {with(`goal = "durable"`, `goal = "long"`), []string{`nodes.category_tiers: category "goal": text "long" is not a tier`}},
		"a part not written":    {with(`writes = ["last_used", "status"]`, `writes = ["last_used", "status", "confidence"]`), []string{`nodes.writes: "confidence" is not a part a sweep writes`}},
		"a part not mapped":     {with(`writes = ["last_used", "status"]`, `writes = ["status", "archive_reason"]`), []string{"nodes.writes: archive_reason: the mapping names no column for it"}},
		"writes without status": {with(`writes = ["last_used", "status"]`, `writes = ["last_used"]`), []string{"nodes.writes: give status"}},
		"segment map alone":     {with(`segment = "topic"`, `tier = "lifespan"`), []string{"facts.segment_map: give facts.segment"}},
		"segment to no segment": {with(`work = "project"`, `work = "job"`), []string{`facts.segment_map: "work" → "job": not a segment`, "context"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := mapping.Parse("m.toml", []byte(c.text))
			expectRefusal(t, err, c.want)
		})
	}
}
