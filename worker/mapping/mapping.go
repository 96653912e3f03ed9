// Package mapping declares which tables of a database play the roles of a
// memory: nodes (blocks), edges and facts, with the columns that play each
// part of memworker's own rows (docs/mapping.md). memworker's
// own mem_ tables are the mapping named mem, the default; an app that keeps
// its memory in tables of its own declares a mapping once, and it is stored
// in the database (mem_mapping), so every worker, a fleet and an rqlite
// cluster read the same one.
//
// A mapping is checked twice against the real schema, by one validator:
// when it is declared and before every use. A missing table or column, a
// column whose type cannot hold its part, or a key that is not unique is
// refused with one line naming the table and column, before anything
// changes; so is a mapping a sweep cannot go through, or through which a
// sweep would break the app's own rules (guard.go): every mapping
// declared sweeps.
package mapping

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// Clocks a time column may be on.
const (
	ClockActiveHours = "active_hours" // memworker's session-aware clock, in hours
	ClockUnixSeconds = "unix_seconds" // wall clock, seconds since 1970 (integer or real)
	ClockISO8601     = "iso8601"      // wall clock, ISO-8601 / SQLite datetime text
	ClockWall        = "wall"         // wall clock, either of the two above, row by row
)

// RowID names SQLite's rowid as a key.
const RowID = "rowid"

// Mapping is a declared mapping. A nil role is one the app does not have.
type Mapping struct {
	// Preset is the preset this mapping is, or "" for one an app wrote.
	Preset string `json:"preset,omitempty" toml:"preset"`
	Nodes  *Nodes `json:"nodes,omitempty" toml:"nodes"`
	Edges  *Edges `json:"edges,omitempty" toml:"edges"`
	Facts  *Facts `json:"facts,omitempty" toml:"facts"`
	Clock  *Clock `json:"clock,omitempty" toml:"clock"`
	// Settings and Policies are the terms the app declares with its
	// tables (terms.go): mem_config keys, and rows of mem_edge_policies by
	// edge kind, put in force in the transaction that declares the mapping.
	Settings Settings `json:"settings,omitempty" toml:"settings"`
	Policies []Policy `json:"policies,omitempty" toml:"policies"`
	// Tiers are the tiers' half-lives on the mapping's clock (decay.go).
	Tiers Tiers `json:"tiers,omitempty" toml:"tiers"`
	// Accesses is the app's own read log (accesses.go), which memworker
	// tune learns the tiers' half-lives from.
	Accesses *Accesses `json:"accesses,omitempty" toml:"accesses"`
}

// Key is a table's key: one column, several (a composite primary key or
// unique index), or rowid. In JSON and TOML it is a string or a list.
type Key []string

// UnmarshalJSON takes "id" or ["from_id", "to_id"].
func (k *Key) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*k = Key{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New(`a key is a column name or a list of them ("id", ["from_id", "to_id"], "rowid")`)
	}
	*k = many
	return nil
}

// MarshalJSON writes one column as a string.
func (k Key) MarshalJSON() ([]byte, error) {
	if len(k) == 1 {
		return json.Marshal(k[0])
	}
	return json.Marshal([]string(k))
}

// UnmarshalTOML takes "id" or ["from_id", "to_id"].
func (k *Key) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string:
		*k = Key{x}
	case []any:
		for _, c := range x {
			s, ok := c.(string)
			if !ok {
				return errors.New(`a key is a column name or a list of them ("id", ["from_id", "to_id"], "rowid")`)
			}
			*k = append(*k, s)
		}
	default:
		return errors.New(`a key is a column name or a list of them ("id", ["from_id", "to_id"], "rowid")`)
	}
	return nil
}

func (k Key) String() string { return strings.Join(k, ", ") }

