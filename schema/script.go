package schema

import (
	"fmt"
	"strings"
)

// Script renders the migrations as one SQL script, for an app whose own
// migration tool owns the DDL: every up step in order (or every down step,
// newest first), or only step `only` when it is not 0. Each step ends by
// recording its version in the version table, as memworker migrate does, so
// memworker recognises the schema the script installed. The guards memworker
// migrate adds (the one transaction, the refusal of an app column on a table
// a step rebuilds, re-creating the app's indexes and triggers on it) are the
// app's tool's to provide.
func Script(up bool, only uint) (string, error) {
	all, err := steps()
	if err != nil {
		return "", err
	}
	latest := all[len(all)-1].version
	if only > latest {
		return "", fmt.Errorf("schema: migration %d does not exist; this memworker knows 1 to %d", only, latest)
	}
	var b strings.Builder
	b.WriteString("-- memdecay schema migrations. Run them on a connection with memdecay loaded:\n" +
		"-- some steps re-read the views, which call its functions.\n\n")
	write := func(s step, body string, after uint) {
		dir := "up"
		if !up {
			dir = "down"
		}
		fmt.Fprintf(&b, "-- memdecay migration %d (%s), %s\n", s.version, s.name, dir)
		b.WriteString(strings.TrimRight(body, "\n") + "\n")
		fmt.Fprintf(&b, "CREATE TABLE IF NOT EXISTS %s (version uint64, dirty bool);\n", VersionTable)
		fmt.Fprintf(&b, "CREATE UNIQUE INDEX IF NOT EXISTS %s ON %s (version);\n", versionIndex, VersionTable)
		fmt.Fprintf(&b, "DELETE FROM %s;\n", VersionTable)
		if after > 0 {
			fmt.Fprintf(&b, "INSERT INTO %s (version, dirty) VALUES (%d, 0);\n", VersionTable, after)
		}
		b.WriteString("\n")
	}
	for i := range all {
		s := all[i]
		if !up {
			s = all[len(all)-1-i]
		}
		if only != 0 && s.version != only {
			continue
		}
		if up {
			write(s, s.up, s.version)
		} else {
			write(s, s.down, s.version-1)
		}
	}
	return b.String(), nil
}
