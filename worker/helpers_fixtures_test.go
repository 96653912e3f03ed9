package worker_test

// Hand-made fixtures: a fixed wall clock, the rich fixture where every
// sweep phase has work, builders for blocks, edges and relation policies,
// and the fact formula of reference 001 to place facts either side of its
// thresholds.

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/memdecay/memdecay/internal/spec"
	"github.com/memdecay/memdecay/worker"
)

// fixedWall is the tests' fixed wall clock; pinWall makes the views read it.
var fixedWall = time.Date(2026, 3, 1, 4, 30, 0, 0, time.UTC)

// pinWall sets the wall clock the views (and sweeps without a wall time of
// their own) read, mem_config's wall_clock, to wall.
func pinWall(t *testing.T, db *worker.DB, wall time.Time) time.Time {
	t.Helper()
	mustExec(t, db, `UPDATE mem_config SET value = ? WHERE key = 'wall_clock'`, wall.Unix())
	return wall
}

// daySeconds is a day on the wall clock.
const daySeconds = 86400

// daysAgo is the unix time days before wall.
func daysAgo(wall time.Time, days float64) int64 {
	return wall.Unix() - int64(math.Round(days*daySeconds))
}

// fixture joins SQL statements into one fixture script.
func fixture(stmts ...string) string { return strings.Join(stmts, "\n") }

// richFixture is one graph where every sweep phase has work (the
// guarantees of docs/sweep.md are checked on it): at clock 500 a sweep
// archives obs1 and obs2 (their 2 edges go with them), keeps the faded hub
// (a bridge: degree 4.54 ≥ d[9] = 2.84) and the faded pin (pinned edge),
// prunes db1-ds2, decays py1-py2 and db2-py2, and skips 3 invalid rows.
const richFixture = `
	INSERT INTO mem_blocks (id, category, confidence, reinforcement_count, last_reinforced_hours, content) VALUES
		('core','knowledge',0.95,20,400,'Be honest about uncertainty.'),
		('goal','knowledge',0.80,6,470,'Ship the sync engine.'),
		('py1','knowledge',0.70,9,460,'asyncio needs a running loop.'),
		('py2','knowledge',0.60,2,420,'The GIL serialises bytecode.'),
		('db1','knowledge',0.75,7,450,'Covering indexes.'),
		('db2','knowledge',0.65,3,440,'WAL readers.'),
		('ds1','knowledge',0.55,1,300,'groupby agg.'),
		('ds2','knowledge',0.50,0,280,'Log scales.'),
		('obs1','observation',0.40,0,10,'Standup moved.'),
		('obs2','observation',0.30,0,12,'Lunch order.'),
		('hub','observation',0.50,1,15,'Incident review.'),
		('pin','observation',0.50,0,20,'Runbook location.'),
		('bad','knowledge','high',0,0,'a block with a text confidence');
	INSERT INTO mem_block_tags VALUES ('core','self/constitutional'), ('goal','self/goal'), ('py1','python'),
		('obs1','standup'), ('obs1','meeting'), ('obs2','food');
	INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, origin, last_active_hours, pinned, note) VALUES
		('db1','ds2',0.05,0,'similarity',480,0,'static prune'),
		('py1','py2',0.60,3,'similarity',95,0,'decays: 0.079'),
		('db2','py2',0.45,2,'similarity',150,0,'decays: 0.078'),
		('db1','db2',0.70,4,'similarity',460,0,'recent'),
		('db1','py1',0.50,12,'outcome',100,0,'established: 0.184'),
		('goal','py1',0.85,0,'agent',0,0,'agent'),
		('ds1','ds2',0.60,0,'similarity',NULL,0,'no anchor'),
		('db2','obs1','heavy',0,'similarity',300,0,'invalid: text weight, archived block'),
		('ds1','py2',0.30,NULL,'similarity',0,0,'invalid: NULL count'),
		('core','pin',0.90,0,'agent',0,1,'pinned'),
		('obs1','py2',0.40,1,'similarity',20,0,'goes with obs1'),
		('ds1','obs2',0.30,0,'similarity',12,0,'goes with obs2'),
		('db1','hub',0.90,15,'outcome',470,0,'bridge'),
		('db2','hub',0.85,14,'outcome',470,0,'bridge'),
		('hub','py1',0.90,16,'outcome',470,0,'bridge'),
		('goal','hub',0.80,12,'outcome',470,0,'bridge');`

// knowledgeBlocks is SQL inserting knowledge blocks that block archival
// never touches (no last_reinforced_hours), so only policies act on their
// edges.
func knowledgeBlocks(ids ...string) string {
	var vals []string
	for _, id := range ids {
		vals = append(vals, fmt.Sprintf("('%s', 'knowledge', NULL)", id))
	}
	return "INSERT INTO mem_blocks (id, category, last_reinforced_hours) VALUES " + strings.Join(vals, ", ") + ";"
}

// addEdge inserts one edge; lastActive and lastObserved may be nil.
func addEdge(t *testing.T, db *worker.DB, from, to, relation string, weight float64, lastActive, lastObserved any, pinned bool) {
	t.Helper()
	mustExec(t, db, `INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, relation_type, origin,
		last_active_hours, last_observed_at, pinned) VALUES (?, ?, ?, 0, ?, 'observed', ?, ?, ?)`,
		from, to, weight, relation, lastActive, lastObserved, pinned)
}

// addPolicy inserts one relation policy; threshold may be nil.
func addPolicy(t *testing.T, db *worker.DB, relation, model, params, clock string, threshold any, action, orphans string) {
	t.Helper()
	mustExec(t, db, `INSERT INTO mem_edge_policies (relation_type, model, params, clock, threshold, action, orphans)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, relation, model, params, clock, threshold, action, orphans)
}

// segmentDefaults is the segment defaults table of docs/facts.md and
// reference 001, written out in internal/spec rather than read from
// sqlfuncs: TestFactSegmentDefaults checks the trigger and the SQL functions
// against the spec's numbers.
var segmentDefaults = spec.Segments

// factLambda is reference 001's decay rate per day:
// ln2 / (11.25 (1 + importance)) × 0.8 × (1 + decay_rate).
func factLambda(importance, decayRate float64) float64 {
	return math.Ln2 / (11.25 * (1 + importance)) * 0.8 * (1 + decayRate)
}

// factScore is reference 001's effective score of a non-permanent fact.
func factScore(importance, decayRate, days, accessCount float64) float64 {
	s := importance * math.Exp(-factLambda(importance, decayRate)*days) * (1 + math.Log(1+accessCount)*0.1)
	return math.Min(1, math.Max(0, s))
}

// factCrossing solves factScore = threshold for the days since access.
func factCrossing(importance, decayRate, accessCount, threshold float64) float64 {
	return math.Log(importance*(1+math.Log(1+accessCount)*0.1)/threshold) / factLambda(importance, decayRate)
}

// fixedDegree is a weighted degree as sweeps keep it: each edge's strength
// rounded to a multiple of 2^-32, then summed (exactly).
func fixedDegree(strengths ...float64) float64 {
	var d float64
	for _, s := range strengths {
		d += math.Round(s*(1<<32)) / (1 << 32)
	}
	return d
}