// Nodes are the blocks: what edges join, archived when they fade.
type Nodes struct {
	Table string `json:"table" toml:"table"`
	Key   Key    `json:"key" toml:"key"`
	// LastUsed is the time of last use (reinforcement), on LastUsedClock.
	LastUsed      string `json:"last_used,omitempty" toml:"last_used"`
	LastUsedClock string `json:"last_used_clock,omitempty" toml:"last_used_clock"`
	Category      string `json:"category,omitempty" toml:"category"`
	// CategoryTiers maps the category column's values to tiers.
	CategoryTiers map[string]string `json:"category_tiers,omitempty" toml:"category_tiers"`
	Tags          *Tags             `json:"tags,omitempty" toml:"tags"`
	// Status, when the app has one: the values that mean active, and the
	// one a sweep writes when it archives (inbox values are neither).
	Status         string   `json:"status,omitempty" toml:"status"`
	StatusActive   []string `json:"status_active,omitempty" toml:"status_active"`
	StatusArchived string   `json:"status_archived,omitempty" toml:"status_archived"`
	ArchiveReason  string   `json:"archive_reason,omitempty" toml:"archive_reason"`
	Confidence     string   `json:"confidence,omitempty" toml:"confidence"`
	Reinforcement  string   `json:"reinforcement_count,omitempty" toml:"reinforcement_count"`
	// Pinned is a column that pins a node: one holding a value other than
	// 0 or NULL is never archived (faded or orphaned).
	Pinned string `json:"pinned,omitempty" toml:"pinned"`
	// Dependents are the app's rows that belong to a node and go when it
	// is archived (elfmem's contradictions): kept in the event log, put
	// back when the node is restored.
	Dependents []Dependent `json:"dependents,omitempty" toml:"dependents"`
	// Writes are the parts a sweep may write (decay.go); all when empty.
	Writes []string `json:"writes,omitempty" toml:"writes"`
	// RecordAccesses has the change capture append a row to mem_accesses
	// whenever the app moves LastUsed forward (accesses.go).
	RecordAccesses bool `json:"record_accesses,omitempty" toml:"record_accesses"`
}

// Dependent is a table whose rows belong to the nodes its columns hold
// keys of: a row goes with the first of those nodes a sweep archives.
type Dependent struct {
	Table   string   `json:"table" toml:"table"`
	Columns []string `json:"columns" toml:"columns"`
}

// Tags are a node's tags: a table of (node key, tag) rows, or a column
// holding a JSON array or a comma-separated list.
type Tags struct {
	Table  string `json:"table,omitempty" toml:"table"`
	NodeID string `json:"node,omitempty" toml:"node"`
	Tag    string `json:"tag,omitempty" toml:"tag"`
	Column string `json:"column,omitempty" toml:"column"`
}

// Edges are the links between nodes, each row one edge: two links between
// the same pair with different kinds are two edges.
type Edges struct {
	Table    string `json:"table" toml:"table"`
	Key      Key    `json:"key" toml:"key"`
	From     string `json:"from" toml:"from"`
	To       string `json:"to" toml:"to"`
	Directed bool   `json:"directed,omitempty" toml:"directed"`
	// Kind is the relation type column: policies are chosen by its value.
	Kind string `json:"kind,omitempty" toml:"kind"`
	// Weight is a column, or WeightConstant for an app whose links have no
	// weight (every edge weighs the same).
	Weight         string   `json:"weight,omitempty" toml:"weight"`
	WeightConstant *float64 `json:"weight_constant,omitempty" toml:"weight_constant"`
	Reinforcement  string   `json:"reinforcement_count,omitempty" toml:"reinforcement_count"`
	Origin         string   `json:"origin,omitempty" toml:"origin"`
	Pinned         string   `json:"pinned,omitempty" toml:"pinned"`
	// Excluded is a 0/1 column a sweep sets under a relation policy whose
	// action is exclude (soft exclusion) and clears when the link is
	// readmitted; without it such a policy is refused.
	Excluded string `json:"excluded,omitempty" toml:"excluded"`
	// LastActive is the time of last activity, on LastActiveClock.
	LastActive      string `json:"last_active,omitempty" toml:"last_active"`
	LastActiveClock string `json:"last_active_clock,omitempty" toml:"last_active_clock"`
	// LastObserved is a wall-clock time of last observation, read by
	// policies on the wall clock.
	LastObserved      string `json:"last_observed,omitempty" toml:"last_observed"`
	LastObservedClock string `json:"last_observed_clock,omitempty" toml:"last_observed_clock"`
}

