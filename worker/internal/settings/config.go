package settings

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memdecay/memdecay/sqlfuncs"
	"github.com/memdecay/memdecay/worker/internal/memdb"
)

// Config is the settings a database carries in mem_config, with the
// defaults the schema seeds.
type Config struct {
	ActiveHours              float64
	EdgePruneThreshold       float64 // static prune: weight below this with no reinforcement
	EdgeDecayThreshold       float64 // temporal decay: effective weight below this
	EstablishedEdgeThreshold float64 // reinforcements from which an edge decays at half rate
	BlockPruneThreshold      float64 // block recency below which a block is archived
	CurateIntervalHours      float64
	ReinforceTopN            int
	MaxDecayFraction         float64 // share of decay candidates removed per sweep
	BlockArchival            bool
	LastCurateAt             *float64 // nil: never swept
	EdgesDecayedTotal        int64
	EventRetentionDays       float64
	// WallClock pins the wall clock of the views and of sweeps without
	// --wall-now (unix seconds); nil is the machine's clock.
	WallClock *time.Time
}

// HoursSinceSweep is the active hours since the last sweep: nil when no
// sweep ran, and 0 when the last one ran ahead of the clock (sweep --now
// past it), with ahead saying by how much; never a negative age.
func (c Config) HoursSinceSweep() (since, ahead *float64) {
	if c.LastCurateAt == nil {
		return nil, nil
	}
	h := c.ActiveHours - *c.LastCurateAt
	if h < 0 {
		a := -h
		return new(float64), &a
	}
	return &h, nil
}

// SweepDue is the one rule for "a sweep is due" (status, run --when-due):
// none ran yet, or curate_interval_hours have passed since the last.
func (c Config) SweepDue() bool {
	since, _ := c.HoursSinceSweep()
	return since == nil || *since >= c.CurateIntervalHours
}

// ConfigKey documents and validates one mem_config key.
type ConfigKey struct {
	name, doc string
	validate  func(string) error
	// durationIn, when set, lets the key be given as a duration (30m, 4h,
	// 2d: the policies' grammar), stored as a number in this clock's unit:
	// sqlfuncs.ClockActiveHours (hours) or sqlfuncs.ClockWall (days).
	durationIn string
}

func number(lo, hi float64) func(string) error {
	return func(s string) error {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%q is not a number", s)
		}
		if v < lo || v > hi {
			return fmt.Errorf("%v is out of range [%v, %v]", v, lo, hi)
		}
		return nil
	}
}

func oneOf(words ...string) func(string) error {
	return func(s string) error {
		if !slices.Contains(words, s) {
			return fmt.Errorf("%q is not one of %s", s, strings.Join(words, ", "))
		}
		return nil
	}
}

func either(a, b func(string) error) func(string) error {
	return func(s string) error {
		if a(s) == nil {
			return nil
		}
		return b(s)
	}
}

// AutoThreshold is edge_decay_threshold's value that means "the prune
// threshold" (mem_clock reads it too: views.go).
const AutoThreshold = "auto"

// ConfigKeys lists every setting, in the order `config get` prints them.
var ConfigKeys = []ConfigKey{
	{"active_hours", "the session-aware clock, in active hours", number(0, math.MaxFloat64), ""},
	{"wall_clock", "unix seconds the views and sweeps take as the wall time ('' = the machine's clock)", either(oneOf(""), number(0, math.MaxFloat64)), ""},
	{"edge_prune_threshold", "static prune: edges below this weight with no reinforcement", number(0, 1), ""},
	{"edge_decay_threshold", "temporal decay threshold ('auto' = edge_prune_threshold)", either(oneOf(AutoThreshold), number(0, 1)), ""},
	{"established_edge_threshold", "reinforcements from which an edge decays at half rate", number(0, math.MaxFloat64), ""},
	{"block_prune_threshold", "block recency below which a block is archived", number(0, 1), ""},
	{"curate_interval_hours", "active hours between sweeps for run --when-due (or a duration: 90m, 40h, 2d)", number(0, math.MaxFloat64), sqlfuncs.ClockActiveHours},
	{"reinforce_top_n", "blocks reinforced by composite score each sweep", number(0, 1e9), ""},
	{"max_decay_fraction", "share of decay candidates removed per sweep, lowest first", number(0, 1), ""},
	{"block_archival", "archive faded blocks: auto or off", oneOf("auto", "off"), ""},
	{"last_curate_at", "clock of the last sweep ('' = never; set by sweeps)", either(oneOf(""), number(0, math.MaxFloat64)), ""},
	{"edges_decayed_total", "edges removed by decay, temporal and by relation policies, all sweeps (set by sweeps)", number(0, math.MaxFloat64), ""},
	{"event_retention_days", "days of mem_events kept, 0 = forever (or a duration: 12h, 90d)", number(0, math.MaxFloat64), sqlfuncs.ClockWall},
}

// LookupConfigKey finds a setting by name.
func LookupConfigKey(name string) (ConfigKey, bool) {
	i := slices.IndexFunc(ConfigKeys, func(k ConfigKey) bool { return k.name == name })
	if i < 0 {
		return ConfigKey{}, false
	}
	return ConfigKeys[i], true
}

