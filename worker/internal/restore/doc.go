// Package restore puts back what a sweep removed, from the event that
// recorded it.
package restore
