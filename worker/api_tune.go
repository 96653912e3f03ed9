package worker

import (
	"context"
	"time"

	"github.com/memdecay/memdecay/worker/internal/tune"
)

// TuneOptions say how memworker tune replays the reads.
type TuneOptions = tune.Options

// TuneReport is a replay of a database's reads: each tier's declared and
// best half-life and what each gives on the held-out reads.
type TuneReport = tune.Report

// TuneTier is one tier of a TuneReport.
type TuneTier = tune.TierResult

// TuneSkipped is a row of the read log a replay left out, and why.
type TuneSkipped = tune.Skipped

// TierChange is one tier's half-life an apply changed.
type TierChange = tune.Change

// ErrNoReadLog: the mapping in force names no reads to learn from.
var ErrNoReadLog = tune.ErrNoReadLog

// ErrPresetTiers: the mapping in force is a preset, whose tiers no file
// declares; tune --apply refuses it.
var ErrPresetTiers = tune.ErrPreset

// Tune replays the reads of the mapping in force (its [accesses], or the
// reads memworker records) against the sweep's archival rule and finds
// each tier's shortest half-life within the miss budget. It only reads.
func Tune(ctx context.Context, db *DB, opt TuneOptions) (*TuneReport, error) {
	return tune.Tune(ctx, db, opt)
}

// ApplyTiers writes half-lives (tier → "48h") into the declared mapping's
// [tiers] and declares it again; it returns what changed.
func ApplyTiers(ctx context.Context, db *DB, halfLives map[string]string, now time.Time) ([]TierChange, error) {
	return tune.Apply(ctx, db, halfLives, now)
}

// HalfLifeText is a half-life in hours as [tiers] writes it ("3d", "36h").
func HalfLifeText(hours float64) string { return tune.HalfLifeText(hours) }
