package report

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Report is the result of one sweep (docs/sweep.md, the report), printed by sweep --json
// and stored in mem_sweeps.result.
type Report struct {
	SweepID int64 `json:"sweep_id"`
	DryRun  bool  `json:"dry_run"`
	Full    bool  `json:"full"`    // every row evaluated, not only the changed and due ones
	Resumed bool  `json:"resumed"` // finished the saved plan of a sweep cut off at this clock
	// DiscardedPlanOf: the sweep cut off at this clock whose saved plan was
	// made under settings changed since, so this one planned afresh.
	DiscardedPlanOf int64   `json:"discarded_plan_of,omitempty"`
	ClockHours      float64 `json:"clock_hours"`
	// ClockOnWall: ClockHours is the wall clock in hours since 1970 (a
	// mapping whose times are wall times), not active hours.
	ClockOnWall            bool  `json:"clock_on_wall,omitempty"`
	WallTime               int64 `json:"wall_time"`
	Archived               int64 `json:"archived"`
	OrphansArchived        int64 `json:"orphans_archived"`
	EdgesRemovedWithBlocks int64 `json:"edges_removed_with_blocks"`
	EdgesPruned            int64 `json:"edges_pruned"`
	EdgesDecayed           int64 `json:"edges_decayed"`
	EdgesDeferred          int64 `json:"edges_deferred"`
	// EdgesRemoved is every edge the sweep removed: with archived blocks,
	// by static prune, by temporal decay and by policy.
	EdgesRemoved             int64         `json:"edges_removed"`
	EdgesBefore              int64         `json:"edges_before"`
	TotalEdgesAfter          int64         `json:"total_edges_after"`
	Reinforced               int64         `json:"reinforced"`
	ConstitutionalReinforced int64         `json:"constitutional_reinforced"`
	BridgeThreshold          *float64      `json:"bridge_threshold"`
	Skipped                  int64         `json:"skipped_concurrent_changes"`
	Policies                 []PolicyCount `json:"policies"`
	Facts                    FactCounts    `json:"facts"`
	InvalidRows              InvalidRows   `json:"invalid_rows"`
	DecayedSample            []EdgeSample  `json:"decayed_sample"`
	EventsExpired            int64         `json:"events_expired"`
	SweepsExpired            int64         `json:"sweeps_expired,omitempty"` // records of sweeps as old as the expired events
	DurationMS               int64         `json:"duration_ms"`
	Summary                  string        `json:"summary"`
	// Planned lists every row the sweep will change, when a dry run was
	// asked for its list (sweep --dry-run --list).
	Planned []PlannedChange `json:"planned,omitempty"`
}

// PolicyCount is the per-relation-policy tally.
type PolicyCount struct {
	RelationType string `json:"relation_type"`
	Processed    int64  `json:"processed"`
	Decayed      int64  `json:"decayed"`
	BelowMinimum int64  `json:"below_minimum"`
	Pinned       int64  `json:"pinned"`
	Excluded     int64  `json:"excluded"`
	Readmitted   int64  `json:"readmitted"`
}

// FactCounts is the fact lifecycle tally.
type FactCounts struct {
	Processed int64 `json:"processed"`
	Archived  int64 `json:"archived"`
	Pruned    int64 `json:"pruned"`
	Kept      int64 `json:"kept"`
	Immune    int64 `json:"immune"`
}

// InvalidSampleSize is how many invalid rows a report names (ListInvalid
// lists them all).
const InvalidSampleSize = 10

// InvalidRows counts rows the sweep skipped because a value the formulas
// need is missing or not a number; they are never deleted.
type InvalidRows struct {
	Count  int64        `json:"count"`
	Sample []InvalidRow `json:"sample"`
}

// InvalidRow names one skipped row: its kind (block, edge, fact), its id
// and what is wrong with it; through a mapping, also the app's table it
// is in (Kind names memworker's own).
type InvalidRow struct {
	Kind    string `json:"kind"`
	Table   string `json:"table,omitempty"`
	ID      string `json:"id"`
	Problem string `json:"problem"`
}

