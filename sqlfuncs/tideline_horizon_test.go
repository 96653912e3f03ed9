package sqlfuncs

import (
	"math"
	"testing"
)

func TestTidelineHorizon(t *testing.T) {
	for _, seg := range SegmentNames() {
		s, _ := SegmentDefaults("segment_tier", seg)
		for _, access := range []float64{0, 3, 40} {
			for _, threshold := range []float64{PruneScore, ArchiveScore} {
				h, err := TidelineHorizon(s.Importance, s.DecayRate, access, threshold, s.Tier)
				if err != nil {
					t.Fatal(err)
				}
				if s.Tier == FactPermanent {
					if !h.Never {
						t.Errorf("%s: permanent facts never cross, got %+v", seg, h)
					}
					continue
				}
				at, _ := TidelineScore(s.Importance, s.DecayRate, h.At, access, s.Tier)
				before, _ := TidelineScore(s.Importance, s.DecayRate, h.At*(1-1e-9), access, s.Tier)
				after, _ := TidelineScore(s.Importance, s.DecayRate, h.At*(1+1e-9), access, s.Tier)
				if math.Abs(at-threshold) > 1e-9 || before < threshold || after >= threshold {
					t.Errorf("%s access %v threshold %v: horizon %v days, score before/at/after %v/%v/%v",
						seg, access, threshold, h.At, before, at, after)
				}
			}
		}
	}
}

func TestTidelineHorizonEdges(t *testing.T) {
	if h, _ := TidelineHorizon(0.1, 0.08, 0, ArchiveScore, FactShort); h.Never || h.At != 0 {
		t.Errorf("already below: want 0, got %+v", h)
	}
	if h, _ := TidelineHorizon(0.5, 0.08, 0, 0, FactShort); !h.Never {
		t.Errorf("threshold 0: want never, got %+v", h)
	}
	// The clamp at 1: a high score stays at 1 for a while, the crossing is still exact.
	h, _ := TidelineHorizon(1, 0, 1e6, 0.5, FactLong)
	if s, _ := TidelineScore(1, 0, h.At, 1e6, FactLong); math.Abs(s-0.5) > 1e-9 {
		t.Errorf("clamped start: score at horizon %v", s)
	}
	if _, err := TidelineHorizon(-1, 0, 0, 0.1, FactLong); err == nil || err.Error()[:35] != "memdecay: tideline_horizon: importa" {
		t.Errorf("negative importance: %v", err)
	}
	if _, err := TidelineHorizon(0.5, 0, 0, -1, FactLong); err == nil {
		t.Error("negative threshold accepted")
	}
}

func FuzzTidelineHorizon(f *testing.F) {
	f.Add(0.6, 0.03, 3.0, 0.05, FactLong)
	f.Add(0.4, 0.08, 0.0, 0.15, FactShort)
	f.Add(0.85, 0.01, 1.0, 0.05, FactPermanent)
	f.Fuzz(func(t *testing.T, importance, rate, access, threshold float64, tier string) {
		h, err := TidelineHorizon(importance, rate, access, threshold, tier)
		if err != nil || h.Never {
			return
		}
		if !(h.At >= 0) || math.IsInf(h.At, 0) {
			t.Fatalf("horizon %v", h.At)
		}
		if s, _ := TidelineScore(importance, rate, h.At*(1+1e-9)+1e-12, access, tier); s >= threshold && s < 1 {
			t.Fatalf("score %v just after the horizon %v is not below %v", s, h.At, threshold)
		}
	})
}

func TestFeedbackImportance(t *testing.T) {
	for _, c := range []struct {
		before  float64
		up      bool
		after   float64
		clamped bool
	}{
		{0.70, true, 0.75, false}, {0.98, true, 1, true}, {0.75, false, 0.65, false}, {0.05, false, 0, true},
	} {
		after, clamped := FeedbackImportance(c.before, c.up)
		if math.Abs(after-c.after) > 1e-12 || clamped != c.clamped {
			t.Errorf("FeedbackImportance(%v, %v) = %v, %v; want %v, %v", c.before, c.up, after, clamped, c.after, c.clamped)
		}
	}
}
