// Package readers reads a database for people: status, decayed edges,
// explain, sketches and plot data.
package readers