// Facts are the scored facts of docs/facts.md.
type Facts struct {
	Table       string `json:"table" toml:"table"`
	Key         Key    `json:"key" toml:"key"`
	Segment     string `json:"segment,omitempty" toml:"segment"`
	Tier        string `json:"tier,omitempty" toml:"tier"`
	Importance  string `json:"importance,omitempty" toml:"importance"`
	DecayRate   string `json:"decay_rate,omitempty" toml:"decay_rate"`
	AccessCount string `json:"access_count,omitempty" toml:"access_count"`
	// LastAccess and CreatedAt are wall-clock times (age counts from the
	// last access, or from creation while that is NULL).
	LastAccess      string `json:"last_access,omitempty" toml:"last_access"`
	LastAccessClock string `json:"last_access_clock,omitempty" toml:"last_access_clock"`
	CreatedAt       string `json:"created_at,omitempty" toml:"created_at"`
	CreatedAtClock  string `json:"created_at_clock,omitempty" toml:"created_at_clock"`
	// Status, when the app has one: the values for active, confirmed (never
	// archived or pruned) and archived.
	Status          string   `json:"status,omitempty" toml:"status"`
	StatusActive    []string `json:"status_active,omitempty" toml:"status_active"`
	StatusConfirmed []string `json:"status_confirmed,omitempty" toml:"status_confirmed"`
	StatusArchived  string   `json:"status_archived,omitempty" toml:"status_archived"`
	// SegmentMap maps the segment column's values to the reference's
	// segments (a value it does not name is taken as it is).
	SegmentMap map[string]string `json:"segment_map,omitempty" toml:"segment_map"`
}

// Clock is where an app keeps its active-hours clock and the time of the
// last sweep, when it keeps them itself (elfmem's system_config); without
// it they live in mem_config.
type Clock struct {
	Table          string `json:"table" toml:"table"`
	KeyColumn      string `json:"key_column" toml:"key_column"`
	ValueColumn    string `json:"value_column" toml:"value_column"`
	ActiveHoursKey string `json:"active_hours_key" toml:"active_hours_key"`
	LastCurateKey  string `json:"last_curate_key,omitempty" toml:"last_curate_key"`
}

// ErrBadMapping wraps every mistake in a mapping's text or against the
// schema.
var ErrBadMapping = errors.New("mapping")

// bad is a refusal: one line, each name in it shown (cut when long).
func bad(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrBadMapping, fmt.Sprintf(format, shownArgs(a)...))
}

// Parse reads a mapping file: TOML when name ends in .toml, JSON when it
// ends in .json, otherwise whichever the text is. Unknown keys are refused
// (a misspelt column role would silently take its default).
func Parse(name string, text []byte) (*Mapping, error) {
	format := strings.ToLower(filepath.Ext(name))
	if format != ".toml" && format != ".json" {
		format = ".toml"
		if t := bytes.TrimSpace(text); len(t) > 0 && t[0] == '{' {
			format = ".json"
		}
	}
	m := &Mapping{}
	if format == ".json" {
		if key, dup := duplicateKey(text); dup {
			return nil, bad("%s: the key %s is given twice", name, key)
		}
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(m); err != nil {
			if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
				return nil, bad("%s: unknown key %s (docs/mapping.md lists every role and part)", name, field)
			}
			return nil, bad("%s: %v", name, err)
		}
		if dec.More() {
			return nil, bad("%s: text after the mapping's JSON object", name)
		}
	} else {
		md, err := toml.Decode(string(text), m)
		if err != nil {
			return nil, bad("%s: %v", name, err)
		}
		if un := md.Undecoded(); len(un) > 0 {
			keys := make([]string, len(un))
			for i, k := range un {
				keys[i] = k.String()
			}
			return nil, bad("%s: unknown key %s (docs/mapping.md lists every role and part)", name, strings.Join(keys, ", "))
		}
	}
	if m.Preset != "" {
		return nil, bad("%s: preset is set by memworker map use, not in a file", name)
	}
	if err := m.check(); err != nil {
		return nil, err
	}
	return m, nil
}

