package main

import (
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The row source of the shell benchmark: one million edges from the
// shell's generate_series, computed on the fly so every query pays the same.
const benchSource = `(SELECT 0.1 + (value % 90) / 100.0 AS weight, 0.005 * (1 + value % 4) AS lambda,
	(value % 1000) - 10 AS elapsed FROM generate_series(1, 1000000))`

const benchRows = 1_000_000

var runTime = regexp.MustCompile(`Run Time: real ([0-9.]+)`)

// BenchmarkShellEffectiveWeight measures, in the real sqlite3 shell with
// the built memdecay.so loaded, the cost per row of effective_weight against
// the same expression with SQLite's built-in exp() and a plain scan, all in
// one shell process per iteration. The metrics are ns/row of each and the
// ratio extension ÷ built-in.
func BenchmarkShellEffectiveWeight(b *testing.B) {
	exprs := []struct{ name, expr string }{
		{"scan", "weight + lambda + elapsed"},
		{"builtin", "weight * exp(-lambda * max(0, elapsed))"},
		{"extension", "effective_weight(weight, lambda, elapsed)"},
	}
	var script strings.Builder
	script.WriteString(".load " + loadName(b) + "\n.timer on\n")
	for _, e := range exprs {
		script.WriteString("SELECT sum(" + e.expr + ") FROM " + benchSource + ";\n")
	}
	shell := sqlite3Shell(b)
	seconds := make([]float64, len(exprs))
	b.ResetTimer()
	for range b.N {
		cmd := exec.Command(shell, ":memory:")
		cmd.Stdin = strings.NewReader(script.String())
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("sqlite3: %v\n%s", err, out)
		}
		m := runTime.FindAllStringSubmatch(string(out), -1)
		if len(m) != len(exprs) {
			b.Fatalf("want %d timings, got:\n%s", len(exprs), out)
		}
		for i := range exprs {
			s, _ := strconv.ParseFloat(m[i][1], 64)
			seconds[i] += s
		}
	}
	perRow := func(i int) float64 { return seconds[i] * 1e9 / float64(b.N) / benchRows }
	for i, e := range exprs {
		b.ReportMetric(perRow(i), e.name+"-ns/row")
	}
	b.ReportMetric(perRow(2)/perRow(1), "ext/builtin")
	b.ReportMetric((perRow(2)-perRow(0))/(perRow(1)-perRow(0)), "ext/builtin-over-scan")
}
