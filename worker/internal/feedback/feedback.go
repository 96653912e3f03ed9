package feedback

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/memdecay/memdecay/sqlfuncs"
	"github.com/memdecay/memdecay/worker/internal/adapter"
	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/settings"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
)

// FactChange is the before and after of a feedback or recall.
type FactChange struct {
	ID                 string   `json:"id"`
	ImportanceBefore   float64  `json:"importance_before"`
	ImportanceAfter    float64  `json:"importance_after"`
	AccessCountAfter   int64    `json:"access_count_after"`
	LastAccessedAt     *float64 `json:"last_accessed_at"`  // in unix seconds, whatever form the row holds
	Problem            string   `json:"problem,omitempty"` // what still keeps sweeps off the fact, if anything
	ClockReset         bool     `json:"clock_reset"`
	Recorded           bool     `json:"recorded"` // false for a passive auto-recall
	ImportanceClamped  bool     `json:"importance_clamped"`
	DirectionOrKind    string   `json:"change"`
	WallTimeUnixSecond int64    `json:"at"`
}

// Feedback applies explicit feedback to a fact and logs it: up raises
// importance and resets the decay clock; down lowers importance and leaves
// the clock to do its work. machine is the machine's wall time; a pinned
// wall_clock wins over it (commandClock).
func Feedback(ctx context.Context, db *memdb.DB, id string, up bool, machine time.Time) (*FactChange, error) {
	kind := "down"
	if up {
		kind = "up"
	}
	return changeFact(ctx, db, id, kind, machine, func(importance float64) (float64, bool, bool) {
		after, clamped := sqlfuncs.FeedbackImportance(importance, up)
		return after, up, clamped
	})
}

// Recall records that a fact was used: access count + 1 and the decay clock
// reset. A passive auto-recall reinforces nothing and writes nothing.
// machine is the machine's wall time (commandClock).
func Recall(ctx context.Context, db *memdb.DB, id string, auto bool, machine time.Time) (*FactChange, error) {
	if auto {
		now, err := settings.CommandWall(ctx, db, machine)
		if err != nil {
			return nil, fmt.Errorf("fact recall: %w", err)
		}
		var c FactChange
		var problem sql.NullString
		err = adapter.ThroughMapping(ctx, db, func(q memdb.Querier, tables *sweepsql.Dialect) error {
			return q.QueryRowContext(ctx, tables.Expand(sweepsql.Macros.Replace(`SELECT f.id, f.importance, f.importance, f.access_count,
			`+factAccessedAt+`, FACT_PROBLEM FROM @FACTS f WHERE f.id = ?`)), id).
				Scan(&c.ID, &c.ImportanceBefore, &c.ImportanceAfter, &c.AccessCountAfter, &c.LastAccessedAt, &problem)
		})
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("fact recall: %q: %w", id, memdb.ErrNoFact)
		}
		if err != nil {
			return nil, fmt.Errorf("fact recall: %w", err)
		}
		c.DirectionOrKind, c.WallTimeUnixSecond, c.Problem = "auto-recall", now.Unix(), problem.String
		return &c, err
	}
	return changeFact(ctx, db, id, "recall", machine, func(importance float64) (float64, bool, bool) { return importance, true, false })
}

