package rqcluster

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Column is the first column of what node n's own copy answers to query
// (read at level none), each value as text.
func (n *Node) Column(ctx context.Context, query string) ([]string, error) {
	rows, err := n.Query(ctx, query)
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, r := range rows {
		out = append(out, fmt.Sprint(r[0]))
	}
	return out, nil
}

// EveryNodeAnswers waits, at most wait, until every running node's own
// copy answers query with want (Column): a follower applies the log a
// moment after the leader. Its error names the first node that did not,
// and what it answered.
func (c *Cluster) EveryNodeAnswers(ctx context.Context, query string, want []string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for _, n := range c.Running() {
		for {
			got, err := n.Column(ctx, query)
			if err == nil && slices.Equal(got, want) {
				break
			}
			if time.Now().After(deadline) {
				if err != nil {
					return fmt.Errorf("node %s: %s: %w", n.ID, query, err)
				}
				return fmt.Errorf("node %s answers %s\n got %q\nwant %q", n.ID, query, got, want)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}
