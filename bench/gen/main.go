// Command gen writes a synthetic memory graph into a fresh SQLite file with
// the real mem_ schema, for the benchmarks in bench/run.
//
// The same flags and seed give the same rows. The mix is chosen so every
// rule of the edge curate sweep has work in it: block tiers from tags and
// categories, weak never-reinforced edges for the static prune, stale edges
// for temporal decay, established, agent, pinned and unanchored edges that
// decay skips. Blocks are all reinforced within the last ten active hours,
// so no block is archived, even after the clock advances by 40 hours: the
// app loop and the plain-SQL peer, which only prune and decay edges, must
// leave the same edges as memworker.
//
//	go run ./bench/gen -out graph.db -blocks 100000 -edges 1000000 -seed 1
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/memdecay/memdecay/schema"
	"github.com/memdecay/memdecay/worker"
)

// Clock is the active-hours clock the graph is generated at; edges were
// last active up to MaxAge hours before it.
const (
	Clock  = 1000.0
	MaxAge = 600.0
)

// epoch is the wall clock of created_at and last_observed_at (fixed, so the
// file's content does not depend on when it was generated).
const epoch = 1_760_000_000

func main() {
	var opt Options
	flag.StringVar(&opt.Out, "out", "", "SQLite file to create (must not exist)")
	flag.IntVar(&opt.Blocks, "blocks", 100_000, "memory blocks")
	flag.IntVar(&opt.Edges, "edges", 1_000_000, "edges between them")
	flag.Uint64Var(&opt.Seed, "seed", 1, "random seed")
	flag.Parse()
	if opt.Out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: gen -out FILE [-blocks N] [-edges N] [-seed S]")
		os.Exit(2)
	}
	start := time.Now()
	if err := Generate(context.Background(), opt); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "gen: %d blocks, %d edges in %s (%.1fs)\n",
		opt.Blocks, opt.Edges, opt.Out, time.Since(start).Seconds())
}

// Options says what to generate.
type Options struct {
	Out    string
	Blocks int
	Edges  int
	Seed   uint64
}

