package readers

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/memdecay/memdecay/schema"
	"github.com/memdecay/memdecay/worker/internal/adapter"
	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/settings"
	"github.com/memdecay/memdecay/worker/internal/store"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
	"github.com/memdecay/memdecay/worker/mapping"
)

// Status is a database's health at a glance.
type Status struct {
	Path             string   `json:"path"`
	SchemaVersion    uint     `json:"schema_version"`
	ActiveHours      float64  `json:"active_hours"`
	LastCurateAt     *float64 `json:"last_curate_at"`
	HoursSinceCurate *float64 `json:"hours_since_curate"`
	// SweepAheadHours is how far the last sweep ran ahead of the clock
	// (sweep --now past it, which leaves the clock where it is); then
	// HoursSinceCurate is 0, never a negative age.
	SweepAheadHours *float64       `json:"last_sweep_ahead_hours,omitempty"`
	CurateDue       bool           `json:"curate_due"`
	Blocks          map[string]int `json:"blocks"`
	Edges           int64          `json:"edges"`
	Facts           map[string]int `json:"facts"`
	Events          int64          `json:"events"`
	EdgesDecayed    int64          `json:"edges_decayed_total"`
	LastSweep       *SweepRecord   `json:"last_sweep"`
	// FileBytes and WALBytes are the sizes of a file database and of its
	// -wal beside it (none on rqlite). A reader that holds a transaction
	// open keeps every page written since from being checkpointed back, so
	// beside a long sweep the WAL grows until it lets go.
	FileBytes *int64 `json:"file_bytes,omitempty"`
	WALBytes  *int64 `json:"wal_bytes,omitempty"`
	// Mapping names the mapping in force ("mem": memworker's own tables),
	// and MappingTables what its roles are when an app's tables are
	// declared (docs/mapping.md); then the counts are of the app's rows
	// and the clock is the one its sweeps run on.
	Mapping       string `json:"mapping"`
	MappingTables string `json:"mapping_tables,omitempty"`
	// WallClockHours: the mapping's times are wall times, so the clock
	// (active_hours and the sweeps' clocks) is the wall clock in hours
	// since 1970.
	WallClockHours bool `json:"wall_clock_hours,omitempty"`
}

// LargeWAL reports a WAL worth a person's attention: bigger than the file
// it belongs to, or than a sweep leaves it (WALSizeLimit).
func (st *Status) LargeWAL() bool {
	return st.WALBytes != nil && st.FileBytes != nil && (*st.WALBytes > *st.FileBytes || *st.WALBytes > store.WALSizeLimit)
}

// SweepRecord is one row of mem_sweeps.
type SweepRecord struct {
	ID         int64   `json:"id"`
	Status     string  `json:"status"`
	ClockHours float64 `json:"clock_hours"`
	StartedAt  int64   `json:"started_at"`
	FinishedAt *int64  `json:"finished_at"`
	Summary    string  `json:"summary"`
}

// GetStatus reads counts, the clock and the last sweep.
func GetStatus(ctx context.Context, db *memdb.DB) (*Status, error) {
	cfg, mapped, err := adapter.SweepConfig(ctx, db, time.Now())
	if err != nil {
		return nil, err
	}
	v, _, err := schema.Version(db.SQL)
	if err != nil {
		return nil, err
	}
	st := &Status{Path: db.Path, SchemaVersion: v, ActiveHours: cfg.ActiveHours, LastCurateAt: cfg.LastCurateAt,
		EdgesDecayed: cfg.EdgesDecayedTotal,
		// Every status the schema allows, zero counts included, so a
		// reader of the JSON finds each key.
		Blocks: map[string]int{"inbox": 0, "active": 0, "archived": 0},
		Facts:  map[string]int{"active": 0, "confirmed": 0, "archived": 0}}
	if !db.Rqlite {
		if fi, err := os.Stat(db.Path); err == nil {
			size := fi.Size()
			st.FileBytes = &size
			wal := int64(0)
			if wi, err := os.Stat(db.Path + "-wal"); err == nil {
				wal = wi.Size()
			}
			st.WALBytes = &wal
		}
	}
	d, err := mapping.Load(ctx, db.SQL)
	if err != nil {
		return nil, err
	}
	st.Mapping = d.Preset
	counts := map[string]map[string]int{"SELECT status, count(*) FROM mem_blocks GROUP BY status": st.Blocks,
		"SELECT status, count(*) FROM mem_facts GROUP BY status": st.Facts}
	edges := "SELECT count(*) FROM mem_edges"
	if mapped != nil { // the app's own rows
		st.Mapping, st.MappingTables = d.Source, d.Tables()
		st.WallClockHours = mapped.WallHours
		counts, edges = mapped.StatusCounts(st.Blocks, st.Facts)
	}
	st.HoursSinceCurate, st.SweepAheadHours = cfg.HoursSinceSweep()
	st.CurateDue = cfg.SweepDue()
	for query, m := range counts {
		rows, err := db.SQL.QueryContext(ctx, query)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var s string
			var n int
			if err := rows.Scan(&s, &n); err != nil {
				rows.Close()
				return nil, err
			}
			m[s] = n
		}
		rows.Close()
	}
	archives, err := sweepsql.ReadArchives(ctx, db.SQL)
	if err != nil {
		return nil, err
	}
	if err := db.SQL.QueryRowContext(ctx, "SELECT ("+edges+"), "+sweepsql.EventCount(archives)).
		Scan(&st.Edges, &st.Events); err != nil {
		return nil, err
	}
	var rec SweepRecord
	var finished sql.NullInt64
	err = db.SQL.QueryRowContext(ctx, `SELECT id, status, coalesce(clock_hours, 0), started_at, finished_at,
		coalesce(json_extract(result, '$.summary'), '') FROM mem_sweeps ORDER BY id DESC LIMIT 1`).
		Scan(&rec.ID, &rec.Status, &rec.ClockHours, &rec.StartedAt, &finished, &rec.Summary)
	switch {
	case err == nil:
		if finished.Valid {
			rec.FinishedAt = &finished.Int64
		}
		st.LastSweep = &rec
	case !errors.Is(err, sql.ErrNoRows):
		return nil, err
	}
	return st, nil
}

// AdvanceClock adds hours of activity to the session-aware clock and
// returns the new reading.
func AdvanceClock(ctx context.Context, db *memdb.DB, hours float64) (float64, error) {
	if hours < 0 {
		return 0, fmt.Errorf("clock advance: %v is negative; the active-hours clock only moves forward", hours)
	}
	if err := settings.FiniteHours(hours); err != nil {
		return 0, fmt.Errorf("clock advance: %w", err)
	}
	var now float64
	err := db.SQL.QueryRowContext(ctx, sweepsql.MemSQL(`UPDATE mem_config SET value = value + :hours
		WHERE key = 'active_hours' AND value + :hours <= MAX_FINITE RETURNING value`), sql.Named("hours", hours)).Scan(&now)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("clock advance: %v more hours would take the clock past the largest finite number", hours)
	}
	if err != nil {
		return 0, fmt.Errorf("clock advance: %w", err)
	}
	return now, nil
}