// EdgeSample is one decayed edge in the report.
type EdgeSample struct {
	From            string  `json:"from"`
	To              string  `json:"to"`
	Weight          float64 `json:"weight"`
	EffectiveWeight float64 `json:"effective_weight"`
}

// Escalation is the share of the graph removed in one sweep above which the
// summary warns instead of tipping (reference 002, scenario 16).
const Escalation = 0.25

// CountEdgesRemoved sets EdgesRemoved from the counts of each kind of
// removal (orphaned blocks have no edge left to remove).
func (r *Report) CountEdgesRemoved() {
	r.EdgesRemoved = r.EdgesRemovedWithBlocks + r.EdgesPruned + r.EdgesDecayed
	for _, p := range r.Policies {
		r.EdgesRemoved += p.Decayed
	}
}

// BuildSummary is the one-line human summary of reference 000 §6 step 5:
// the counts, naming every kind of removal, a tip when edges decayed, an
// escalation when more than a quarter of the edges went in one sweep,
// whichever way they went. Invalid rows are counted last, whether or not
// anything else happened.
func (r *Report) BuildSummary() string {
	r.CountEdgesRemoved()
	var parts []string
	add := func(n int64, label string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, label))
		}
	}
	// remainAt is the part the edges left are told after, as in reference
	// 000: temporal decay's, or a policy's decay when no edge decayed
	// otherwise.
	remainAt := -1
	decays := func(n int64, label string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, label))
			if remainAt < 0 || r.EdgesDecayed == 0 {
				remainAt = len(parts) - 1
			}
		}
	}
	if r.EdgesRemovedWithBlocks > 0 {
		parts = append(parts, fmt.Sprintf("%d archived with %d edges", r.Archived, r.EdgesRemovedWithBlocks))
	} else {
		add(r.Archived, "archived")
	}
	add(r.OrphansArchived, "orphans archived")
	add(r.EdgesPruned, "edges pruned")
	decays(r.EdgesDecayed, "edges decayed")
	add(r.EdgesDeferred, "deferred")
	for _, p := range r.Policies {
		decays(p.Decayed, Printable(p.RelationType)+" edges decayed")
		add(p.Excluded, Printable(p.RelationType)+" edges excluded")
		add(p.Readmitted, Printable(p.RelationType)+" edges readmitted")
	}
	if remainAt >= 0 && r.TotalEdgesAfter > 0 {
		parts[remainAt] += fmt.Sprintf(" (%d remain)", r.TotalEdgesAfter)
	}
	add(r.Facts.Archived, "facts archived")
	add(r.Facts.Pruned, "facts pruned")
	add(r.Reinforced, "reinforced")
	add(r.ConstitutionalReinforced, "constitutional reinforced")
	s := "Curated: nothing required."
	if len(parts) > 0 {
		s = "Curated: " + strings.Join(parts, ", ") + "."
	}
	if r.DiscardedPlanOf > 0 {
		s += fmt.Sprintf(" Planned afresh: the saved plan of sweep %d, cut off at this clock, was made under settings changed since.", r.DiscardedPlanOf)
	}
	switch {
	case len(parts) == 0:
	case r.EdgesBefore > 0 && float64(r.EdgesRemoved)/float64(r.EdgesBefore) > Escalation:
		s += fmt.Sprintf(" Graph connections reduced significantly (%.0f%% of edges removed) — rebuild links for recently active blocks.",
			100*float64(r.EdgesRemoved)/float64(r.EdgesBefore))
	case r.EdgesDecayed > 0:
		s += " Tip: rebuild links for recently active blocks (re-run your consolidation) to restore connections."
	}
	if r.InvalidRows.Count > 0 {
		s += fmt.Sprintf(" %d invalid rows skipped (%s lists them).", r.InvalidRows.Count, ListInvalidCommand)
	}
	return s
}

// ListInvalidCommand is the command that lists every invalid row, where a
// report names only InvalidSampleSize of them.
const ListInvalidCommand = "memworker decayed --invalid"

