package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/memdecay/memdecay/sqlfuncs"
	"github.com/memdecay/memdecay/worker"
	"github.com/memdecay/memdecay/worker/mapping"
)

func mapCommand(now func() time.Time) *cli.Command {
	return withFlags(&cli.Command{
		Name:  "map",
		Usage: "declare which of the database's tables memworker sweeps (docs/mapping.md)",
		Subcommands: []*cli.Command{
			{Name: "show", Usage: "print the mapping in force, and whether it fits the schema", Flags: []cli.Flag{jsonFlag()},
				Action: func(c *cli.Context) error {
					db, err := openMemory(c, true)
					if err != nil {
						return err
					}
					defer db.Close()
					d, err := mapping.Load(c.Context, db.SQL)
					if err != nil {
						return err
					}
					fits := d.Validate(c.Context, db.SQL)
					terms, err := mapping.TermsInForce(c.Context, db.SQL, d.Mapping)
					if err != nil {
						return err
					}
					if c.Bool("json") {
						out := map[string]any{"mapping": d.Mapping, "source": d.Source, "fits_schema": fits == nil, "terms": terms}
						if !d.DeclaredAt.IsZero() {
							out["declared_at"] = d.DeclaredAt.Unix()
						}
						if fits != nil {
							out["problem"] = fits.Error()
						}
						if err := printJSON(c.App.Writer, out); err != nil {
							return err
						}
					} else {
						printMapping(c.App.Writer, d)
						printTerms(c.App.Writer, d, terms)
						if fits == nil {
							fmt.Fprintln(c.App.Writer, "It fits the database's schema.")
						}
					}
					return fits
				}},
			{Name: "use", Usage: "declare a preset: " + strings.Join(mapping.Presets(), " or ") + " (mem: memworker's own mem_ tables, the default)",
				ArgsUsage: "PRESET",
				Action: func(c *cli.Context) error {
					args, err := positional(c)
					if err != nil {
						return err
					}
					if len(args) != 1 {
						return usagef("map use", "map use: give one PRESET (%s)", strings.Join(mapping.Presets(), ", "))
					}
					m, err := mapping.Preset(args[0])
					if err != nil {
						return usagef("map use", "%v", err)
					}
					return declare(c, m, "preset "+args[0], now)
				}},
			{Name: "load", Usage: "declare the mapping an app keeps in FILE (JSON or TOML); --check validates it against the database and stores nothing",
				ArgsUsage: "FILE",
				Flags:     []cli.Flag{&cli.BoolFlag{Name: "check", Usage: "validate FILE against the database's schema; change nothing"}},
				Action: func(c *cli.Context) error {
					args, err := positional(c)
					if err != nil {
						return err
					}
					if len(args) != 1 {
						return usagef("map load", "map load: give one FILE")
					}
					text, err := os.ReadFile(args[0])
					if err != nil {
						return fmt.Errorf("map load: %w", err)
					}
					m, err := mapping.Parse(filepath.Base(args[0]), text)
					if err != nil {
						return err
					}
					if c.Bool("check") {
						db, err := openMemory(c, true)
						if err != nil {
							return err
						}
						defer db.Close()
						if err := m.Validate(c.Context, db.SQL); err != nil {
							return err
						}
						terms, err := mapping.TermsInForce(c.Context, db.SQL, m)
						if err != nil {
							return err
						}
						fmt.Fprintf(c.App.Writer, "%s fits the database's schema; nothing was stored (without --check, map load declares it)\n", args[0])
						printPending(c.App.Writer, m, terms)
						return printUnplaced(c, db.SQL, m)
					}
					return declare(c, m, filepath.Base(args[0]), now)
				}},
		},
	})
}

