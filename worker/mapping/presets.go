package mapping

import (
	"fmt"
	"sort"
	"strings"
)

// Default is the preset in force when a database declares no mapping.
const Default = "mem"

// presets are the mappings memworker knows by name.
var presets = map[string]func() *Mapping{
	// memworker's own tables (docs/schema.md).
	"mem": func() *Mapping {
		return &Mapping{
			Preset: "mem",
			Nodes: &Nodes{
				Table: "mem_blocks", Key: Key{"id"},
				LastUsed: "last_reinforced_hours", LastUsedClock: ClockActiveHours,
				Category: "category",
				Tags:     &Tags{Table: "mem_block_tags", NodeID: "block_id", Tag: "tag"},
				Status:   "status", StatusActive: []string{"active"}, StatusArchived: "archived",
				ArchiveReason: "archive_reason", Confidence: "confidence", Reinforcement: "reinforcement_count",
			},
			Edges: &Edges{
				Table: "mem_edges", Key: Key{"from_id", "to_id"}, From: "from_id", To: "to_id",
				Kind: "relation_type", Weight: "weight", Reinforcement: "reinforcement_count",
				Origin: "origin", Pinned: "pinned",
				LastActive: "last_active_hours", LastActiveClock: ClockActiveHours,
				LastObserved: "last_observed_at", LastObservedClock: ClockWall,
			},
			Facts: &Facts{
				Table: "mem_facts", Key: Key{"id"}, Segment: "segment", Tier: "tier",
				Importance: "importance", DecayRate: "decay_rate", AccessCount: "access_count",
				LastAccess: "last_accessed_at", LastAccessClock: ClockWall,
				CreatedAt: "created_at", CreatedAtClock: ClockWall,
				Status: "status", StatusActive: []string{"active"}, StatusConfirmed: []string{"confirmed"},
				StatusArchived: "archived",
			},
		}
	},
	// elfmem's own SQLite schema: blocks (inbox, active, archived; active
	// hours), block_tags, edges (a rowid table, one edge per pair, kept
	// with from_id < to_id) and system_config holding the clock.
	"elfmem": func() *Mapping {
		return &Mapping{
			Preset: "elfmem",
			Nodes: &Nodes{
				Table: "blocks", Key: Key{"id"},
				LastUsed: "last_reinforced_at", LastUsedClock: ClockActiveHours,
				Category: "category",
				Tags:     &Tags{Table: "block_tags", NodeID: "block_id", Tag: "tag"},
				Status:   "status", StatusActive: []string{"active"}, StatusArchived: "archived",
				ArchiveReason: "archive_reason", Confidence: "confidence", Reinforcement: "reinforcement_count",
				// elfmem deletes an archived block's contradictions with it.
				Dependents: []Dependent{{Table: "contradictions", Columns: []string{"block_a_id", "block_b_id"}}},
			},
			Edges: &Edges{
				Table: "edges", Key: Key{"from_id", "to_id"}, From: "from_id", To: "to_id",
				Kind: "relation_type", Weight: "weight", Reinforcement: "reinforcement_count",
				Origin: "origin", LastActive: "last_active_hours", LastActiveClock: ClockActiveHours,
			},
			Clock: &Clock{
				Table: "system_config", KeyColumn: "key", ValueColumn: "value",
				ActiveHoursKey: "total_active_hours", LastCurateKey: "last_curate_at",
			},
		}
	},
}

// Presets lists the presets' names.
func Presets() []string {
	names := make([]string, 0, len(presets))
	for name := range presets {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Preset returns the named preset.
func Preset(name string) (*Mapping, error) {
	p, ok := presets[name]
	if !ok {
		return nil, bad("no preset %q (presets: %s; an app's own tables: memworker map load FILE)", name, strings.Join(Presets(), ", "))
	}
	m := p()
	if err := m.check(); err != nil {
		panic(fmt.Sprintf("preset %s: %v", name, err)) // a preset is code: its own test catches this
	}
	return m, nil
}
