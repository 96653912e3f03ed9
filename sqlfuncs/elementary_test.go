package sqlfuncs

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// The elementary functions under test, by the name the golden files use.
var elementaryFuncs = map[string]struct {
	fast func(float64) float64
	slow func(float64) float64
}{
	"exp":   {crExp, bigExpSlow},
	"exp2":  {crExp2, bigExp2Slow},
	"expm1": {crExpm1, bigExpm1Slow},
	"log":   {crLog, bigLogSlow},
	"log2":  {crLog2, bigLog2Slow},
	"log1p": {crLog1p, bigLog1pSlow},
}

// goldenLine is one "<function> <bits>... <result bits>" line.
type goldenLine struct {
	fn   string
	args []float64
	want uint64
	line int
}

func readGolden(t testing.TB, path string) []goldenLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = gz
	}
	var lines []goldenLine
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if text == "" || text[0] == '#' {
			continue
		}
		fields := strings.Fields(text)
		g := goldenLine{fn: fields[0], line: n}
		for i, h := range fields[1:] {
			b, err := strconv.ParseUint(h, 16, 64)
			if err != nil {
				t.Fatalf("%s:%d: %v", path, n, err)
			}
			if i == len(fields)-2 {
				g.want = b
			} else {
				g.args = append(g.args, math.Float64frombits(b))
			}
		}
		lines = append(lines, g)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// sameBits compares as bits, every NaN equal to every other.
func sameBits(got float64, want uint64) bool {
	w := math.Float64frombits(want)
	if math.IsNaN(got) && math.IsNaN(w) {
		return true
	}
	return math.Float64bits(got) == want
}

// checkElementary checks the fast functions, and with slow also the slow
// path, against a golden file.
func checkElementary(t *testing.T, path string, slow bool) {
	lines := readGolden(t, path)
	counts := map[string]int{}
	bad := 0
	for _, g := range lines {
		counts[g.fn]++
		var got, gotSlow float64
		if g.fn == "pow1p" {
			got = crPow1p(g.args[0], g.args[1])
			gotSlow = bigPow1pSlow(g.args[0], g.args[1])
		} else {
			f, ok := elementaryFuncs[g.fn]
			if !ok {
				t.Fatalf("%s:%d: unknown function %q", path, g.line, g.fn)
			}
			got = f.fast(g.args[0])
			gotSlow = f.slow(g.args[0])
		}
		if !sameBits(got, g.want) {
			bad++
			if bad <= 20 {
				t.Errorf("%s:%d: %s(%v) = %v (%016x), want %v (%016x)", path, g.line, g.fn, g.args, got, math.Float64bits(got), math.Float64frombits(g.want), g.want)
			}
		}
		if slow && !special(g.args[0]) && !sameBits(gotSlow, g.want) {
			bad++
			if bad <= 20 {
				t.Errorf("%s:%d: slow %s(%v) = %v, want %v", path, g.line, g.fn, g.args, gotSlow, math.Float64frombits(g.want))
			}
		}
	}
	t.Logf("%s: %v cases, %d wrong", path, counts, bad)
}

// special inputs are answered before either path: the slow path does not
// take them.
func special(x float64) bool {
	return math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 && x >= -0x1p-54
}

// Hard-to-round inputs from the published worst-case lists.
func TestElementaryHardCases(t *testing.T) {
	checkElementary(t, "testdata/elementary_hard.txt", true)
}

// Random inputs against mpmath at 400 bits (scripts/elementary.py golden).
func TestElementaryGolden(t *testing.T) {
	checkElementary(t, "testdata/elementary_golden.txt.gz", !testing.Short())
}

// A larger one-off check: MEMDECAY_ELEMENTARY_GOLDEN names a file written by
// scripts/elementary.py golden (millions of cases); fast path only.
func TestElementaryGoldenFile(t *testing.T) {
	path := os.Getenv("MEMDECAY_ELEMENTARY_GOLDEN")
	if path == "" {
		t.Skip("MEMDECAY_ELEMENTARY_GOLDEN not set")
	}
	checkElementary(t, path, false)
}