// declare stores m as the database's mapping and prints it.
func declare(c *cli.Context, m *mapping.Mapping, source string, now func() time.Time) error {
	db, err := openMemory(c, false)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := worker.DeclareMapping(c.Context, db, m, source, now()); err != nil {
		if errors.Is(err, mapping.ErrBadMapping) {
			return fmt.Errorf("%w; nothing was changed", err)
		}
		return err
	}
	d, err := mapping.Load(c.Context, db.SQL)
	if err != nil {
		return err
	}
	fmt.Fprintln(c.App.Writer, "Declared; the next sweep computes every row again.")
	var triggers, indexes int
	if err := db.SQL.QueryRowContext(c.Context, `SELECT count(*) FILTER (WHERE type = 'trigger'), count(*) FILTER (WHERE type = 'index')
		FROM sqlite_master WHERE name LIKE 'mem\_map\_%' ESCAPE '\'`).Scan(&triggers, &indexes); err != nil {
		return err
	}
	if triggers+indexes > 0 {
		fmt.Fprintf(c.App.Writer, "On the app's tables: %d change-capture triggers and %d indexes, named mem_map_… (plain SQL; memworker map use mem drops them).\n",
			triggers, indexes)
	}
	printMapping(c.App.Writer, d)
	terms, err := mapping.TermsInForce(c.Context, db.SQL, d.Mapping)
	if err != nil {
		return err
	}
	printTerms(c.App.Writer, d, terms)
	return printUnplaced(c, db.SQL, d.Mapping)
}

// printTerms writes the settings a mapping may set and the relation
// policies in force, marking what the declared mapping's file set: a file
// changes the keys and kinds it names, and leaves the others as they are.
func printTerms(w io.Writer, d *mapping.Declared, t *mapping.Terms) {
	file := safe(d.Source)
	fmt.Fprintln(w, "settings in force (mem_config; memworker config set changes one):")
	for _, s := range t.Settings {
		mark := ""
		switch {
		case s.FromFile:
			mark = "from " + file
		case s.FileValue != "":
			mark = fmt.Sprintf("%s says %s; changed since", file, safe(s.FileValue))
		}
		fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("  %-28s %-10s %s", s.Key, safe(s.Value), mark), " "))
	}
	if len(t.Policies) == 0 {
		fmt.Fprintln(w, "policies in force: none (every kind decays by the tiered default)")
		return
	}
	fmt.Fprintln(w, "policies in force (mem_edge_policies, by edge kind):")
	for _, p := range t.Policies {
		mark := ""
		switch {
		case p.Missing:
			mark = "declared by " + file + ", not in force: deleted since"
		case p.FromFile:
			mark = "from " + file
		case p.Changed:
			mark = "declared by " + file + "; changed since"
		case d.Mapping.Preset == "":
			mark = "not in " + file + ": left as it was"
		}
		fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("  %-20s %s  %s", safe(p.Kind), policyText(p, d.Mapping.WallClock()), mark), " "))
	}
}

// printUnplaced names the values of the app's rows m places nowhere, with
// their counts and what a sweep does with them (mapping.Unplaced).
func printUnplaced(c *cli.Context, q mapping.Querier, m *mapping.Mapping) error {
	lines, err := mapping.Unplaced(c.Context, q, m)
	if err != nil || len(lines) == 0 {
		return err
	}
	fmt.Fprintln(c.App.Writer, "Values of the app's rows the mapping does not place:")
	for _, l := range lines {
		fmt.Fprintln(c.App.Writer, "  "+escapeControls(l))
	}
	return nil
}

