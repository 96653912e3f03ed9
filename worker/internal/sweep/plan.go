package sweep

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/memdecay/memdecay/schema"
	"github.com/memdecay/memdecay/worker/internal/adapter"
	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/settings"
	"github.com/memdecay/memdecay/worker/internal/store"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
)

// planRemovals plans the static prunes and the decays, and says how many
// decays the decay cap defers: when it leaves some candidates, it keeps
// the lowest effective weights. With no cap (max_decay_fraction 1), both
// are planned in one pass.
func (s *sweep) planRemovals(ctx context.Context, sameClock bool) (deferred int64, err error) {
	if s.cfg.MaxDecayFraction >= 1 {
		_, err := s.db.Exec(ctx, "plan_removals")
		return 0, err
	}
	for _, name := range []string{"plan_static", "plan_decay_candidates"} {
		if _, err := s.db.Exec(ctx, name); err != nil {
			return 0, err
		}
	}
	candidates, err := s.db.Count(ctx, "SELECT count(*) FROM temp.plan_decay")
	if err != nil {
		return 0, err
	}
	budget := int64(math.Floor(s.cfg.MaxDecayFraction * float64(candidates)))
	if sameClock {
		budget = 0
	}
	// Sorting the candidates is needed only when the cap leaves some.
	if budget < candidates {
		if _, err := s.db.Exec(ctx, "plan_decay_cap", sql.Named("budget", budget)); err != nil {
			return 0, err
		}
	}
	_, err = s.db.Exec(ctx, "plan_decay")
	return candidates - budget, err
}

// plan computes every phase's decisions at one read snapshot, over every
// row (full) or the rows due or changed (plan.sql).
func (s *sweep) plan(ctx context.Context, full bool) (err error) {
	due := "scope_due"
	if s.soon.covers(s.clock.Hours, float64(s.clock.Wall.Unix())) {
		due = "scope_due_soon"
	}
	names := []string{"scope_incremental", due, "evaluate_edges", "plan_invalid"}
	if full {
		names = []string{"scope_full", "plan_invalid"} // every edge was evaluated by the full refresh
	}
	for _, name := range names {
		if _, err := s.db.Exec(ctx, name); err != nil {
			return err
		}
	}
	r := &s.report
	if full && s.edgesCounted != nil {
		r.EdgesBefore = *s.edgesCounted
	} else if r.EdgesBefore, err = s.edgesBefore(ctx, full); err != nil {
		return err
	}
	if _, err := s.db.Exec(ctx, "plan_changed_blocks"); err != nil {
		return err
	}
	// Archival and the decay cap are decided once per clock value, so a
	// second sweep at the same clock removes nothing new.
	sameClock := s.cfg.LastCurateAt != nil && *s.cfg.LastCurateAt == s.clock.Hours
	if s.cfg.BlockArchival && !sameClock {
		if err := s.planArchive(ctx); err != nil {
			return err
		}
	}
	planned, err := s.db.Count(ctx, "SELECT EXISTS (SELECT 1 FROM temp.plan_edges)")
	if err != nil {
		return err
	}
	deferred, err := s.planRemovals(ctx, sameClock)
	if err != nil {
		return err
	}
	policies, err := s.db.Count(ctx, "SELECT count(*) FROM temp.sweep_policy")
	if err != nil {
		return err
	}
	if policies > 0 {
		if _, err := s.db.Exec(ctx, "plan_policy"); err != nil {
			return err
		}
	}
	// The evaluation of the file's own edges is in key order (a full one
	// reads the table in its order, an incremental one its scope's): the
	// plan's prunes and decays come out of it in that order, and when
	// nothing else is planned the plan needs no sorting.
	s.planInKeyOrder = s.mapped == nil && planned == 0 && policies == 0 && s.cfg.MaxDecayFraction >= 1
	if s.planStands, err = s.standingPlan(ctx, planned); err != nil {
		return err
	}
	if s.opt.signals.PlanStands != nil {
		s.opt.signals.PlanStands(s.planStands)
	}
	if summed, err := s.sumEnds(ctx, "lost_strengths", "rank_lost"); err != nil {
		return err
	} else if !summed {
		if _, err := s.db.Exec(ctx, "plan_lost"); err != nil {
			return err
		}
	}
	// Reinforcement too happens once per clock value: a sweep at a clock
	// already swept (an idle app under run --every) reinforces nothing;
	// nor does one through a mapping that lets it write no time of use or
	// count (nodes.writes).
	s.rankScale = nil
	if !sameClock && (s.mapped == nil || s.mapped.Map.Reinforces()) {
		if _, err := s.db.Exec(ctx, "plan_reinforce"); err != nil {
			return err
		}
		if err := s.rank(ctx, full); err != nil {
			return fmt.Errorf("ranking: %w", err)
		}
	}
	if _, err := s.db.Exec(ctx, "plan_facts"); err != nil {
		return err
	}
	return s.planReport(ctx, deferred)
}

