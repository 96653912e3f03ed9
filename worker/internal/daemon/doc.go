// Package daemon sweeps fleets of databases, once or as a daemon.
package daemon
