// Package sweep is the sweep engine: plan at one snapshot, apply in short
// transactions, settle, with the lease held throughout.
package sweep
