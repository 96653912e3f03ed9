// Package report is the report of a sweep, and its one-line summary.
package report
