package mapping

// A mapping's decay terms, in the app's own units and values: how fast
// each tier fades ([tiers], half-lives on the mapping's clock), which tier
// each of the app's categories is (nodes.category_tiers), which parts of a
// node a sweep may write (nodes.writes), and which of the reference's
// segments each of the app's fact segments is (facts.segment_map). The
// tiers and categories reach the sweep and the readers' views as the
// JSON arguments of tier_lambda, lambda_edge and decay_tier (HalfLives,
// CategoryTiersJSON): one formula, in sqlfuncs.

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/memdecay/memdecay/sqlfuncs"
)

// Tiers are half-lives by tier name: "90d", "36h", "2w" or a number of
// hours, on the mapping's clock (wall hours where its times are wall
// times, else active hours).
type Tiers map[string]string

// UnmarshalTOML takes a table of durations and numbers.
func (t *Tiers) UnmarshalTOML(v any) (err error) {
	*t, err = textTableTOML("tiers", "tiers and their half-lives", v)
	return err
}

// UnmarshalJSON takes an object of durations and numbers.
func (t *Tiers) UnmarshalJSON(b []byte) (err error) {
	*t, err = textTableJSON("tiers", "tiers and their half-lives", b)
	return err
}

// WallClock reports whether the mapping's hours are wall hours: its nodes'
// time of use or its edges' time of activity is a wall time (then a sweep's
// clock is unix time in hours, and a half-life of "30d" is 30 days).
func (m *Mapping) WallClock() bool {
	wall := func(c string) bool { return c != "" && c != ClockActiveHours }
	return (m.Nodes != nil && m.Nodes.LastUsed != "" && wall(m.Nodes.LastUsedClock)) ||
		(m.Edges != nil && m.Edges.LastActive != "" && wall(m.Edges.LastActiveClock))
}

// HalfLives is [tiers] as the half_lives argument of tier_lambda and
// lambda_edge (a JSON object), or "" when the mapping declares none.
func (m *Mapping) HalfLives() string {
	if len(m.Tiers) == 0 {
		return ""
	}
	return compactJSON(map[string]string(m.Tiers))
}

// CategoryTiersJSON is nodes.category_tiers as decay_tier's
// category_tiers argument, or "" when the mapping declares none.
func (m *Mapping) CategoryTiersJSON() string {
	if m.Nodes == nil || len(m.Nodes.CategoryTiers) == 0 {
		return ""
	}
	return compactJSON(m.Nodes.CategoryTiers)
}

// compactJSON is a map of texts as JSON, its keys in order.
func compactJSON(v map[string]string) string {
	b, err := json.Marshal(v) // encoding/json sorts map keys
	if err != nil {
		panic(err) // texts always marshal
	}
	return string(b)
}

// The parts of a node a sweep writes, as nodes.writes names them.
const (
	WriteStatus        = "status"              // an archival
	WriteArchiveReason = "archive_reason"      // an archival's reason
	WriteLastUsed      = "last_used"           // a reinforcement's time of use
	WriteReinforcement = "reinforcement_count" // a reinforcement's count
)

// nodeWrites are the parts nodes.writes may name, in the order map show
// prints them.
var nodeWrites = []string{WriteStatus, WriteArchiveReason, WriteLastUsed, WriteReinforcement}

// MayWrite reports whether a sweep may write part of a node (nodes.writes;
// every part the mapping names when it is not given).
func (n *Nodes) MayWrite(part string) bool {
	return len(n.Writes) == 0 || slices.Contains(n.Writes, part)
}

// column is the column that plays a part a sweep writes, "" when the
// mapping names none.
func (n *Nodes) column(part string) string {
	switch part {
	case WriteStatus:
		return n.Status
	case WriteArchiveReason:
		return n.ArchiveReason
	case WriteLastUsed:
		return n.LastUsed
	case WriteReinforcement:
		return n.Reinforcement
	}
	return ""
}

// Reinforces reports whether a sweep's reinforcement writes anything to
// the app's nodes: a time of use or a count it may write. Without either
// a sweep reinforces no node of this mapping (and says none).
func (m *Mapping) Reinforces() bool {
	n := m.Nodes
	return n != nil && ((n.LastUsed != "" && n.MayWrite(WriteLastUsed)) ||
		(n.Reinforcement != "" && n.MayWrite(WriteReinforcement)))
}

// checkDecay refuses decay terms that are wrong whatever the schema, each
// in one line naming the file's key.
func (m *Mapping) checkDecay() error {
	if len(m.Tiers) > 0 {
		if m.Nodes == nil && m.Edges == nil {
			return bad("tiers: the mapping names no nodes or edges for them to decay")
		}
		if _, err := sqlfuncs.ParseHalfLives("mapping", "tiers", m.HalfLives()); err != nil {
			return termRefusal(err)
		}
	}
	if n := m.Nodes; n != nil {
		if len(n.CategoryTiers) > 0 {
			if n.Category == "" {
				return bad("nodes.category_tiers: give nodes.category, the column whose values it maps")
			}
			if _, err := sqlfuncs.ParseCategoryTiers("mapping", "nodes.category_tiers", m.CategoryTiersJSON()); err != nil {
				return termRefusal(err)
			}
		}
		for _, part := range n.Writes {
			if !slices.Contains(nodeWrites, part) {
				return bad("nodes.writes: %q is not a part a sweep writes (want %s)", part, strings.Join(nodeWrites, ", "))
			}
			if n.column(part) == "" {
				return bad("nodes.writes: %s: the mapping names no column for it (give nodes.%s, or leave it out of writes)", part, part)
			}
		}
		if len(n.Writes) > 0 && !n.MayWrite(WriteStatus) {
			return bad("nodes.writes: give status: a sweep archives a faded node by its status (set block_archival = off to archive none)")
		}
	}
	if f := m.Facts; f != nil && len(f.SegmentMap) > 0 {
		if f.Segment == "" {
			return bad("facts.segment_map: give facts.segment, the column whose values it maps")
		}
		known := sqlfuncs.SegmentNames()
		for _, value := range sortedNames(f.SegmentMap) {
			if to := f.SegmentMap[value]; !slices.Contains(known, to) {
				return bad("facts.segment_map: %q → %q: not a segment (want one of %s)", value, to, strings.Join(known, ", "))
			}
		}
	}
	return nil
}

// MappedValues is the SQL expression expr with the values a map names
// replaced by theirs (facts.segment_map), in key order; expr itself when
// the map is empty.
func MappedValues(expr string, values map[string]string) string {
	if len(values) == 0 {
		return expr
	}
	var b strings.Builder
	b.WriteString("(CASE " + expr)
	for _, k := range sortedNames(values) {
		b.WriteString(" WHEN " + textList([]string{k}) + " THEN " + textList([]string{values[k]}))
	}
	b.WriteString(" ELSE " + expr + " END)")
	return b.String()
}

// termRefusal is a refusal of a term sqlfuncs read, in the file's words
// (its key and what is wrong, not the SQL function's name).
func termRefusal(err error) error {
	var ae *sqlfuncs.ArgError
	if errors.As(err, &ae) {
		return fmt.Errorf("%w: %s: %s", ErrBadMapping, ae.Arg, ae.Problem)
	}
	return fmt.Errorf("%w: %v", ErrBadMapping, err)
}
