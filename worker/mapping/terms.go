package mapping

// A mapping file's terms: the settings (mem_config keys) and the relation
// policies (rows of mem_edge_policies) an app declares beside its tables,
// applied in the transaction that declares the mapping. Each is checked by
// the one validator memworker has for it: a setting by config set's
// (settings.SetConfig), a policy row by the sweep's (settings.Policy.Resolve).

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/memdecay/memdecay/sqlfuncs"
	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/settings"
)

// Settings are mem_config keys and their values as the file gives them
// (a number or a text, kept as text: "0.05", "40h", "off").
type Settings map[string]string

// UnmarshalTOML takes a table of numbers and texts.
func (s *Settings) UnmarshalTOML(v any) (err error) {
	*s, err = textTableTOML("settings", "mem_config keys and their values", v)
	return err
}

// UnmarshalJSON takes an object of numbers (kept as written) and strings.
func (s *Settings) UnmarshalJSON(b []byte) (err error) {
	*s, err = textTableJSON("settings", "mem_config keys and their values", b)
	return err
}

// textTableTOML reads a TOML table of numbers and texts as texts (what is
// the part of the file it is, of what).
func textTableTOML(what, of string, v any) (map[string]string, error) {
	table, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is a table of %s", what, of)
	}
	out := map[string]string{}
	for k, raw := range table {
		switch x := raw.(type) {
		case string:
			out[k] = x
		case int64:
			out[k] = strconv.FormatInt(x, 10)
		case float64:
			out[k] = strconv.FormatFloat(x, 'g', -1, 64)
		default:
			return nil, fmt.Errorf("%s.%s: %v is not a number or a text", what, k, raw)
		}
	}
	return out, nil
}

// textTableJSON reads a JSON object of numbers (kept as written) and
// strings as texts.
func textTableJSON(what, of string, b []byte) (map[string]string, error) {
	var table map[string]json.RawMessage
	if err := json.Unmarshal(b, &table); err != nil {
		return nil, fmt.Errorf("%s is an object of %s", what, of)
	}
	out := map[string]string{}
	for k, raw := range table {
		var text string
		var number json.Number
		switch {
		case json.Unmarshal(raw, &text) == nil:
			out[k] = text
		case json.Unmarshal(raw, &number) == nil && number != "":
			out[k] = number.String()
		default:
			return nil, fmt.Errorf("%s.%s: %s is not a number or a text", what, k, raw)
		}
	}
	return out, nil
}

// notDeclared are the mem_config keys a mapping does not set: the clock and
// what sweeps record, which a file declared again would move back.
var notDeclared = []string{"active_hours", "wall_clock", "last_curate_at", "edges_decayed_total"}

// DeclarableSettings lists the mem_config keys a mapping may set, in the
// order config get prints them.
func DeclarableSettings() []string {
	var out []string
	for _, k := range settings.ConfigKeys {
		if !slices.Contains(notDeclared, k.Name()) {
			out = append(out, k.Name())
		}
	}
	return out
}

// Policy is one relation policy a mapping declares: the row of
// mem_edge_policies for the edges of one kind (docs/policies.md). The
// model's parameters are keys of their own (half_life = "180d"), stored as
// the row's params JSON.
type Policy struct {
	Kind      string   `json:"kind" toml:"kind"`
	Model     string   `json:"model" toml:"model"`
	Clock     string   `json:"clock,omitempty" toml:"clock"`
	Threshold *float64 `json:"threshold,omitempty" toml:"threshold"`
	Action    string   `json:"action,omitempty" toml:"action"`
	Orphans   string   `json:"orphans,omitempty" toml:"orphans"`
	// The model's parameters: durations as "90d", "36h", "30m" or a number
	// in the clock's unit; rates and lambda per unit.
	HalfLife any              `json:"half_life,omitempty" toml:"half_life"`
	Lambda   any              `json:"lambda,omitempty" toml:"lambda"`
	Rate     any              `json:"rate,omitempty" toml:"rate"`
	Hold     any              `json:"hold,omitempty" toml:"hold"`
	Alpha    any              `json:"alpha,omitempty" toml:"alpha"`
	Scale    any              `json:"scale,omitempty" toml:"scale"`
	Tiers    []map[string]any `json:"tiers,omitempty" toml:"tiers"`
}

