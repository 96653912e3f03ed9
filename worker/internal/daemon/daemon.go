package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/memdecay/memdecay/worker/internal/adapter"
	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/sweep"
	"github.com/robfig/cron/v3"
)

// RunOptions configures the daemon: exactly one of Schedule, Every or
// WhenDue says when to sweep.
type RunOptions struct {
	Schedule string        // cron expression, e.g. "30 4 * * 0" (local time)
	Every    time.Duration // sweep now, then at this interval
	WhenDue  bool          // sweep when active_hours − last_curate_at ≥ curate_interval_hours
	Poll     time.Duration // how often WhenDue looks; default one minute
	Jobs     int           // files swept at once
	Sweep    sweep.Options
	Logger   *slog.Logger
	// Backoff after a failed round: doubles from BackoffMin up to BackoffMax.
	BackoffMin, BackoffMax time.Duration
	// AfterRound, when set, is called after each round (tests wait on it).
	AfterRound func(results []FleetResult)
}

// ErrOneTrigger: a daemon runs on exactly one of a schedule, an interval
// or when due.
var ErrOneTrigger = errors.New("run: want exactly one of Schedule, Every or WhenDue")

// Validate checks every option rule, the sweep's included: exactly one
// trigger, a cron expression that parses, nothing negative. The zero
// values are the defaults.
func (o *RunOptions) Validate() error {
	n := 0
	for _, set := range []bool{o.Schedule != "", o.Every > 0, o.WhenDue} {
		if set {
			n++
		}
	}
	if n != 1 {
		return ErrOneTrigger
	}
	if o.Schedule != "" {
		if _, err := cron.ParseStandard(o.Schedule); err != nil {
			return fmt.Errorf("run: schedule %q: %w", o.Schedule, err)
		}
	}
	switch {
	case o.Every < 0:
		return fmt.Errorf("run: %w: Every %v is negative", sweep.ErrBadOption, o.Every)
	case o.Poll < 0:
		return fmt.Errorf("run: %w: Poll %v is negative", sweep.ErrBadOption, o.Poll)
	case o.Jobs < 0:
		return fmt.Errorf("run: %w: Jobs %d is negative", sweep.ErrBadOption, o.Jobs)
	case o.BackoffMin < 0 || o.BackoffMax < 0 || o.BackoffMax > 0 && o.BackoffMin > o.BackoffMax:
		return fmt.Errorf("run: %w: BackoffMin %v, BackoffMax %v", sweep.ErrBadOption, o.BackoffMin, o.BackoffMax)
	}
	if err := o.Sweep.Validate(); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	return nil
}

// withDefaults fills the zero fields with the documented defaults.
func (o RunOptions) withDefaults() RunOptions {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	o.Poll = cmp.Or(o.Poll, time.Minute)
	o.Jobs = cmp.Or(o.Jobs, 1)
	o.BackoffMin = cmp.Or(o.BackoffMin, 5*time.Second)
	o.BackoffMax = cmp.Or(o.BackoffMax, 5*time.Minute)
	return o
}

