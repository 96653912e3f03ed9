package mapping

// The reads a memory learns its decay from (memworker tune): an app's own
// read log, declared as the role [accesses], or the one memworker keeps for
// it in mem_accesses when nodes.record_accesses is set (its change capture
// appends a row whenever the app moves a node's last_used forward).

import (
	"context"
	"strings"
)

// Accesses is an app's own read log: one row per read of a node, its key
// and its time.
type Accesses struct {
	Table string `json:"table" toml:"table"`
	// Node holds the key of the node read, as the nodes' key does.
	Node string `json:"node" toml:"node"`
	// At is the time of the read, on AtClock.
	At      string `json:"at" toml:"at"`
	AtClock string `json:"at_clock,omitempty" toml:"at_clock"`
}

// RecordedAccesses is the table memworker keeps reads in for a mapping
// with nodes.record_accesses: each row a node's key and the value its
// last_used took, on the nodes' clock.
const RecordedAccesses = "mem_accesses"

// ReadLog is where the mapping's reads are: the declared [accesses], or
// mem_accesses on the nodes' clock when memworker records them; nil when
// the mapping has neither.
func (m *Mapping) ReadLog() *Accesses {
	switch {
	case m.Accesses != nil:
		return m.Accesses
	case m.Nodes != nil && m.Nodes.RecordAccesses:
		return &Accesses{Table: RecordedAccesses, Node: "node", At: "at", AtClock: m.Nodes.LastUsedClock}
	}
	return nil
}

// checkAccesses refuses a read log that is wrong whatever the schema.
func (m *Mapping) checkAccesses() error {
	if n := m.Nodes; n != nil && n.RecordAccesses {
		switch {
		case n.LastUsed == "":
			return bad("nodes.record_accesses: give nodes.last_used: a read is recorded when the app moves it forward")
		case m.Accesses != nil:
			return bad("nodes.record_accesses: the mapping declares its own read log (accesses.table %s); give one or the other", m.Accesses.Table)
		}
	}
	a := m.Accesses
	if a == nil {
		return nil
	}
	if m.Nodes == nil {
		return bad("accesses: the mapping names no nodes for its reads to be of")
	}
	if a.Table == "" || a.Node == "" || a.At == "" {
		return bad("accesses: give table, node (its column of node keys) and at (the time of each read)")
	}
	def := m.Nodes.LastUsedClock // the nodes' clock, when they have one
	if def == "" {
		def = ClockActiveHours
	}
	return clockOf("accesses.at", a.At, &a.AtClock, def, true)
}

// validateAccesses checks the read log against the schema: its table and
// columns exist, its node column holds ids of the nodes' key's kind, its
// times can be on its clock.
func (m *Mapping) validateAccesses(ctx context.Context, q Querier, k *checker, nodeKey []column) error {
	a := m.Accesses
	if m.Nodes != nil && m.Nodes.RecordAccesses {
		if _, err := readTable(ctx, q, "nodes.record_accesses", RecordedAccesses); err != nil {
			return bad("nodes.record_accesses: the database has no table %s: run memworker migrate up", RecordedAccesses)
		}
	}
	if a == nil {
		return nil
	}
	if strings.HasPrefix(strings.ToLower(a.Table), "mem_") {
		return bad("accesses.table: %s is one of memworker's own tables; name the app's read log, or set nodes.record_accesses", a.Table)
	}
	t, err := k.table(ctx, q, "accesses", a.Table, false)
	if err != nil {
		return err
	}
	if err := k.parts(t,
		part{"accesses.node", a.Node, false, false, ""},
		part{"accesses.at", a.At, a.AtClock == ClockActiveHours, false, clockHint("accesses.at")},
	); err != nil {
		return err
	}
	return sameIDs("accesses.node", t, a.Node, m.Nodes.Table, nodeKey)
}