// Params is the policy's params JSON: the parameters it gives, by name.
func (p Policy) Params() string {
	params := map[string]any{}
	for name, v := range map[string]any{"half_life": p.HalfLife, "lambda": p.Lambda, "rate": p.Rate,
		"hold": p.Hold, "alpha": p.Alpha, "scale": p.Scale} {
		if v != nil {
			params[name] = v
		}
	}
	if p.Tiers != nil {
		params["tiers"] = p.Tiers
	}
	b, err := json.Marshal(params)
	if err != nil {
		panic(err) // numbers, texts and tables of them always marshal
	}
	return string(b)
}

// Row is the policy as the row of mem_edge_policies it declares.
func (p Policy) Row() settings.Policy {
	row := settings.Policy{RelationType: p.Kind, Model: p.Model, Params: sql.NullString{String: p.Params(), Valid: true},
		Clock: p.Clock, Action: p.Action, Orphans: p.Orphans}
	if p.Threshold != nil {
		row.Threshold = sql.NullFloat64{Float64: *p.Threshold, Valid: true}
	}
	return row
}

// checkTerms refuses a setting config set would refuse and a policy the
// sweep would, each in one line naming the file's key, and fills a
// policy's defaults (clock active_hours, action delete, orphans keep).
func (m *Mapping) checkTerms() error {
	for _, key := range sortedNames(m.Settings) {
		if _, err := settingStatement(key, m.Settings[key]); err != nil {
			return err
		}
	}
	if len(m.Policies) > 0 && m.Edges == nil {
		return bad("policies: the mapping names no edges for them to decay (give [edges])")
	}
	seen := map[string]int{}
	for i := range m.Policies {
		p := &m.Policies[i]
		at := fmt.Sprintf("policies[%d]", i)
		if p.Kind == "" {
			return bad("%s: give kind (the edges' relation type the policy decays)", at)
		}
		if j, dup := seen[p.Kind]; dup {
			return bad("%s: kind %q is declared twice (also policies[%d])", at, p.Kind, j)
		}
		seen[p.Kind] = i
		if p.Model == "" {
			return bad("%s: give model (one of %s)", at, said(strings.Join(sqlfuncs.Models, ", ")))
		}
		p.Clock = cmpOr(p.Clock, sqlfuncs.ClockActiveHours)
		p.Action = cmpOr(p.Action, "delete")
		p.Orphans = cmpOr(p.Orphans, "keep")
		// What mem_edge_policies' own CHECKs hold, said before the write.
		if p.Action != "delete" && p.Action != "exclude" {
			return bad("%s.action: %q is not delete or exclude", at, p.Action)
		}
		if p.Orphans != "keep" && p.Orphans != "delete" {
			return bad("%s.orphans: %q is not keep or delete", at, p.Orphans)
		}
		if _, err := p.Row().Resolve(0); err != nil {
			return policyRefusal(at, p.Kind, err)
		}
		e := m.Edges
		if p.Action == "exclude" && e.Excluded == "" {
			return bad("%s.action: exclude keeps the link and marks it, and the mapping names no column to mark it in "+
				"(edges.excluded, a 0/1 column); name one, or use action delete", at)
		}
		if anchor, part := policyAnchor(e, p.Clock); anchor == "" {
			return bad("%s.clock: %s counts from edges.%s, which the mapping does not name: no %s edge would ever decay",
				at, p.Clock, part, p.Kind)
		}
	}
	return nil
}

// policyAnchor is the column a policy on clock counts elapsed time from.
func policyAnchor(e *Edges, clock string) (column, part string) {
	if clock == sqlfuncs.ClockWall {
		return e.LastObserved, "last_observed"
	}
	return e.LastActive, "last_active"
}

