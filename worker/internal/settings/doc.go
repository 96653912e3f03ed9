// Package settings reads and writes a database's settings (mem_config, the
// edge policies) and picks the clock every decision is taken at.
package settings
