// Package spec holds the numbers of memdecay's reference tables written
// out by hand, for tests to check the implementation against: the code
// under test never reads them, so a wrong number in sqlfuncs is caught.
package spec

// Segment is one row of the fact segment defaults table (docs/facts.md,
// reference 001): a segment's tier, importance and decay rate.
type Segment struct {
	Name, Tier            string
	Importance, DecayRate float64
}

// Segments is the segment defaults table.
var Segments = []Segment{
	{"identity", "permanent", 0.85, 0.01},
	{"correction", "long", 0.80, 0.015},
	{"relationship", "long", 0.75, 0.02},
	{"preference", "long", 0.70, 0.02},
	{"project", "long", 0.65, 0.025},
	{"knowledge", "long", 0.60, 0.03},
	{"context", "short", 0.40, 0.08},
}