// Printable is database text (an id, a relation type, a value) as a
// terminal should show it: unchanged when every character is printable,
// else Go-quoted ("a\x1b[2J", "b\nc"), so an id can neither drive the
// terminal nor forge a line of output.
func Printable(s string) string {
	if !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// PlannedChange is one row a sweep will change, as a dry run that lists
// its plan has it (sweep --dry-run --list): the row, what the sweep does
// to it and why, in the words of the event it then writes, and the
// numbers that decided it (those that apply to it; the others are left
// out).
type PlannedChange struct {
	// Table is memworker's table (mem_blocks, mem_edges, mem_facts), or
	// through a mapping the app's own.
	Table string `json:"table"`
	Kind  string `json:"kind"` // block, edge or fact
	// Key is the row's key as its table holds it, one value per column of
	// KeyColumns.
	Key        []any    `json:"key"`
	KeyColumns []string `json:"key_columns"`
	// Subject names the row as its event will (mem_events.subject_id).
	Subject string `json:"subject"`
	// Action and Reason are its event's: archive (decayed, orphaned),
	// delete (block_archived), prune (static), decay (temporal,
	// policy:<type>), exclude (below_minimum:<type>), readmit
	// (reobserved:<type>), a fact's archive or prune (faded); and
	// reinforce (top, constitutional), which writes no event.
	Action string `json:"action"`
	Reason string `json:"reason"`
	// From and To are an edge's ends; Block, the archived end an edge goes
	// with.
	From         string   `json:"from,omitempty"`
	To           string   `json:"to,omitempty"`
	Block        string   `json:"block,omitempty"`
	RelationType string   `json:"relation_type,omitempty"`
	Tier         string   `json:"tier,omitempty"`
	Weight       *float64 `json:"weight,omitempty"`
	Effective    *float64 `json:"effective_weight,omitempty"`
	Lambda       *float64 `json:"lambda,omitempty"`
	// Elapsed is the time since the row's anchor, in ElapsedUnit: hours
	// (of the active-hours clock) or days (of the wall clock).
	Elapsed     *float64 `json:"elapsed,omitempty"`
	ElapsedUnit string   `json:"elapsed_unit,omitempty"`
	Recency     *float64 `json:"recency,omitempty"`
	Score       *float64 `json:"score,omitempty"`
	// Threshold is the one the row fell below (a reinforcement has none).
	Threshold          *float64 `json:"threshold,omitempty"`
	Degree             *float64 `json:"degree,omitempty"`
	ReinforcementCount *float64 `json:"reinforcement_count,omitempty"`
	Rank               int64    `json:"rank,omitempty"` // a top-N reinforcement's place
}

// RemovalKinds name every kind of row a sweep removes, archives or
// excludes, as Removals counts them (a policy's removals among them).
var RemovalKinds = []string{"archived", "orphans_archived", "edges_with_blocks", "edges_pruned", "edges_decayed",
	"edges_policy_decayed", "edges_policy_excluded", "facts_archived", "facts_pruned"}

// Removals are the report's removals by kind (RemovalKinds).
func (r *Report) Removals() map[string]int64 {
	out := map[string]int64{
		"archived": r.Archived, "orphans_archived": r.OrphansArchived,
		"edges_with_blocks": r.EdgesRemovedWithBlocks, "edges_pruned": r.EdgesPruned, "edges_decayed": r.EdgesDecayed,
		"edges_policy_decayed": 0, "edges_policy_excluded": 0,
		"facts_archived": r.Facts.Archived, "facts_pruned": r.Facts.Pruned,
	}
	for _, p := range r.Policies {
		out["edges_policy_decayed"] += p.Decayed
		out["edges_policy_excluded"] += p.Excluded
	}
	return out
}

// LogAttrs are the report as a log line's attributes: every kind of
// removal counted, so a policy's removals show beside the others.
func (r *Report) LogAttrs() []any {
	attrs := []any{"sweep_id", r.SweepID, "clock_hours", r.ClockHours, "edges_removed", r.EdgesRemoved}
	removals := r.Removals()
	for _, kind := range RemovalKinds {
		attrs = append(attrs, kind, removals[kind])
	}
	return append(attrs, "invalid_rows", r.InvalidRows.Count, "total_edges_after", r.TotalEdgesAfter,
		"duration_ms", r.DurationMS, "summary", r.Summary)
}
