// Package sqlcalls tells which memdecay functions, at which arities, a list
// of SQL expressions calls, so that the extension's tests can check that
// their tables of cases cover every function in the registry.
package sqlcalls

import (
	"fmt"
	"slices"
	"strings"

	"github.com/memdecay/memdecay/ext/shim"
)

// Missing returns "name/arity" for each arity of each function in fns that
// no expression calls, in registry order. Functions named in skip are left
// out: they have tests of their own.
func Missing(exprs []string, fns []shim.Function, skip ...string) []string {
	names := make([]string, len(fns))
	for i, f := range fns {
		names[i] = f.Name
	}
	seen := map[string]bool{}
	for _, e := range exprs {
		for _, c := range Calls(e, names) {
			seen[c] = true
		}
	}
	var missing []string
	for _, f := range fns {
		if slices.Contains(skip, f.Name) {
			continue
		}
		for n := f.MinArgs; n <= f.MaxArgs(); n++ {
			if c := fmt.Sprintf("%s/%d", f.Name, n); !seen[c] {
				missing = append(missing, c)
			}
		}
	}
	return missing
}

// Calls lists "name/arity" for each call in expr of a function in names.
func Calls(expr string, names []string) []string {
	var out []string
	for _, name := range names {
		for i := 0; ; {
			j := strings.Index(expr[i:], name+"(")
			if j < 0 {
				break
			}
			at := i + j
			i = at + len(name) + 1
			if at > 0 && (expr[at-1] == '_' || expr[at-1] >= 'a' && expr[at-1] <= 'z') {
				continue // a longer name such as multi_linear_weight
			}
			out = append(out, fmt.Sprintf("%s/%d", name, arity(expr[i:])))
		}
	}
	return out
}

// arity counts the arguments of a call whose text starts after its "(":
// the commas at the top level, outside quotes, up to the closing ")".
func arity(s string) int {
	depth, commas, empty := 0, 0, true
	var quote byte
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '"':
			quote = ch
		case ch == '(':
			depth++
		case ch == ')' && depth == 0:
			if empty {
				return 0
			}
			return commas + 1
		case ch == ')':
			depth--
		case ch == ',' && depth == 0:
			commas++
		}
		if ch != ' ' {
			empty = false
		}
	}
	return -1
}
