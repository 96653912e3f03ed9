// Package sweepsql holds the sweep's SQL: the rules written once as macros,
// the statement files (sql/), the dialects that name the tables swept, the
// archives and the events' snapshots.
package sweepsql