// Generate creates opt.Out and fills it in one transaction.
func Generate(ctx context.Context, opt Options) error {
	if opt.Blocks < 2 || opt.Edges < 1 {
		return errors.New("need at least 2 blocks and 1 edge")
	}
	if float64(opt.Edges) > float64(opt.Blocks)*float64(opt.Blocks-1)/4 {
		return fmt.Errorf("%d edges is more than a quarter of the %d possible pairs of %d blocks",
			opt.Edges, opt.Blocks*(opt.Blocks-1)/2, opt.Blocks)
	}
	if _, err := os.Stat(opt.Out); err == nil {
		return fmt.Errorf("%s exists; gen writes fresh files only", opt.Out)
	}
	db, err := worker.Open(opt.Out, worker.OpenOptions{Create: true})
	if err != nil {
		return err
	}
	defer db.Close()
	// One connection, so the pragmas below hold for every statement.
	db.SQL.SetMaxOpenConns(1)
	if _, err := schema.Up(db.SQL); err != nil {
		return err
	}
	for _, p := range []string{"PRAGMA journal_mode = OFF", "PRAGMA synchronous = OFF", "PRAGMA cache_size = -1000000"} {
		if _, err := db.SQL.ExecContext(ctx, p); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	tx, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	rng := rand.New(rand.NewPCG(opt.Seed, 0x6d656d6465636179))
	if err := insertBlocks(ctx, tx, rng, opt.Blocks); err != nil {
		return fmt.Errorf("blocks: %w", err)
	}
	if err := insertEdges(ctx, tx, rng, opt.Blocks, opt.Edges); err != nil {
		return fmt.Errorf("edges: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE mem_config SET value = ? WHERE key = 'active_hours'`, Clock); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	// The file is left in WAL mode, as memworker and an app writing beside
	// it would use it.
	_, err = db.SQL.ExecContext(ctx, "PRAGMA journal_mode = WAL")
	return err
}

// BlockID names block i; fixed width, so text order is numeric order.
func BlockID(i int) string { return fmt.Sprintf("b%07d", i) }

// batcher inserts rows with multi-row INSERT statements.
type batcher struct {
	ctx    context.Context
	tx     *sql.Tx
	head   string // INSERT INTO t (cols) VALUES
	row    string // (?, ?, …)
	per    int    // rows per statement
	stmt   *sql.Stmt
	args   []any
	n, max int
}

func newBatcher(ctx context.Context, tx *sql.Tx, head string, cols, per int) *batcher {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", cols), ", ") + ")"
	return &batcher{ctx: ctx, tx: tx, head: head, row: row, per: per, max: per}
}

func (b *batcher) statement(rows int) string {
	return b.head + strings.TrimSuffix(strings.Repeat(b.row+", ", rows), ", ")
}

func (b *batcher) add(vals ...any) error {
	b.args = append(b.args, vals...)
	b.n++
	if b.n < b.max {
		return nil
	}
	return b.flush()
}

func (b *batcher) flush() error {
	if b.n == 0 {
		return nil
	}
	var err error
	if b.n == b.per {
		if b.stmt == nil {
			if b.stmt, err = b.tx.PrepareContext(b.ctx, b.statement(b.per)); err != nil {
				return err
			}
		}
		_, err = b.stmt.ExecContext(b.ctx, b.args...)
	} else {
		_, err = b.tx.ExecContext(b.ctx, b.statement(b.n), b.args...)
	}
	b.args, b.n = b.args[:0], 0
	return err
}

func (b *batcher) close() error {
	err := b.flush()
	if b.stmt != nil {
		b.stmt.Close()
	}
	return err
}

var words = strings.Fields(`the agent noted that user prefers short answers project deadline moved
database index query slow cache warm deploy failed retry succeeded meeting notes python async loop
graph edge weight decay memory block tag category review incident summary plan goal value constraint
observation fact preference schedule budget design api latency error fixed opened closed`)

var topics = []string{"python", "databases", "infra", "design", "people", "planning", "ml", "ops", "writing", "finance"}

var standardCategories = []string{"knowledge", "knowledge", "project", "preference", "event"}

// insertBlocks writes the blocks and their tags. Tiers: about 1 % carry
// self/constitutional (permanent), 5 % self/value, self/goal or
// self/constraint (durable); independently 10 % are category mind
// (durable), 25 % observation (ephemeral), the rest standard categories.
func insertBlocks(ctx context.Context, tx *sql.Tx, rng *rand.Rand, n int) error {
	blocks := newBatcher(ctx, tx, `INSERT INTO mem_blocks (id, category, status, confidence, reinforcement_count,
		last_reinforced_hours, content, created_at) VALUES `, 8, 200)
	tags := newBatcher(ctx, tx, `INSERT INTO mem_block_tags (block_id, tag) VALUES `, 2, 500)
	var content strings.Builder
	for i := range n {
		id := BlockID(i)
		var category string
		switch r := rng.Float64(); {
		case r < 0.10:
			category = "mind"
		case r < 0.35:
			category = "observation"
		default:
			category = standardCategories[rng.IntN(len(standardCategories))]
		}
		content.Reset()
		for w := 12 + rng.IntN(40); w > 0; w-- {
			content.WriteString(words[rng.IntN(len(words))])
			content.WriteByte(' ')
		}
		count := 0
		if rng.Float64() < 0.6 {
			count = 1 + int(rng.ExpFloat64()*4)
		}
		// Reinforced within the last 10 active hours: no block's recency
		// falls below 0.05 before 50 more hours pass (ephemeral: 59.9 h).
		if err := blocks.add(id, category, "active", round(0.3+0.6*rng.Float64(), 3), count,
			round(Clock-10*rng.Float64(), 3), strings.TrimSpace(content.String()), epoch-int64(n-i)*60); err != nil {
			return err
		}
		switch r := rng.Float64(); {
		case r < 0.01:
			if err := tags.add(id, "self/constitutional"); err != nil {
				return err
			}
		case r < 0.06:
			self := []string{"self/value", "self/goal", "self/constraint"}[rng.IntN(3)]
			if err := tags.add(id, self); err != nil {
				return err
			}
		}
		// Topic tags the tier rules ignore.
		first := rng.IntN(len(topics))
		for k := range rng.IntN(3) {
			if err := tags.add(id, topics[(first+k)%len(topics)]); err != nil {
				return err
			}
		}
	}
	if err := blocks.close(); err != nil {
		return err
	}
	return tags.close()
}

// insertEdges writes m distinct edges, from_id < to_id. Most link nearby
// blocks (similar memories are made close together), some link far apart,
// with low-numbered blocks more popular (hubs). Inserted in random key
// order, as an app adds them over time.
func insertEdges(ctx context.Context, tx *sql.Tx, rng *rand.Rand, n, m int) error {
	edges := newBatcher(ctx, tx, `INSERT INTO mem_edges (from_id, to_id, weight, reinforcement_count, relation_type,
		origin, last_active_hours, last_observed_at, pinned, note, created_at) VALUES `, 11, 200)
	seen := make(map[uint64]struct{}, m)
	for len(seen) < m {
		a := rng.IntN(n)
		var b int
		if rng.Float64() < 0.7 {
			d := 1 + int(rng.ExpFloat64()*200)
			if rng.IntN(2) == 0 {
				d = -d
			}
			b = ((a+d)%n + n) % n
		} else {
			b = int(float64(n) * math.Pow(rng.Float64(), 2))
		}
		if a == b {
			continue
		}
		a, b = min(a, b), max(a, b)
		key := uint64(a)<<32 | uint64(b)
		if _, dup := seen[key]; dup {
			continue
		}
		seen[key] = struct{}{}
		if err := edges.add(edgeRow(rng, a, b)...); err != nil {
			return err
		}
	}
	return edges.close()
}

// edgeRow draws one edge's columns. Reinforcement: 55 % never, 33 % 1–9
// times, 12 % established (≥ 10). About 4 % are weak (weight < 0.10) and
// never reinforced: the static prune's share. Origins: 3 % agent, 10 %
// outcome, 2 % observed, the rest similarity; 5 % have no anchor
// (last_active_hours NULL); 0.5 % are pinned.
func edgeRow(rng *rand.Rand, a, b int) []any {
	var count int
	switch r := rng.Float64(); {
	case r < 0.55:
	case r < 0.88:
		count = 1 + rng.IntN(9)
	default:
		count = 10 + int(rng.ExpFloat64()*15)
	}
	weight := 0.10 + 0.90*rng.Float64()
	switch r := rng.Float64(); {
	case r < 0.04:
		weight, count = 0.01+0.09*rng.Float64(), 0
	case r < 0.05:
		weight = 0.01 + 0.09*rng.Float64() // weak but reinforced: only decay can take it
	}
	relation, origin := "similar", "similarity"
	var note, observed any
	switch r := rng.Float64(); {
	case r < 0.03:
		relation, origin, note = "asserted", "agent", "the agent linked these"
	case r < 0.13:
		relation, origin = "led_to", "outcome"
	case r < 0.15:
		origin = "observed"
	}
	// Elapsed active hours since last use: uniform over MaxAge, more
	// recent for established edges.
	u := rng.Float64()
	if count >= 10 {
		u *= u
	}
	var anchor any = round(Clock-MaxAge*u, 3)
	if rng.Float64() < 0.05 {
		anchor = nil
	}
	if origin == "observed" {
		observed = epoch - rng.Int64N(90*86400)
	}
	pinned := 0
	if rng.Float64() < 0.005 {
		pinned = 1
	}
	return []any{BlockID(a), BlockID(b), round(weight, 4), count, relation, origin, anchor, observed, pinned, note,
		epoch - rng.Int64N(60*86400)}
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}