// printPending writes what declaring m would change of the terms in force.
func printPending(w io.Writer, m *mapping.Mapping, t *mapping.Terms) {
	if len(m.Settings) == 0 && len(m.Policies) == 0 {
		return
	}
	fmt.Fprintln(w, "Declaring it would put in force:")
	for _, s := range t.Settings {
		switch {
		case s.FromFile:
			fmt.Fprintf(w, "  settings.%s = %s (as now)\n", s.Key, safe(m.Settings[s.Key]))
		case s.FileValue != "":
			fmt.Fprintf(w, "  settings.%s = %s (now %s)\n", s.Key, safe(s.FileValue), safe(s.Value))
		}
	}
	inForce := map[string]mapping.PolicyInForce{}
	for _, p := range t.Policies {
		inForce[p.Kind] = p
	}
	for _, p := range m.Policies {
		text := policyText(mapping.PolicyInForce{Model: p.Model, Params: p.Params(), Clock: p.Clock, Threshold: p.Threshold,
			Action: p.Action, Orphans: p.Orphans}, m.WallClock())
		switch now := inForce[p.Kind]; {
		case now.FromFile:
			fmt.Fprintf(w, "  policy %s: %s (as now)\n", safe(p.Kind), text)
		case now.Changed:
			fmt.Fprintf(w, "  policy %s: %s (now %s)\n", safe(p.Kind), text, policyText(now, m.WallClock()))
		default:
			fmt.Fprintf(w, "  policy %s: %s (new)\n", safe(p.Kind), text)
		}
	}
}

// policyText is a policy row as one reads it; the hours of a mapping of
// wall times (hoursOnWall) are wall-clock hours.
func policyText(p mapping.PolicyInForce, hoursOnWall bool) string {
	clock := "active hours"
	switch {
	case p.Clock == "wall":
		clock = "the wall clock"
	case hoursOnWall:
		clock = "wall-clock hours"
	}
	threshold := "default threshold"
	if p.Threshold != nil {
		threshold = fmt.Sprintf("threshold %v", *p.Threshold)
	}
	return fmt.Sprintf("%s %s on %s, %s, %s, orphans %s", safe(p.Model), safe(p.Params), clock, threshold, safe(p.Action), safe(p.Orphans))
}

// printMapping writes the mapping as a person reads it: one role a block,
// one part a line, what is absent said so.
func printMapping(w io.Writer, d *mapping.Declared) {
	switch {
	case d.Source == "":
		fmt.Fprintf(w, "Mapping: preset %s (none declared: memworker's own mem_ tables)\n", d.Preset)
	default:
		fmt.Fprintf(w, "Mapping: %s, declared %s\n", d.Source, d.DeclaredAt.Format("2006-01-02 15:04 UTC"))
	}
	line := func(part, column, note string) {
		if column == "" {
			return
		}
		if note != "" {
			column += " (" + note + ")"
		}
		fmt.Fprintf(w, "  %-20s %s\n", part, column)
	}
	if n := d.Nodes; n != nil {
		fmt.Fprintf(w, "nodes: table %s, key %s\n", n.Table, n.Key)
		line("last used", n.LastUsed, clockName(n.LastUsedClock))
		line("category", n.Category, "")
		if len(n.CategoryTiers) > 0 {
			line("category tiers", pairs(n.CategoryTiers), "after the tags; other values by the reference rules")
		}
		if t := n.Tags; t != nil {
			if t.Column != "" {
				line("tags", t.Column, "a JSON array or a comma-separated list")
			} else {
				line("tags", fmt.Sprintf("%s.%s by %s.%s", t.Table, t.Tag, t.Table, t.NodeID), "")
			}
		}
		if n.Status != "" {
			line("status", n.Status, fmt.Sprintf("active when %s; a sweep writes %s", quoted(n.StatusActive), quoted([]string{n.StatusArchived})))
		}
		line("archive reason", n.ArchiveReason, "")
		line("confidence", n.Confidence, "")
		line("reinforcement count", n.Reinforcement, "")
		line("pinned", n.Pinned, "a node holding a value other than 0 or NULL is never archived")
		for _, dep := range n.Dependents {
			line("dependents", dep.Table+" by "+strings.Join(dep.Columns, ", "), "archived with the node, restored with it")
		}
		if len(n.Writes) > 0 {
			note := ""
			if !d.Mapping.Reinforces() {
				note = "no time of use or count: a sweep reinforces no node"
			}
			line("a sweep writes", strings.Join(n.Writes, ", "), note)
		}
	} else {
		fmt.Fprintln(w, "nodes: none")
	}
	if e := d.Edges; e != nil {
		way := "undirected"
		if e.Directed {
			way = "directed"
		}
		fmt.Fprintf(w, "edges: table %s, key %s, %s\n", e.Table, e.Key, way)
		line("from, to", e.From+", "+e.To, "")
		line("kind", e.Kind, "each kind decays by its own policy")
		if e.WeightConstant != nil {
			line("weight", fmt.Sprint(*e.WeightConstant), "a constant")
		}
		line("weight", e.Weight, "")
		line("reinforcement count", e.Reinforcement, "")
		line("origin", e.Origin, "")
		line("pinned", e.Pinned, "")
		line("excluded", e.Excluded, "set and cleared by exclude policies")
		line("last active", e.LastActive, clockName(e.LastActiveClock))
		line("last observed", e.LastObserved, clockName(e.LastObservedClock))
	} else {
		fmt.Fprintln(w, "edges: none")
	}
	if f := d.Facts; f != nil {
		fmt.Fprintf(w, "facts: table %s, key %s\n", f.Table, f.Key)
		line("segment", f.Segment, "")
		if len(f.SegmentMap) > 0 {
			line("segment map", pairs(f.SegmentMap), "other values as they are")
		}
		line("tier", f.Tier, "")
		line("importance", f.Importance, "")
		line("decay rate", f.DecayRate, "")
		line("access count", f.AccessCount, "")
		line("last access", f.LastAccess, clockName(f.LastAccessClock))
		line("created at", f.CreatedAt, clockName(f.CreatedAtClock))
		if f.Status != "" {
			note := fmt.Sprintf("active when %s", quoted(f.StatusActive))
			if len(f.StatusConfirmed) > 0 {
				note += ", confirmed (kept) when " + quoted(f.StatusConfirmed)
			}
			line("status", f.Status, note+"; a sweep writes "+quoted([]string{f.StatusArchived}))
		}
	} else {
		fmt.Fprintln(w, "facts: none")
	}
	if k := d.Clock; k != nil {
		fmt.Fprintf(w, "clock: table %s, %s = '%s' holds the active hours", k.Table, k.KeyColumn, k.ActiveHoursKey)
		if k.LastCurateKey != "" {
			fmt.Fprintf(w, ", '%s' the last sweep", k.LastCurateKey)
		}
		fmt.Fprintln(w)
	}
	printTiers(w, d.Mapping)
}

