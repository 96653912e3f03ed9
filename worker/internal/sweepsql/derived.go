package sweepsql

// DerivedRules numbers the rules the worker's derived state
// (mem_block_state, mem_edge_due, mem_fact_due) is computed with. The
// derived state's fingerprint names it, so a binary whose rules compute
// other numbers than the one that stored them recomputes every row at its
// first sweep; one whose rules are the same keeps them. Bump it when the
// statements of DerivedStatements or a formula they call (decay_horizon,
// edge_strength, tier_lambda, decay_tier, lambda_edge, the curves,
// tideline_horizon, the linked build's memdecay_block_rate and
// memdecay_sum_ends) change what they store; TestDerivedRulesGuard fails
// until the change is recorded either way.
const DerivedRules = 1

// DerivedStatements are the statements that compute or store the derived
// state: the refreshes, the full sweep's evaluation and shadow state, the
// degrees and what the plan takes off them (plan_lost: a full sweep's
// sync stores the degrees without it), the removals' degrees (logged,
// then folded) and due rows, and the ranking's bounds.
var DerivedStatements = []string{
	// refresh.sql
	"refresh_blocks_all", "degrees_all", "degrees_later", "degrees_from_evaluation", "edge_strengths", "degrees_store",
	"refresh_blocks_queued",
	"refresh_blocks", "refresh_blocks_retier", "refresh_blocks_store", "refresh_edges_queued", "refresh_edges",
	"refresh_edges_all", "refresh_edges_tail", "refresh_edges_invalid", "refresh_facts_all", "refresh_facts_queued",
	"refresh_facts", "forget_gone",
	// sync.sql, temp.sql
	"sync_collect", "sync_apply", "shadow_state",
	// plan.sql
	"evaluate_edges", "fill_block_rates", "evaluate_edges_all", "evaluate_edges_all_hashed", "plan_rank_all", "plan_rank_scale", "plan_rank_seed", "plan_rank_more",
	"plan_rank_ids", "plan_lost", "lost_strengths",
	// apply.sql
	"apply_edges", "remove_edges", "fold_degrees", "refused_plan_edges", "apply_rank_bounds",
}
