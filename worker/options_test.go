package worker_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/memdecay/memdecay/worker"
)

// Validate owns every option rule, for the API as for the CLI: each bad
// option is refused naming it, and the zero values are the defaults.
func TestOptionsValidate(t *testing.T) {
	neg, inf := -1.0, math.Inf(1)
	for name, opt := range map[string]worker.SweepOptions{
		"Now":       {Now: &neg},
		"Now inf":   {Now: &inf},
		"ChunkSize": {ChunkSize: -1},
		"Pause":     {Pause: -time.Second},
	} {
		if err := opt.Validate(); !errors.Is(err, worker.ErrBadOption) {
			t.Errorf("SweepOptions with a bad %s: %v", name, err)
		}
	}
	if err := (worker.SweepOptions{}).Validate(); err != nil {
		t.Errorf("the zero SweepOptions: %v", err)
	}
	for name, opt := range map[string]worker.RunOptions{
		"Every":   {Every: -time.Second},
		"Poll":    {WhenDue: true, Poll: -time.Second},
		"Jobs":    {WhenDue: true, Jobs: -1},
		"Backoff": {WhenDue: true, BackoffMin: time.Hour, BackoffMax: time.Minute},
		"Sweep":   {WhenDue: true, Sweep: worker.SweepOptions{Now: &neg}},
	} {
		if err := opt.Validate(); err == nil {
			t.Errorf("RunOptions with a bad %s: accepted", name)
		}
	}
	if err := (&worker.RunOptions{WhenDue: true}).Validate(); err != nil {
		t.Errorf("RunOptions with only WhenDue: %v", err)
	}
}