// JSON is the mapping as stored and as map show --json prints it.
func (m *Mapping) JSON() string {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		panic(err) // plain structs of strings and numbers always marshal
	}
	return string(b)
}

// Tables names the tables of each role, for messages.
func (m *Mapping) Tables() string {
	var parts []string
	if m.Nodes != nil {
		parts = append(parts, "nodes "+m.Nodes.Table)
	}
	if m.Edges != nil {
		parts = append(parts, "edges "+m.Edges.Table)
	}
	if m.Facts != nil {
		parts = append(parts, "facts "+m.Facts.Table)
	}
	return strings.Join(parts, ", ")
}

// IsDefault reports whether m is memworker's own tables (the mem preset).
func (m *Mapping) IsDefault() bool { return m.Preset == "mem" }

// check refuses what is wrong whatever the schema: a role without its
// table or key, an unknown clock, a status without its values.
func (m *Mapping) check() error {
	if m.Nodes == nil && m.Edges == nil && m.Facts == nil {
		return bad("the mapping names no role: give at least one of nodes, edges, facts")
	}
	if n := m.Nodes; n != nil {
		if err := needTableKey("nodes", n.Table, n.Key); err != nil {
			return err
		}
		if err := clockOf("nodes.last_used", n.LastUsed, &n.LastUsedClock, ClockActiveHours, true); err != nil {
			return err
		}
		if n.Status != "" && (len(n.StatusActive) == 0 || n.StatusArchived == "") {
			return bad("nodes.status: give status_active (the values that mean active) and status_archived (the value an archived node gets)")
		}
		if n.Status == "" && (len(n.StatusActive) > 0 || n.StatusArchived != "") {
			return bad("nodes.status_active and status_archived need nodes.status (the column)")
		}
		for i, d := range n.Dependents {
			if d.Table == "" || len(d.Columns) == 0 || slices.Contains(d.Columns, "") {
				return bad("nodes.dependents[%d]: give table and columns (its columns that hold node keys)", i)
			}
		}
		if t := n.Tags; t != nil {
			switch {
			case t.Column != "" && (t.Table != "" || t.NodeID != "" || t.Tag != ""):
				return bad("nodes.tags: give a column, or a table with node and tag columns, not both")
			case t.Column == "" && (t.Table == "" || t.NodeID == "" || t.Tag == ""):
				return bad("nodes.tags: a tags table needs table, node (its column of node keys) and tag")
			}
		}
	}
	if e := m.Edges; e != nil {
		if err := needTableKey("edges", e.Table, e.Key); err != nil {
			return err
		}
		if e.From == "" || e.To == "" {
			return bad("edges: give from and to, the columns of the two ends' node keys")
		}
		if e.Weight != "" && e.WeightConstant != nil {
			return bad("edges: give weight (a column) or weight_constant, not both")
		}
		if c := e.WeightConstant; c != nil && !(*c >= 0 && *c <= 1e300) {
			return bad("edges.weight_constant: %v is not a weight (a finite number >= 0)", *c)
		}
		if err := clockOf("edges.last_active", e.LastActive, &e.LastActiveClock, ClockActiveHours, true); err != nil {
			return err
		}
		if err := clockOf("edges.last_observed", e.LastObserved, &e.LastObservedClock, ClockWall, false); err != nil {
			return err
		}
	}
	if f := m.Facts; f != nil {
		if err := needTableKey("facts", f.Table, f.Key); err != nil {
			return err
		}
		if f.Segment == "" && f.Tier == "" {
			return bad("facts: give segment or tier (a fact's tier decides how it decays)")
		}
		if f.LastAccess == "" && f.CreatedAt == "" {
			return bad("facts: give last_access or created_at (a fact's age counts from them)")
		}
		if err := clockOf("facts.last_access", f.LastAccess, &f.LastAccessClock, ClockWall, false); err != nil {
			return err
		}
		if err := clockOf("facts.created_at", f.CreatedAt, &f.CreatedAtClock, ClockWall, false); err != nil {
			return err
		}
		if f.Status != "" && (len(f.StatusActive) == 0 || f.StatusArchived == "") {
			return bad("facts.status: give status_active and status_archived (status_confirmed if the app confirms facts)")
		}
	}
	if c := m.Clock; c != nil && (c.Table == "" || c.KeyColumn == "" || c.ValueColumn == "" || c.ActiveHoursKey == "") {
		return bad("clock: give table, key_column, value_column and active_hours_key")
	}
	if err := m.checkDecay(); err != nil {
		return err
	}
	if err := m.checkAccesses(); err != nil {
		return err
	}
	return m.checkTerms()
}