// policyRefusal words the sweep's refusal of a policy row by the file's
// key: policies[0].half_life, policies[0].tiers[1].hold.
func policyRefusal(at, kind string, err error) error {
	var arg *sqlfuncs.ArgError
	if !errors.As(err, &arg) {
		if inner := errors.Unwrap(err); inner != nil {
			err = inner // the row's name is the file's key here
		}
		field, problem := "", err.Error()
		if rest, ok := strings.CutPrefix(problem, "threshold "); ok {
			field, problem = ".threshold", rest
		}
		return bad("%s%s (kind %q): %s", at, said(field), kind, said(problem))
	}
	field, problem := "", arg.Problem
	switch a := arg.Arg; {
	case a == "model" || a == "clock":
		field = "." + a
	case a == "params":
		// a key the model does not take, named in the problem
	case strings.HasPrefix(a, "params tier "):
		var n int
		var key string
		if k, _ := fmt.Sscanf(a, "params tier %d %s", &n, &key); k == 2 {
			field = fmt.Sprintf(".tiers[%d].%s", n, key)
		} else {
			field = fmt.Sprintf(".tiers[%d]", n)
		}
	case strings.HasPrefix(a, "params "):
		field = "." + strings.TrimPrefix(a, "params ")
	}
	return bad("%s%s (kind %q): %s", at, said(field), kind, said(problem))
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func sortedNames(s map[string]string) []string {
	names := make([]string, 0, len(s))
	for k := range s {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// Statement is one write that declaring a mapping runs.
type Statement struct {
	Query string
	Args  []any
}

// TermsSQL is the writes that put the mapping's terms in force: each
// setting as config set writes it (a duration in the key's unit), each
// policy's row inserted or replaced. Rows and keys the file does not name
// are left as they are. Run them in the transaction that stores m.
func (m *Mapping) TermsSQL() ([]Statement, error) {
	var out []Statement
	for _, key := range sortedNames(m.Settings) {
		st, err := settingStatement(key, m.Settings[key])
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	for _, p := range m.Policies {
		row := p.Row()
		var threshold any
		if row.Threshold.Valid {
			threshold = row.Threshold.Float64
		}
		out = append(out, Statement{Query: `INSERT INTO main.mem_edge_policies (relation_type, model, params, clock, threshold, action, orphans)
			VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (relation_type) DO UPDATE SET model = excluded.model, params = excluded.params, clock = excluded.clock,
				threshold = excluded.threshold, action = excluded.action, orphans = excluded.orphans`,
			Args: []any{row.RelationType, row.Model, row.Params.String, row.Clock, threshold, row.Action, row.Orphans}})
	}
	return out, nil
}

// settingStatement checks one setting with config set's own validator and
// returns the write it makes: SetConfigForce run against a recorder, which
// keeps the statement instead of running it.
func settingStatement(key, value string) (Statement, error) {
	if slices.Contains(notDeclared, key) {
		return Statement{}, bad("settings.%s: the clock and what sweeps record (%s) are not declared in a mapping; "+
			"use memworker clock or config set", key, said(strings.Join(notDeclared, ", ")))
	}
	if _, ok := settings.LookupConfigKey(key); !ok {
		return Statement{}, bad("settings.%s: unknown key (a mapping sets %s)", key, said(strings.Join(DeclarableSettings(), ", ")))
	}
	var rec recorder
	if err := settings.SetConfigForce(context.Background(), &rec, key, value); err != nil {
		problem := err.Error()
		if i := strings.Index(problem, settings.ErrBadSetting.Error()+": "+key+": "); i >= 0 {
			problem = problem[i+len(settings.ErrBadSetting.Error()+": "+key+": "):]
		}
		return Statement{}, bad("settings.%s: %s", key, said(problem))
	}
	if len(rec.writes) != 1 {
		return Statement{}, fmt.Errorf("mapping: settings.%s: config set wrote %d statements, want 1", key, len(rec.writes))
	}
	return rec.writes[0], nil
}

// recorder is a memdb.Querier that keeps the writes made through it and
// reads nothing: what config set would write, without a database.
type recorder struct{ writes []Statement }

var _ memdb.Querier = (*recorder)(nil)

func (r *recorder) ExecContext(_ context.Context, query string, args ...any) (sql.Result, error) {
	r.writes = append(r.writes, Statement{Query: query, Args: args})
	return driver.RowsAffected(1), nil
}

func (r *recorder) QueryContext(context.Context, string, ...any) (*sql.Rows, error) {
	return nil, errors.New("mapping: a setting's check reads nothing")
}

// QueryRowContext is never called: SetConfigForce reads only to refuse
// moving active_hours back, a key a mapping does not set.
func (r *recorder) QueryRowContext(context.Context, string, ...any) *sql.Row {
	panic("mapping: a setting's check reads nothing")
}

// SettingInForce is one mem_config key a mapping may set, its value in
// force, and whether the declared mapping's file names it: FromFile when
// the value in force is the file's, FileValue when it names another (set
// since by config set).
type SettingInForce struct {
	Key       string `json:"key"`
	Value     string `json:"value"`
	FromFile  bool   `json:"from_file"`
	FileValue string `json:"file_value,omitempty"`
}

// PolicyInForce is one row of mem_edge_policies, and whether the declared
// mapping's file declares it: FromFile when the row is the file's, Changed
// when the file declares the kind but the row differs (changed since).
// Declared is a policy the file declares that is no longer in force.
type PolicyInForce struct {
	Kind      string   `json:"kind"`
	Model     string   `json:"model"`
	Params    string   `json:"params"`
	Clock     string   `json:"clock"`
	Threshold *float64 `json:"threshold,omitempty"`
	Action    string   `json:"action"`
	Orphans   string   `json:"orphans"`
	FromFile  bool     `json:"from_file"`
	Changed   bool     `json:"changed_since,omitempty"`
	Missing   bool     `json:"not_in_force,omitempty"`
}

// Terms are the settings and policies in force.
type Terms struct {
	Settings []SettingInForce `json:"settings"`
	Policies []PolicyInForce  `json:"policies"`
}

// TermsInForce reads the settings a mapping may set and every relation
// policy, marking what m's file declared. Rows the file does not name are
// listed too: declaring a mapping leaves them as they are.
func TermsInForce(ctx context.Context, q memdb.Querier, m *Mapping) (*Terms, error) {
	values, err := settings.ConfigValues(ctx, q)
	if err != nil {
		return nil, err
	}
	t := &Terms{Settings: []SettingInForce{}, Policies: []PolicyInForce{}}
	for _, key := range DeclarableSettings() {
		s := SettingInForce{Key: key, Value: values[key]}
		if v, named := m.Settings[key]; named {
			if st, err := settingStatement(key, v); err == nil && sameValue(st.Args[len(st.Args)-1], s.Value) {
				s.FromFile = true
			} else {
				s.FileValue = v
			}
		}
		t.Settings = append(t.Settings, s)
	}
	rows, err := settings.ReadPolicies(ctx, q)
	if err != nil {
		return nil, err
	}
	declared := map[string]Policy{}
	for _, p := range m.Policies {
		declared[p.Kind] = p
	}
	for _, r := range rows {
		in := PolicyInForce{Kind: r.RelationType, Model: r.Model, Params: r.Params.String, Clock: r.Clock, Action: r.Action, Orphans: r.Orphans}
		if r.Threshold.Valid {
			in.Threshold = &r.Threshold.Float64
		}
		if p, named := declared[r.RelationType]; named {
			in.FromFile = samePolicy(p.Row(), r)
			in.Changed = !in.FromFile
			delete(declared, r.RelationType)
		}
		t.Policies = append(t.Policies, in)
	}
	for _, p := range m.Policies {
		if _, missing := declared[p.Kind]; missing {
			t.Policies = append(t.Policies, PolicyInForce{Kind: p.Kind, Model: p.Model, Params: p.Params(), Clock: p.Clock,
				Threshold: p.Threshold, Action: p.Action, Orphans: p.Orphans, Missing: true})
		}
	}
	return t, nil
}

// sameValue compares a value config set would store with one read back
// as text: numbers as numbers (SQLite prints a real with 15 digits).
func sameValue(stored any, read string) bool {
	if f, ok := stored.(float64); ok {
		r, err := strconv.ParseFloat(strings.TrimSpace(read), 64)
		return err == nil && (r == f || math.Abs(r-f) <= 1e-14*math.Abs(f))
	}
	return fmt.Sprint(stored) == read
}

// samePolicy compares a declared row with one read, params as JSON values.
func samePolicy(a, b settings.Policy) bool {
	if a.Model != b.Model || a.Clock != b.Clock || a.Action != b.Action || a.Orphans != b.Orphans || a.Threshold != b.Threshold {
		return false
	}
	var pa, pb any
	if json.Unmarshal([]byte(a.Params.String), &pa) != nil || json.Unmarshal([]byte(cmpOr(b.Params.String, "{}")), &pb) != nil {
		return false
	}
	return reflect.DeepEqual(pa, pb)
}
