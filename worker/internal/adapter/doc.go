// Package adapter is the adapter of a declared mapping (the views and
// triggers through which the sweep's SQL reads and writes an app's own
// tables), the readers' views, and the declaration of a mapping.
package adapter