// printTiers writes each tier's half-life: the mapping's [tiers] where it
// declares one, else the reference rate's, on the mapping's clock.
func printTiers(w io.Writer, m *mapping.Mapping) {
	if m.Nodes == nil && m.Edges == nil {
		return
	}
	clock := "active hours"
	if m.WallClock() {
		clock = "wall-clock time"
	}
	fmt.Fprintf(w, "tiers (half-lives in %s; permanent never fades):\n", clock)
	for _, tier := range []string{sqlfuncs.TierDurable, sqlfuncs.TierStandard, sqlfuncs.TierEphemeral} {
		if h, ok := m.Tiers[tier]; ok {
			fmt.Fprintf(w, "  %-20s %s (from %s)\n", tier, safe(h), "the mapping")
			continue
		}
		rate, _ := sqlfuncs.TierLambda(tier)
		h := math.Ln2 / rate
		fmt.Fprintf(w, "  %-20s %.0fh = %.1fd (the reference rate, %v an hour)\n", tier, h, h/24, rate)
	}
}

// pairs is a map as "key → value" pairs in key order.
func pairs(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = safe(k) + " → " + safe(m[k])
	}
	return strings.Join(out, ", ")
}

// quoted is values as SQL text literals, joined by "or".
func quoted(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
	}
	return strings.Join(q, " or ")
}

func clockName(clock string) string {
	switch clock {
	case mapping.ClockActiveHours:
		return "active hours"
	case mapping.ClockUnixSeconds:
		return "wall clock, unix seconds"
	case mapping.ClockISO8601:
		return "wall clock, ISO-8601 text"
	case mapping.ClockWall:
		return "wall clock, unix seconds or ISO-8601 text"
	}
	return clock
}