// Name and Doc describe a setting.
func (k ConfigKey) Name() string { return k.name }
func (k ConfigKey) Doc() string  { return k.doc }

// ConfigValues reads mem_config as text, keyed by name.
func ConfigValues(ctx context.Context, q memdb.Querier) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT key, CAST(value AS TEXT) FROM mem_config`)
	if err != nil {
		return nil, fmt.Errorf("reading mem_config: %w", err)
	}
	defer rows.Close()
	m := map[string]string{}
	for rows.Next() {
		var k string
		var v sql.NullString
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		m[k] = v.String
	}
	return m, rows.Err()
}

// LoadConfig reads and validates mem_config.
func LoadConfig(ctx context.Context, q memdb.Querier) (Config, error) {
	m, err := ConfigValues(ctx, q)
	if err != nil {
		return Config{}, err
	}
	var firstErr error
	num := func(key string) float64 {
		s := strings.TrimSpace(m[key])
		k, _ := LookupConfigKey(key)
		if err := k.validate(s); err != nil && firstErr == nil {
			firstErr = fmt.Errorf("mem_config %s: %w (fix with: memworker config set %s VALUE)", key, err, key)
		}
		v, _ := strconv.ParseFloat(s, 64)
		return v
	}
	c := Config{
		ActiveHours:              num("active_hours"),
		EdgePruneThreshold:       num("edge_prune_threshold"),
		EstablishedEdgeThreshold: num("established_edge_threshold"),
		BlockPruneThreshold:      num("block_prune_threshold"),
		CurateIntervalHours:      num("curate_interval_hours"),
		ReinforceTopN:            int(num("reinforce_top_n")),
		MaxDecayFraction:         num("max_decay_fraction"),
		EdgesDecayedTotal:        int64(num("edges_decayed_total")),
		EventRetentionDays:       num("event_retention_days"),
	}
	c.EdgeDecayThreshold = c.EdgePruneThreshold
	if s := strings.TrimSpace(m["edge_decay_threshold"]); s != AutoThreshold {
		c.EdgeDecayThreshold = num("edge_decay_threshold")
	}
	c.BlockArchival = strings.TrimSpace(m["block_archival"]) != "off"
	if err := oneOf("auto", "off")(strings.TrimSpace(m["block_archival"])); err != nil && firstErr == nil {
		firstErr = fmt.Errorf("mem_config block_archival: %w", err)
	}
	if s := strings.TrimSpace(m["wall_clock"]); s != "" {
		wall := time.Unix(int64(num("wall_clock")), 0)
		c.WallClock = &wall
	}
	if s := strings.TrimSpace(m["last_curate_at"]); s != "" {
		v := num("last_curate_at")
		c.LastCurateAt = &v
	}
	return c, firstErr
}

// ErrBadSetting is an unknown key or a value out of its range.
var ErrBadSetting = errors.New("invalid setting")

// ErrClockBack refuses moving the active-hours clock back: sweeps already
// decided at the later clock.
var ErrClockBack = errors.New("the active-hours clock only moves forward")

// SetConfig validates and stores one setting; it refuses moving
// active_hours back (SetConfigForce does it).
func SetConfig(ctx context.Context, q memdb.Querier, key, value string) error {
	return setConfig(ctx, q, key, value, false)
}

// SetConfigForce is SetConfig that may move active_hours back.
func SetConfigForce(ctx context.Context, q memdb.Querier, key, value string) error {
	return setConfig(ctx, q, key, value, true)
}

func setConfig(ctx context.Context, q memdb.Querier, key, value string, force bool) error {
	k, ok := LookupConfigKey(key)
	if !ok {
		names := make([]string, len(ConfigKeys))
		for i, k := range ConfigKeys {
			names[i] = k.name
		}
		return fmt.Errorf("config: %w: unknown key %q (known: %s)", ErrBadSetting, key, strings.Join(names, ", "))
	}
	value = strings.TrimSpace(value)
	if k.durationIn != "" && value != "" && strings.ContainsAny(value[len(value)-1:], "mhd") {
		v, err := sqlfuncs.ParseDuration(value, k.durationIn)
		if err != nil {
			return fmt.Errorf("config: %w: %s: %v", ErrBadSetting, key, err)
		}
		value = strconv.FormatFloat(v, 'g', -1, 64)
	}
	if err := k.validate(value); err != nil {
		return fmt.Errorf("config: %w: %s: %v", ErrBadSetting, key, err)
	}
	var stored any = value
	if v, err := strconv.ParseFloat(value, 64); err == nil {
		stored = v
	}
	if key == "active_hours" && !force {
		var now float64
		err := q.QueryRowContext(ctx, `SELECT value FROM mem_config WHERE key = 'active_hours'`).Scan(&now)
		if err == nil && stored.(float64) < now {
			return fmt.Errorf("config: active_hours: moving the clock back from %v to %v: %w (force it only if no sweep ran since)", now, stored, ErrClockBack)
		}
	}
	_, err := q.ExecContext(ctx, `INSERT INTO mem_config(key, value) VALUES (?, ?)
		ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, stored)
	if err != nil {
		return fmt.Errorf("config: set %s: %w", key, err)
	}
	return nil
}
