package adapter

import (
	"strconv"

	"github.com/memdecay/memdecay/worker/internal/sweepsql"
	"github.com/memdecay/memdecay/worker/mapping"
)

// SweepReinforcing is the mem_config key a sweep holds while it
// reinforces nodes (apply_reinforce), so the change capture does not take
// the sweep's own writes of last_used for the app's reads.
const SweepReinforcing = "sweep_reinforcing"

// accessCapture is the statement the nodes' update trigger runs when the
// mapping has memworker record reads (nodes.record_accesses): the node's
// key (key: its text, from a row) and last_used's new value go to
// mem_accesses when the app moved last_used forward. Plain SQL, as every
// trigger on the app's tables: numbers compare as numbers, texts as the
// instants SQLite's julianday reads (as texts when it reads none); a
// sweep's reinforcement and a move back record nothing.
func accessCapture(n *mapping.Nodes, key func(row string) string) string {
	if !n.RecordAccesses || n.LastUsed == "" {
		return ""
	}
	col := func(row string) string { return row + "." + sweepsql.Ident(n.LastUsed) }
	newer := col("NEW") + ` > ` + col("OLD")
	if n.LastUsedClock != mapping.ClockActiveHours && n.LastUsedClock != mapping.ClockUnixSeconds {
		newer = `CASE WHEN typeof(` + col("NEW") + `) IN ('integer', 'real') AND typeof(` + col("OLD") + `) IN ('integer', 'real') THEN ` + newer + `
         ELSE coalesce(julianday(` + col("NEW") + `) > julianday(` + col("OLD") + `), ` + newer + `) END`
	}
	return `
    INSERT INTO ` + mapping.RecordedAccesses + ` (node, at) SELECT ` + key("NEW") + `, ` + col("NEW") + `
    WHERE ` + col("NEW") + ` IS NOT NULL AND (` + col("OLD") + ` IS NULL OR ` + newer + `)
      AND NOT EXISTS (SELECT 1 FROM mem_config WHERE key = '` + SweepReinforcing + `');`
}

// AccessHours is the SQL expression of a read's time in hours of the
// mapping's clock (hours since 1970 on the wall clock), NULL when col
// holds no time on clock.
func AccessHours(col, clock string) string {
	number := `typeof(` + col + `) IN ('integer', 'real')`
	switch clock {
	case mapping.ClockActiveHours:
		return `(CASE WHEN ` + number + ` THEN ` + col + ` END)`
	case mapping.ClockUnixSeconds:
		return `(CASE WHEN ` + number + ` THEN ` + col + ` / 3600.0 END)`
	case mapping.ClockISO8601:
		return `(CASE WHEN typeof(` + col + `) = 'text' THEN try_unix_seconds(` + col + `) / 3600.0 END)`
	}
	return `(` + sweepsql.WallSeconds(col) + ` / 3600.0)`
}

// ExpireAccesses is the statement that removes the reads memworker
// recorded (mem_accesses) older than cutoff, hours on the mapping's clock,
// a chunk (:limit) at a time; a row holding no time goes too. "" when the
// mapping records none.
func (a *Adapted) ExpireAccesses(cutoff float64) string {
	if a == nil || a.Map.Nodes == nil || !a.Map.Nodes.RecordAccesses {
		return ""
	}
	hours := AccessHours("at", a.Map.Nodes.LastUsedClock)
	return `DELETE FROM main.` + mapping.RecordedAccesses + ` WHERE seq IN (SELECT seq FROM main.` + mapping.RecordedAccesses + `
    WHERE coalesce(` + hours + ` < ` + strconv.FormatFloat(cutoff, 'g', -1, 64) + `, 1) ORDER BY seq LIMIT :limit)`
}
