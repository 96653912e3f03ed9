package sweepsql

import (
	"strings"

	"github.com/memdecay/memdecay/worker/mapping"
)

// Ident quotes an SQL identifier.
func Ident(name string) string { return mapping.Ident(name) }

// Literal quotes an SQL text literal.
func Literal(s string) string { return `'` + strings.ReplaceAll(s, `'`, `''`) + `'` }

// StatusValues are the status values a mapping lists for a meaning, or
// def when it lists none.
func StatusValues(values []string, def string) []string {
	if len(values) == 0 {
		return []string{def}
	}
	return values
}

// SQLList is values as SQL text literals, separated by commas.
func SQLList(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = Literal(v)
	}
	return strings.Join(quoted, ", ")
}
