package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"

	"github.com/memdecay/memdecay/worker"
)

// Text output shows what the database holds (ids, relation types, values)
// through safe: an id with a terminal escape or a line break is printed
// Go-quoted, every other one as it is. JSON output escapes as JSON does.
var safe = worker.Printable

// safeAll is safe applied to each of a list.
func safeAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = safe(s)
	}
	return out
}

// escapeControls writes each unprintable character of a message as its Go
// escape, leaving the rest (quotes included) as it is: for error messages,
// which may quote an id already.
func escapeControls(msg string) string {
	var b strings.Builder
	for _, r := range msg {
		if unicode.IsPrint(r) {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRune(r)
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}

// tables name the table of each kind of row a sweep reports.
var tables = map[string]string{"edge": "mem_edges", "block": "mem_blocks", "fact": "mem_facts"}

// printInvalidSample prints the invalid rows a sweep report names and, when
// it skipped more, how to list them all.
func printInvalidSample(w io.Writer, r *worker.Report) {
	for _, s := range r.InvalidRows.Sample {
		kind := s.Kind
		if s.Table != "" { // through a mapping: the app's own table
			kind += " of " + s.Table
		}
		fmt.Fprintf(w, "  skipped invalid %s %s: %s\n", safe(kind), safe(s.ID), safe(s.Problem))
	}
	if n := int64(len(r.InvalidRows.Sample)); r.InvalidRows.Count > n {
		fmt.Fprintf(w, "  (showing %d of %d; list them all with: %s)\n", n, r.InvalidRows.Count, worker.ListInvalidCommand)
	}
}
