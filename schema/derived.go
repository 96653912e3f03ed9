package schema

// derivedKept are the steps that leave the worker's derived state
// (mem_block_state, mem_edge_due, mem_fact_due and every number in them)
// valid, up and down: a migration of only these keeps the next sweep
// incremental, where any other makes it compute every row again (at 10M
// edges a minute, against seconds). A step belongs here only when it
// touches no derived table and no rule the sweep computes them with; one
// left out is the safe default.
var derivedKept = map[uint]bool{
	19: true, // mem_accesses: reads an app recorded, which only tune reads
	20: true, // the archives lose their index of subjects
	21: true, // mem_degree_log: empty but inside a sweep, folded by the step down
	22: true, // mem_edge_soon: a copy of due times, built by the next sweep
}

// DerivedLayout is the newest step at or below version that may change the
// derived state: the schema the derived state's fingerprint names, so that
// a binary whose newest steps keep it trusts what an older one stored.
func DerivedLayout(version uint) uint {
	for version > 0 && derivedKept[version] {
		version--
	}
	return version
}

// keepsDerived reports whether moving from one version to another runs
// only steps that keep the derived state (derivedKept).
func keepsDerived(from, to uint) bool {
	lo, hi := min(from, to), max(from, to)
	for v := lo + 1; v <= hi; v++ {
		if !derivedKept[v] {
			return false
		}
	}
	return true
}