// loadPolicies stages every relation policy row (readPolicies), with its
// durations in the clock's unit, in temp.sweep_policy.
func (s *sweep) loadPolicies(ctx context.Context) error {
	policies, staged, fingerprint, stored, err := readPolicies(ctx, s.db.Querier(), s.cfg)
	if err != nil {
		return err
	}
	s.fingerprint, s.storedFingerprint = fingerprint, stored
	for i, p := range policies {
		_, err = s.db.Querier().ExecContext(ctx, `INSERT INTO temp.sweep_policy
			(relation_type, model, curve, clock, threshold, to_zero, action, orphans) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			p.RelationType, p.Model, staged[i].Curve, p.Clock, staged[i].Threshold, staged[i].ToZero, p.Action, p.Orphans)
		if err != nil {
			return err
		}
	}
	return nil
}

// readPolicies validates every relation policy row and resolves it in the
// clock's unit, and reads the fingerprint of the derived state they and the
// settings make, and the stored one. A broken row fails the sweep before
// anything changes.
func readPolicies(ctx context.Context, q memdb.Querier, cfg settings.Config) (policies []settings.Policy,
	staged []settings.StagedPolicy, fingerprint, stored string, err error) {
	if policies, err = settings.ReadPolicies(ctx, q); err != nil {
		return nil, nil, "", "", fmt.Errorf("%w (nothing was swept)", err)
	}
	staged = make([]settings.StagedPolicy, len(policies))
	for i, p := range policies {
		if staged[i], err = p.Resolve(cfg.EdgeDecayThreshold); err != nil {
			return nil, nil, "", "", fmt.Errorf("%w (nothing was swept)", err)
		}
	}
	if fingerprint, err = derivedFingerprint(cfg, policies, staged); err != nil {
		return nil, nil, "", "", err
	}
	err = q.QueryRowContext(ctx, `SELECT coalesce((SELECT CAST(value AS TEXT) FROM main.mem_config WHERE key = 'derived_fingerprint'), '')`).
		Scan(&stored)
	return policies, staged, fingerprint, stored, err
}

// copiesEveryRow says, before the sweep opens its store, whether it will
// copy every row into its temp tables, which then take big pages
// (store.TempPageSize): a full sweep, as run and prepare decide it (asked
// for, the mapping's change capture missing, or the derived state's
// fingerprint changed), or a dry run, which plans every row. An
// incremental sweep's temp tables hold a few rows each, and keep SQLite's
// default. Read before the sweep's lease, so only a guess (a setting
// changed meanwhile makes it wrong, and only slower); an error is left for
// the sweep to meet where it reads the same rows.
func copiesEveryRow(ctx context.Context, q memdb.Querier, opt Options, mapped *adapter.Adapted) bool {
	if opt.DryRun || opt.Full {
		return true
	}
	if missing, err := mapped.MissingObjects(ctx, q); err != nil || len(missing) > 0 {
		return err == nil
	}
	cfg, err := settings.LoadConfig(ctx, q)
	if err != nil {
		return false
	}
	_, _, fingerprint, stored, err := readPolicies(ctx, q, cfg)
	return err == nil && stored != fingerprint
}

// planSettings names what a plan depends on: the derived state's
// fingerprint and the settings only the plan reads. A saved plan is
// resumed only under the same (resume.go).
func (s *sweep) planSettings() string {
	return fmt.Sprintf("%s; top %d; decay fraction %v; archival %v", s.fingerprint, s.cfg.ReinforceTopN,
		s.cfg.MaxDecayFraction, s.cfg.BlockArchival)
}

// derivedFingerprint names what the stored derived state depends on: the
// schema it is kept in (the newest step that may change it, not the
// newest step: schema.DerivedLayout), the rules it is computed with
// (sweepsql.DerivedRules), the thresholds and the policies. When it
// changes, the next sweep recomputes the derived state of every row.
func derivedFingerprint(cfg settings.Config, policies []settings.Policy, staged []settings.StagedPolicy) (string, error) {
	version, err := schema.Latest()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	writeFingerprint(h, schema.DerivedLayout(version), cfg, policies, staged)
	return hex.EncodeToString(h.Sum(nil)), nil
}

func writeFingerprint(w io.Writer, layout uint, cfg settings.Config, policies []settings.Policy, staged []settings.StagedPolicy) {
	fmt.Fprintf(w, "schema %d; rules %d; thresholds %v %v %v %v;", layout, sweepsql.DerivedRules, cfg.BlockPruneThreshold, cfg.EdgePruneThreshold,
		cfg.EdgeDecayThreshold, cfg.EstablishedEdgeThreshold)
	for i, p := range policies {
		fmt.Fprintf(w, "%q %q %v %v %q %q;", p.RelationType, staged[i].Curve, staged[i].Threshold, staged[i].ToZero, p.Clock, p.Action)
	}
}

// edgesAt is a number of edges exact while the edge queue ends at mark.
type edgesAt struct{ edges, mark int64 }

// keepEdgesBefore takes, before an incremental sweep's refresh on a file,
// the edges the last sweep left (edges_kept) and what the edge writes
// queued since changed of them (edges_queued_delta), instead of counting
// them. Through a mapping, only while nothing is queued.
func (s *sweep) keepEdgesBefore(ctx context.Context) error {
	s.edgesKept = nil
	if !s.db.Snapshots() {
		return nil
	}
	of, err := s.edgesOf(ctx)
	if err != nil {
		return err
	}
	kept, err := s.db.Count(ctx, s.opt.sql().Stmts("edges_kept")[0], sql.Named("sweep", s.report.SweepID), sql.Named("edges_of", of))
	if err != nil || kept < 0 {
		return err
	}
	var at edgesAt
	if s.mapped != nil {
		// Not every row of an app's has a due row: only an empty queue
		// tells, and its keys are not read.
		if at.mark, err = s.db.Count(ctx, "SELECT coalesce(max(seq), 0) FROM main.mem_dirty_edges"); err != nil || at.mark != 0 {
			return err
		}
	} else if err := s.db.Querier().QueryRowContext(ctx, s.opt.sql().Stmts("edges_queued_delta")[0]).Scan(&at.mark, &at.edges); err != nil {
		return err
	}
	at.edges += kept
	s.edgesKept = &at
	return nil
}

// edgesBefore counts the edges the plan starts from, unless the count
// kept before the refresh still holds: no edge queued since.
func (s *sweep) edgesBefore(ctx context.Context, full bool) (int64, error) {
	if full {
		return s.countEdges(ctx)
	}
	kept := false
	if s.edgesKept != nil {
		queued, err := s.db.Count(ctx, "SELECT EXISTS (SELECT 1 FROM main.mem_dirty_edges WHERE seq > ?)", s.edgesKept.mark)
		if err != nil {
			return 0, err
		}
		kept = queued == 0
	}
	if s.opt.signals.EdgesKept != nil {
		s.opt.signals.EdgesKept(kept)
	}
	if kept {
		return s.edgesKept.edges, nil
	}
	return s.countEdges(ctx)
}

// edgesOf names what a kept count of the edges counted: the tables (the
// file's own, or an app's through its mapping), the derived state's
// settings, and the schema as it stood (its version number, which every
// change of a table, index, trigger or view moves: a migration, a mapping
// declared anew).
func (s *sweep) edgesOf(ctx context.Context) (string, error) {
	var version int64
	if err := s.db.Querier().QueryRowContext(ctx, "PRAGMA main.schema_version").Scan(&version); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s; %s; schema %d", s.opt.sql().Expand("@EDGES"), s.fingerprint, version), nil
}

// planArchive plans the faded blocks' archival. The bridge threshold it
// compares their degrees with reads every block state, so it is taken
// only when some block faded, and then reported.
func (s *sweep) planArchive(ctx context.Context) error {
	if _, err := s.db.Exec(ctx, "plan_faded"); err != nil {
		return err
	}
	faded, err := s.db.Count(ctx, "SELECT EXISTS (SELECT 1 FROM temp.plan_faded)")
	if err != nil || faded == 0 {
		return err
	}
	bridge, err := s.bridgeThreshold(ctx)
	if err != nil {
		return err
	}
	if bridge.Valid {
		s.report.BridgeThreshold = &bridge.Float64
	}
	_, err = s.db.Exec(ctx, "plan_archive", sql.Named("bridge", bridge))
	return err
}

// bridgeThreshold is the 80th percentile of the active blocks' non-zero
// degrees as they are stored (bridge_threshold); NULL when there are none.
func (s *sweep) bridgeThreshold(ctx context.Context) (sql.NullFloat64, error) {
	var bridge sql.NullFloat64
	defer store.TraceTook("bridge_threshold", time.Now())
	if err := s.db.Querier().QueryRowContext(ctx, s.opt.sql().Stmts("bridge_threshold")[0]).Scan(&bridge); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return bridge, fmt.Errorf("bridge threshold: %w", err)
	}
	return bridge, nil
}

// standingPlan says whether no edge the plan removes can change before the
// apply picks it, so that the apply need not look at each again
// (pick_edges_planned): a sweep not resuming another's plan; no block
// archived first (whose edges go with it) and none planned with its edges
// (planned); the file's own tables (an app's carry its rules and
// memworker's change capture); and no trigger but memworker's own
// (schema.OwnTriggers), as its migrations wrote them, that the sweep's
// writes in between could fire to write an edge. Read at the plan's
// snapshot: a bulk sweep holds the plan and the apply in that one
// transaction, which no app can change; a default sweep marks where the
// other connections' commits stood (planMark), and takes a chunk's
// removals as planned only while none has committed since
// (untouchedSincePlan): not an edge, not a trigger.
func (s *sweep) standingPlan(ctx context.Context, planned int64) (bool, error) {
	if s.resume || s.mapped != nil || planned != 0 {
		return false, nil
	}
	if !s.opt.Bulk {
		var ok bool
		if s.planMark, ok = s.db.CommitsMark(ctx); !ok {
			return false, nil
		}
	}
	blocks, err := s.db.Count(ctx, "SELECT EXISTS (SELECT 1 FROM temp.plan_blocks)")
	if err != nil || blocks != 0 {
		return false, err
	}
	return schema.OnlyOwnTriggers(ctx, s.db.Querier(), memdb.FileDriver)
}
