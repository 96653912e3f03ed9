package mapping

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxName is how much of a name a refusal shows: a table or column name
// of 10 kB would drown the one line the refusal is.
const maxName = 60

// maxError is how much of a parser's error a refusal shows.
const maxError = 300

// shown is a name as a refusal shows it: as it is when short and
// printable, else quoted and cut to maxName characters (%q quotes it
// always).
type shown string

func (s shown) Format(f fmt.State, verb rune) {
	str := string(s)
	long := utf8.RuneCountInString(str) > maxName
	if verb != 'q' && !long && printable(str) {
		io.WriteString(f, str)
		return
	}
	fmt.Fprintf(f, "%.*q", maxName, str)
	if long {
		io.WriteString(f, "…")
	}
}

// printable: valid UTF-8 with no control character, so it cannot break
// the line it is in.
func printable(s string) bool {
	return utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0
}

// said is text a refusal shows as it is: its names are already shown.
type said string

// maxListed is how many columns a refusal lists.
const maxListed = 40

// listColumns is a table's columns as a refusal lists them.
func listColumns(names []string) said {
	shownNames := make([]string, 0, min(len(names), maxListed)+1)
	for i, n := range names {
		if i == maxListed {
			shownNames = append(shownNames, fmt.Sprintf("and %d more", len(names)-maxListed))
			break
		}
		shownNames = append(shownNames, fmt.Sprint(shown(n)))
	}
	return said(strings.Join(shownNames, ", "))
}

// shownArgs makes every name among a refusal's arguments shown, and cuts
// a parser's long error.
func shownArgs(a []any) []any {
	out := make([]any, len(a))
	for i, v := range a {
		switch x := v.(type) {
		case string:
			out[i] = shown(x)
		case Key:
			out[i] = shown(x.String())
		case []string:
			out[i] = shown(strings.Join(x, ", "))
		case error:
			msg := x.Error()
			if utf8.RuneCountInString(msg) > maxError {
				msg = string([]rune(msg)[:maxError]) + "…"
			}
			out[i] = strings.Map(func(r rune) rune {
				if unicode.IsControl(r) {
					return ' '
				}
				return r
			}, msg)
		default:
			out[i] = v
		}
	}
	return out
}