// Run sweeps the databases pattern names (ExpandPaths: a file, a glob of
// files, or rqlite URLs) on the schedule until ctx ends, then returns nil:
// a sweep in flight stops after its current chunk, which commits or rolls
// back whole. Failed rounds are logged and retried after a growing backoff.
func Run(ctx context.Context, pattern string, opt RunOptions) error {
	if err := opt.Validate(); err != nil {
		return err
	}
	opt = opt.withDefaults()
	log := opt.Logger
	var sched cron.Schedule
	if opt.Schedule != "" {
		sched, _ = cron.ParseStandard(opt.Schedule)
	}
	log.Info("memworker running", "db", memdb.DisplayName(pattern), "schedule", opt.Schedule, "every", opt.Every.String(), "when_due", opt.WhenDue)
	backoff := time.Duration(0)
	notDue := map[string]string{} // the last "not due" logged per file
	next := time.Now()
	if sched != nil {
		next = sched.Next(time.Now())
	}
	for {
		if backoff == 0 {
			level := slog.LevelInfo
			if sched == nil && opt.Every == 0 {
				level = slog.LevelDebug // --when-due polls: its rounds are not news
			}
			log.Log(ctx, level, "next round", "at", next.Format(time.RFC3339), "in", time.Until(next).Round(time.Second).String())
		}
		select {
		case <-ctx.Done():
			log.Info("memworker stopping", "reason", context.Cause(ctx))
			return nil
		case <-time.After(time.Until(next)):
		}
		failed := round(ctx, pattern, opt, log, notDue)
		if ctx.Err() != nil {
			log.Info("memworker stopping", "reason", context.Cause(ctx))
			return nil
		}
		switch {
		case failed:
			backoff = min(max(2*backoff, opt.BackoffMin), opt.BackoffMax)
			log.Warn("round failed; backing off", "retry_in", backoff.String())
			next = time.Now().Add(backoff)
			continue
		case sched != nil:
			next = sched.Next(time.Now())
		case opt.Every > 0:
			next = time.Now().Add(opt.Every)
		default:
			next = time.Now().Add(opt.Poll)
		}
		backoff = 0
	}
}

// round sweeps every database once (only the due ones for WhenDue) and
// reports whether any failed.
func round(ctx context.Context, pattern string, opt RunOptions, log *slog.Logger, notDue map[string]string) (failed bool) {
	paths, err := ExpandPaths(pattern)
	if err != nil {
		log.Error("round", "err", err)
		return true
	}
	if opt.WhenDue {
		paths = duePaths(ctx, paths, log, &failed, notDue)
	}
	results, total := SweepFleet(ctx, paths, opt.Jobs, opt.Sweep)
	for _, r := range results {
		switch {
		case r.Busy:
			log.Info("skipped: another sweep is running", "db", r.Path, "detail", r.Error)
		case r.Report != nil:
			log.Info("swept", append([]any{"db", r.Path}, r.Report.LogAttrs()...)...)
		case ctx.Err() != nil:
			log.Info("sweep interrupted", "db", r.Path)
		default:
			log.Error("sweep failed", "db", r.Path, "err", r.Error)
			failed = true
		}
	}
	if len(paths) > 1 {
		log.Info("round done", "databases", total.Databases, "failed", total.Failed, "edges_decayed", total.EdgesDecayed,
			"edges_removed", total.EdgesRemoved)
	}
	if opt.AfterRound != nil {
		opt.AfterRound(results)
	}
	return failed
}

// duePaths keeps the files whose clock has moved curate_interval_hours
// since their last sweep (or that were never swept).
func duePaths(ctx context.Context, paths []string, log *slog.Logger, failed *bool, notDue map[string]string) []string {
	var due []string
	for _, p := range paths {
		db, err := memdb.OpenMemory(p, true)
		if err != nil {
			log.Error("checking due", "db", memdb.DisplayName(p), "err", err)
			*failed = true
			continue
		}
		cfg, _, err := adapter.SweepConfig(ctx, db, time.Now())
		db.Close()
		if err != nil {
			log.Error("checking due", "db", memdb.DisplayName(p), "err", err)
			*failed = true
			continue
		}
		if cfg.SweepDue() {
			due = append(due, p)
			delete(notDue, p)
			continue
		}
		// Say why nothing happens, in the clock's own terms: once, and again
		// only when the clock has moved, not at every poll.
		since, ahead := cfg.HoursSinceSweep()
		why := fmt.Sprintf("%.4g of %.4g active hours since the last sweep", *since, cfg.CurateIntervalHours)
		if ahead != nil {
			why = fmt.Sprintf("the last sweep ran %.4g active hours ahead of the clock", *ahead)
		}
		if notDue[p] != why {
			notDue[p] = why
			log.Info("not due", "db", memdb.DisplayName(p), "why", why)
		}
	}
	return due
}