// changeFact updates one fact and writes its event in one transaction.
// change maps the importance to (new importance, reset the clock, clamped).
// It reads the fact first and writes only while the fact is as it read it
// (on rqlite the writes go after the reads as one request): when another
// writer changed it in between, nothing is written and it starts again.
func changeFact(ctx context.Context, db *memdb.DB, id, kind string, machine time.Time, change func(float64) (float64, bool, bool)) (*FactChange, error) {
	what := "fact " + kind
	now, err := settings.CommandWall(ctx, db, machine)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	tables := sweepsql.MemTables
	mapped, err := adapter.AdaptMapping(ctx, db, false)
	// On rqlite, which keeps no temp view across requests, the adapter's
	// views come with each statement as common table expressions (with),
	// and the change is written to the app's table itself.
	inTx, with := mapped, ""
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	} else if mapped != nil {
		switch {
		case mapped.Map.Facts == nil:
			return nil, fmt.Errorf("%s: %q: %w (the mapping has no facts)", what, id, memdb.ErrNoFact)
		case kind != "recall" && mapped.Map.Facts.Importance == "":
			return nil, fmt.Errorf("%s: %w", what, adapter.Unsupported("facts.importance: feedback raises or lowers a fact's importance, and the mapping names no column for it"))
		}
		// The app's facts through the adapter's views, made in the
		// transaction's own connection.
		tables = mapped.Tables
		if db.Rqlite {
			ctes, err := mapped.CTEs(nil)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
			with = adapter.WithClause(ctes)
			inTx = nil
		}
	}
	var c *FactChange
	for attempt := 1; ; attempt++ {
		applied, err := memdb.ReadThenWriteWith(ctx, db, what, inTx.SetUp, func(q memdb.Querier) ([]memdb.Step, error) {
			if with != "" {
				q = adapter.WithCTEs{Q: q, With: with}
			}
			var importance float64
			var count int64
			var status string
			var asRead [2]any // importance and access_count as stored, for the writes' condition
			err := q.QueryRowContext(ctx, tables.Expand(`SELECT importance, access_count, status, importance, access_count FROM @FACTS WHERE id = ?`), id).
				Scan(&importance, &count, &status, &asRead[0], &asRead[1])
			if errors.Is(err, sql.ErrNoRows) {
				return nil, fmt.Errorf("fact %s: %q: %w", kind, id, memdb.ErrNoFact)
			}
			if err != nil {
				return nil, fmt.Errorf("fact %s: %q: %w (is its importance a number?)", kind, id, err)
			}
			if status == "archived" {
				return nil, fmt.Errorf("fact %s: %q is archived; restore it first (memworker restore --fact %s)", kind, id, id)
			}
			after, reset, clamped := change(importance)
			c = &FactChange{ID: id, ImportanceBefore: importance, ImportanceAfter: after, AccessCountAfter: count,
				ClockReset: reset, Recorded: true, ImportanceClamped: clamped, DirectionOrKind: kind, WallTimeUnixSecond: now.Unix()}
			set := `importance = :after`
			if reset {
				set = `importance = :after, access_count = access_count + 1, last_accessed_at = :now`
				c.AccessCountAfter++
			}
			action := "feedback"
			if kind == "recall" {
				action = "recall"
			}
			args := []any{sql.Named("id", id), sql.Named("importance", asRead[0]), sql.Named("count", asRead[1]), sql.Named("status", status),
				sql.Named("after", after), sql.Named("now", now.Unix()), sql.Named("action", action), sql.Named("kind", kind),
				sql.Named("before", importance), sql.Named("count_after", c.AccessCountAfter), sql.Named("reset", reset)}
			unchanged := tables.Expand(`EXISTS (SELECT 1 FROM @FACTS f WHERE f.id = :id
				AND f.importance IS :importance AND f.access_count IS :count AND f.status IS :status)`)
			update := tables.Expand(`UPDATE @FACTS SET `) + set + ` WHERE id = :id AND ` + unchanged
			if with != "" {
				update = with + mapped.FactUpdate(reset) + ` AND ` + unchanged
			}
			return []memdb.Step{
				{Query: with + sweepsql.EventLogInsert + `
					SELECT ` + sweepsql.NextEventID + `, NULL, :now, NULL, 'fact', :id, :action, :kind, json_object('importance_before', :before, 'importance_after', :after,
						'access_count', :count_after, 'clock_reset', :reset) WHERE ` + unchanged, Args: args},
				{Query: update, Args: args},
			}, nil
		})
		if err != nil {
			return nil, err
		}
		// The event is written under the same condition as the change, and
		// first: a change through a view's trigger counts no rows.
		if applied[0] == 1 {
			break
		}
		if attempt == factAttempts {
			return nil, fmt.Errorf("fact %s: %q: changed by another writer %d times while being updated; try again", kind, id, attempt)
		}
	}
	// The row as it now stands: its access time in unix seconds, and what
	// keeps sweeps off it (a down vote leaves a bad access time as it was;
	// an up vote or a recall writes a good one).
	var problem sql.NullString
	err = adapter.ThroughMapping(ctx, db, func(q memdb.Querier, tables *sweepsql.Dialect) error {
		return q.QueryRowContext(ctx, tables.Expand(sweepsql.Macros.Replace(`SELECT `+factAccessedAt+`, FACT_PROBLEM FROM @FACTS f WHERE f.id = ?`)), id).
			Scan(&c.LastAccessedAt, &problem)
	})
	if err != nil && !errors.Is(err, sql.ErrNoRows) { // gone: removed since by someone else
		return nil, fmt.Errorf("fact %s: %w", kind, err)
	}
	c.Problem = problem.String
	return c, nil
}

// factAttempts bounds how often changeFact starts again after another
// writer changed the fact between its read and its write.
const factAttempts = 5

// factAccessedAt is a fact f's last_accessed_at in unix seconds, NULL when
// it is NULL or no time.
var factAccessedAt = `try_unix_seconds(f.last_accessed_at)`