func needTableKey(role, table string, key Key) error {
	if table == "" {
		return bad("%s: give table", role)
	}
	if len(key) == 0 {
		return bad("%s: give key (its primary key column, several columns, or rowid)", role)
	}
	for _, c := range key {
		if c == "" {
			return bad("%s.key: an empty column name", role)
		}
		if strings.EqualFold(c, RowID) && len(key) > 1 {
			return bad("%s.key: rowid is a key on its own", role)
		}
	}
	return nil
}

// clockOf checks a time column's clock, filling the default; wallOnly
// columns cannot be on the active-hours clock.
func clockOf(role, column string, clock *string, def string, hoursAllowed bool) error {
	if column == "" {
		if *clock != "" {
			return bad("%s_clock is set but %s is not", role, role)
		}
		return nil
	}
	if *clock == "" {
		*clock = def
	}
	switch *clock {
	case ClockActiveHours:
		if !hoursAllowed {
			return bad("%s: clock %q: this time is on the wall clock (%s, %s or %s)", role, *clock, ClockUnixSeconds, ClockISO8601, ClockWall)
		}
	case ClockUnixSeconds, ClockISO8601, ClockWall:
	default:
		return bad("%s: clock %q is not one of %s, %s, %s, %s", role, *clock, ClockActiveHours, ClockUnixSeconds, ClockISO8601, ClockWall)
	}
	return nil
}

// duplicateKey finds a key given twice in one JSON object (in any case:
// encoding/json matches keys to fields so), as its path (nodes.table):
// encoding/json would keep the last one silently, where TOML refuses the
// file. Text that is not JSON has none; decoding it says
// what is wrong.
func duplicateKey(text []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(text))
	var walk func(path string) (string, bool, error)
	walk = func(path string) (string, bool, error) {
		tok, err := dec.Token()
		if err != nil {
			return "", false, err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return "", false, err
				}
				key, _ := k.(string)
				at := key
				if path != "" {
					at = path + "." + key
				}
				if seen[strings.ToLower(key)] {
					return at, true, nil
				}
				seen[strings.ToLower(key)] = true
				if at, dup, err := walk(at); dup || err != nil {
					return at, dup, err
				}
			}
			_, err = dec.Token()
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if at, dup, err := walk(fmt.Sprintf("%s[%d]", path, i)); dup || err != nil {
					return at, dup, err
				}
			}
			_, err = dec.Token()
		}
		return "", false, err
	}
	at, dup, _ := walk("")
	return at, dup
}
