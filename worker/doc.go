// Package worker runs memdecay's sweeps on a SQLite file or an rqlite
// cluster: set-based SQL, planned at one snapshot, then applied in short
// transactions, each removal written to mem_events with it; and the reports,
// restore, the daemon and the storage they run on (docs/design.md has the
// rooms).
package worker
