// Package tune answers which half-life each tier should have, from an
// app's own reads (memworker tune). It replays a read log in time order
// against the sweep's archival rule: a node is archived once its recency
// exp(−λ·elapsed) falls below block_prune_threshold, i.e. after
// k = log2(1/threshold) half-lives without a read; its next read is then
// a miss, and the time it is kept after its last read is clutter.
//
// Per tier the rule reduces to the sorted distribution of the gaps
// between a node's reads (a read at t1 then t2 is a miss iff
// t2 − t1 > k·h) and of the time left after each node's last read
// (clutter min(k·h, end − t_last)), so the grid of half-lives is searched
// over sorted gaps and prefix sums, not by a simulation per candidate.
// The shortest half-life within the miss budget on the earlier reads is
// the best; the later (held-out) reads judge it against the declared one,
// with the ranking quality of each next read (MRR) as a second opinion.
package tune
