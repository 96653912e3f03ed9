package store

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

// clockPacer is a txPacer whose transaction under way has held the lock
// perRow for each row its f has taken so far.
type clockPacer struct {
	bound  int64
	hold   time.Duration
	perRow time.Duration
	others bool
	taken  int64
	held   time.Duration // the last committed transaction's hold
}

func (p *clockPacer) chunkRows(int) int64       { return p.bound }
func (p *clockPacer) OthersWriting() bool       { return p.others }
func (p *clockPacer) lastHeld() time.Duration   { return p.held }
func (p *clockPacer) soloHold() time.Duration   { return p.hold }
func (p *clockPacer) holding() time.Duration    { return time.Duration(p.taken) * p.perRow }
func (p *clockPacer) take(lo, hi int64) []int64 { p.taken += hi - lo + 1; return []int64{lo, hi} }
func (p *clockPacer) rows(size int) *txRows     { return &txRows{p: p, size: size} }
func (p *clockPacer) String() string            { return fmt.Sprintf("%+v", *p) }

// A step's first transaction grows, while it holds the lock, by what its
// pace so far fits in the hold (never past the bound or the step's last
// row, and only by a chunk or more); a transaction sized by a committed
// one, one beside an app's writes, or one whose hold says nothing (a
// replica's) does not.
func TestTxRowsTake(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		what  string
		p     clockPacer
		size  int
		last  int64
		paced bool // a transaction of the step has committed
		want  [][]int64
	}{
		{what: "grows to what the hold fits", p: clockPacer{bound: 1000, hold: 100 * ms, perRow: ms}, size: 10, last: 5000,
			want: [][]int64{{1, 10}, {11, 100}}},
		{what: "grows to the bound", p: clockPacer{bound: 1000, hold: 100 * ms, perRow: time.Microsecond}, size: 10, last: 5000,
			want: [][]int64{{1, 10}, {11, 1000}}},
		{what: "grows to the step's last row", p: clockPacer{bound: 1000, hold: 100 * ms, perRow: ms}, size: 10, last: 50,
			want: [][]int64{{1, 10}, {11, 50}}},
		{what: "exactly a chunk more fits", p: clockPacer{bound: 1000, hold: time.Second, perRow: 50 * ms}, size: 10, last: 5000,
			want: [][]int64{{1, 10}, {11, 20}}},
		{what: "just less than a chunk more fits", p: clockPacer{bound: 1000, hold: time.Second, perRow: 51 * ms}, size: 10, last: 5000,
			want: [][]int64{{1, 10}}},
		{what: "less than a chunk more fits", p: clockPacer{bound: 1000, hold: 100 * ms, perRow: 6 * ms}, size: 10, last: 5000,
			want: [][]int64{{1, 10}}},
		{what: "nothing more fits", p: clockPacer{bound: 1000, hold: 100 * ms, perRow: 50 * ms}, size: 10, last: 5000,
			want: [][]int64{{1, 10}}},
		{what: "beside an app's writes", p: clockPacer{bound: 10, hold: 100 * ms, perRow: time.Microsecond, others: true}, size: 10, last: 5000,
			want: [][]int64{{1, 10}}},
		{what: "a hold that says nothing", p: clockPacer{bound: 1000, hold: 100 * ms}, size: 10, last: 5000,
			want: [][]int64{{1, 10}}},
		{what: "after a committed transaction", p: clockPacer{bound: 1000, hold: 100 * ms, perRow: time.Microsecond, held: 10 * ms}, size: 10, last: 5000, paced: true,
			want: [][]int64{{1, 100}}},
		{what: "a pace and hold whose product no int64 holds", p: clockPacer{bound: 1000, hold: 1e6 * time.Hour, held: time.Nanosecond}, size: 10, last: 5000, paced: true,
			want: [][]int64{{1, 1000}}},
	} {
		p := c.p
		rows := p.rows(c.size)
		if c.paced {
			rows.Took(10) // 10 rows in 10 ms: 100 fit in the hold
		}
		var got [][]int64
		hi, err := rows.Take(1, c.last, func(lo, hi int64) error {
			got = append(got, p.take(lo, hi))
			return nil
		})
		if err != nil || !slices.EqualFunc(got, c.want, slices.Equal) || hi != c.want[len(c.want)-1][1] {
			t.Errorf("%s (%v): ranges %v, last row %d (%v); want %v", c.what, &p, got, hi, err, c.want)
		}
	}
	// An error in a range it grew by names that range's last row.
	p := clockPacer{bound: 1000, hold: 100 * ms, perRow: ms}
	refused := errors.New("refused")
	hi, err := p.rows(10).Take(1, 5000, func(lo, hi int64) error {
		if lo > 1 {
			return refused
		}
		p.take(lo, hi)
		return nil
	})
	if hi != 100 || !errors.Is(err, refused) {
		t.Errorf("an error in the grown range: last row %d, %v; want 100 and the error", hi, err)
	}
}