func TestElementarySpecialValues(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{
		{"exp(0)", crExp(0), 1}, {"exp(-0)", crExp(math.Copysign(0, -1)), 1},
		{"exp(+inf)", crExp(inf), inf}, {"exp(-inf)", crExp(-inf), 0}, {"exp(nan)", crExp(nan), nan},
		{"exp(710)", crExp(710), inf}, {"exp(-746)", crExp(-746), 0},
		{"exp(-745.1332191019411)", crExp(-745.1332191019411), 5e-324},
		{"exp2(-3)", crExp2(-3), 0.125}, {"exp2(1023)", crExp2(1023), 0x1p1023}, {"exp2(-1074)", crExp2(-1074), 5e-324},
		{"exp2(1024)", crExp2(1024), inf}, {"exp2(0.5)", crExp2(0.5), math.Sqrt2},
		{"expm1(0)", crExpm1(0), 0}, {"expm1(-inf)", crExpm1(-inf), -1}, {"expm1(1e-300)", crExpm1(1e-300), 1e-300},
		{"log(1)", crLog(1), 0}, {"log(0)", crLog(0), -inf}, {"log(-1)", crLog(-1), nan}, {"log(inf)", crLog(inf), inf},
		{"log(5e-324)", crLog(5e-324), -744.4400719213812},
		{"log2(8)", crLog2(8), 3}, {"log2(5e-324)", crLog2(5e-324), -1074}, {"log2(0x1p-1022)", crLog2(0x1p-1022), -1022},
		{"log1p(-1)", crLog1p(-1), -inf}, {"log1p(-2)", crLog1p(-2), nan}, {"log1p(5e-324)", crLog1p(5e-324), 5e-324},
		{"pow1p(1, -1)", crPow1p(1, -1), 0.5}, {"pow1p(3, -0.5)", crPow1p(3, -0.5), 0.5}, {"pow1p(0, -7)", crPow1p(0, -7), 1},
		{"pow1p(inf, -1)", crPow1p(inf, -1), 0}, {"pow1p(1e300, -2)", crPow1p(1e300, -2), 0},
	} {
		if !sameBits(c.got, math.Float64bits(c.want)) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// The fast paths' double-double results against 300-bit values: the
// largest relative error seen must stay below the proven 2^-97 (the
// rounding test allows 2^-90).
func TestElementaryFastPathError(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 300
	}
	rng := rand.New(rand.NewPCG(1, 2))
	relErr := func(h, l float64, exact *big.Float) float64 {
		v := newBig().SetFloat64(h)
		v.Add(v, newBig().SetFloat64(l))
		v.Sub(v, exact)
		v.Quo(v, exact)
		f, _ := v.Float64()
		return math.Abs(f)
	}
	worst := map[string]float64{}
	for range n {
		x := rng.Float64()*1400 - 700
		m, h, l := expDD(x, 0)
		exact := bigExp(bigOf(x))
		exact.SetMantExp(exact, -m)
		worst["exp"] = max(worst["exp"], relErr(h, l, exact))

		y := math.Float64frombits(rng.Uint64N(0x7ff0000000000000-1) + 1)
		if rng.IntN(2) == 0 {
			y = 1 + (rng.Float64()-0.5)*math.Ldexp(1, -rng.IntN(50))
		}
		if y != 1 {
			h, l = logDD(y, 0)
			worst["log"] = max(worst["log"], relErr(h, l, bigLog(bigOf(y))))
		}

		u := math.Ldexp(rng.Float64(), rng.IntN(80)-60)
		s, tl := twoSum(1, u)
		h, l = logDD(s, tl)
		worst["log1p"] = max(worst["log1p"], relErr(h, l, bigLog1p(u)))
	}
	for fn, w := range worst {
		t.Logf("%s: largest relative error 2^%.1f over %d inputs", fn, math.Log2(w), n)
		if w > 0x1p-97 {
			t.Errorf("%s: relative error 2^%.1f above the bound 2^-97", fn, math.Log2(w))
		}
	}
}

// sqlFormulas evaluates a formulas_golden.txt line with the SQL functions.
func sqlFormula(t *testing.T, g goldenLine) float64 {
	a := g.args
	value := func(v float64, err error) float64 {
		if err != nil {
			t.Fatalf("line %d: %s%v: %v", g.line, g.fn, a, err)
		}
		return v
	}
	horizon := func(h Horizon, err error) float64 {
		if err != nil || h.Never {
			t.Fatalf("line %d: %s%v: %v never=%v", g.line, g.fn, a, err, h.Never)
		}
		return h.At
	}
	curve := func(js string) *Curve {
		c, err := ParseCurve("curve_horizon", "curve_json", js)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	switch g.fn {
	case "effective_weight":
		return value(EffectiveWeight(a[0], a[1], a[2]))
	case "half_life_weight":
		return value(HalfLifeWeight(a[0], a[1], a[2]))
	case "power_law_weight":
		return value(PowerLawWeight(a[0], a[1], a[2], a[3]))
	case "decay_horizon":
		return horizon(DecayHorizon(a[0], a[1], a[2]))
	case "half_life_horizon":
		return horizon(curve(`{"model":"half_life","half_life":`+num(a[1])+`}`).Horizon(a[0], a[2]))
	case "power_law_horizon":
		return horizon(curve(`{"model":"power_law","alpha":`+num(a[1])+`,"scale":`+num(a[2])+`}`).Horizon(a[0], a[3]))
	case "tideline_score":
		return value(TidelineScore(a[0], a[1], a[2], a[3], ""))
	case "tideline_horizon":
		return horizon(TidelineHorizon(a[0], a[1], a[2], a[3], ""))
	case "edge_strength":
		return value(EdgeStrength(a[0], a[1]))
	case "log_normalise":
		return value(LogNormalise(a[0], a[1]))
	}
	t.Fatalf("line %d: unknown function %q", g.line, g.fn)
	return 0
}

// The SQL functions' results, bit for bit, as scripts/elementary.py
// formulas computes them independently (mpmath for the elementary
// functions, CPython's unfused float operations for the rest).
func TestFormulasGolden(t *testing.T) {
	lines := readGolden(t, "testdata/formulas_golden.txt")
	counts := map[string]int{}
	for _, g := range lines {
		counts[g.fn]++
		if got := sqlFormula(t, g); !sameBits(got, g.want) {
			t.Errorf("line %d: %s%v = %v (%016x), want %v (%016x)", g.line, g.fn, g.args, got, math.Float64bits(got), math.Float64frombits(g.want), g.want)
		}
	}
	t.Logf("%v", counts)
}

// The edge whose fate depended on the CPU: weight 0.9843123015161392,
// λ 0.005, 457.3546080598973 h. Its exact weight is just below 0.1, and so
// is the correctly rounded one on every machine.
func TestNearThresholdEdge(t *testing.T) {
	w, err := EffectiveWeight(0.9843123015161392, 0.005, 457.3546080598973)
	if err != nil {
		t.Fatal(err)
	}
	if w != 0.09999999999999999 {
		t.Errorf("effective_weight = %v, want 0.09999999999999999 (below the 0.1 threshold)", w)
	}
}

// fmaInputs are the exponents and power-law arguments of random
// effective_weight, power_law_weight and tideline_score calls.
func fmaInputs() [][2]float64 {
	rng := rand.New(rand.NewPCG(7, 8))
	in := make([][2]float64, 20000)
	for i := range in {
		in[i] = [2]float64{-rng.Float64() * 0.05 * rng.Float64() * 2000, rng.Float64() * 1000}
	}
	return in
}

// printBits writes, for each input, the bits of math.Exp, math.Pow, crExp
// and crPow1p.
func printBits(w io.Writer) {
	for _, in := range fmaInputs() {
		fmt.Fprintf(w, "%016x %016x %016x %016x\n",
			math.Float64bits(math.Exp(in[0])), math.Float64bits(math.Pow(1+in[1], -0.7)),
			math.Float64bits(crExp(in[0])), math.Float64bits(crPow1p(in[1], -0.7)))
	}
}

// The child side of TestSameBitsWithoutFMA.
func TestHelperPrintBits(t *testing.T) {
	if os.Getenv("MEMDECAY_PRINT_BITS") != "1" {
		t.Skip("run by TestSameBitsWithoutFMA")
	}
	printBits(os.Stdout)
}

// On amd64 Go's math.Exp uses FMA instructions when the CPU has them:
// GODEBUG=cpu.fma=off makes it take the other path, and its bits change for
// some inputs. memdecay's functions give the same bits either way, and the
// golden tests pass without FMA too.
func TestSameBitsWithoutFMA(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("cpu.fma is an amd64 switch; scripts/test-arm64.sh covers arm64")
	}
	if strings.Contains(os.Getenv("GODEBUG"), "cpu.fma=off") {
		t.Skip("already running without FMA")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperPrintBits$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GODEBUG=cpu.fma=off", "MEMDECAY_PRINT_BITS=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var here strings.Builder
	printBits(&here)
	child := strings.Split(string(out), "\n")
	mathDiffers, crDiffers := 0, 0
	for i, line := range strings.Split(here.String(), "\n") {
		if line == "" {
			continue
		}
		a, b := strings.Fields(line), strings.Fields(child[i])
		if a[0] != b[0] || a[1] != b[1] {
			mathDiffers++
		}
		if a[2] != b[2] || a[3] != b[3] {
			crDiffers++
		}
	}
	n := len(fmaInputs())
	t.Logf("without FMA: math.Exp/math.Pow differ for %d of %d inputs, memdecay's for %d", mathDiffers, n, crDiffers)
	if crDiffers != 0 {
		t.Errorf("memdecay's exp or pow differs without FMA for %d inputs", crDiffers)
	}
	if mathDiffers == 0 {
		t.Log("math.Exp gives the same bits without FMA: this CPU has no FMA")
	}

	// The golden tests, without FMA.
	cmd = exec.Command(os.Args[0], "-test.run=^(TestElementaryHardCases|TestElementaryGolden|TestFormulasGolden|TestNearThresholdEdge|TestElementarySpecialValues)$", "-test.count=1", "-test.short")
	cmd.Env = append(os.Environ(), "GODEBUG=cpu.fma=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("golden tests with GODEBUG=cpu.fma=off: %v\n%s", err, out)
	}
}

func BenchmarkElementary(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	xs := make([]float64, 1024)
	for i := range xs {
		xs[i] = -rng.Float64() * 20
	}
	pos := make([]float64, len(xs))
	for i := range pos {
		pos[i] = rng.Float64() * 100
	}
	var sink float64
	for _, bm := range []struct {
		name string
		f    func(i int) float64
	}{
		{"math.Exp", func(i int) float64 { return math.Exp(xs[i]) }},
		{"crExp", func(i int) float64 { return crExp(xs[i]) }},
		{"math.Log", func(i int) float64 { return math.Log(pos[i]) }},
		{"crLog", func(i int) float64 { return crLog(pos[i]) }},
		{"math.Log1p", func(i int) float64 { return math.Log1p(pos[i]) }},
		{"crLog1p", func(i int) float64 { return crLog1p(pos[i]) }},
		{"math.Pow", func(i int) float64 { return math.Pow(1+pos[i], -0.7) }},
		{"crPow1p", func(i int) float64 { return crPow1p(pos[i], -0.7) }},
	} {
		b.Run(bm.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				sink += bm.f(i & 1023)
			}
		})
	}
	_ = sink
}
