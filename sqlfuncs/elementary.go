package sqlfuncs

import "math"

// memdecay's own exp, exp2, expm1, log, log2, log1p and (1+u)^y, correctly
// rounded (to nearest, ties to even) and so the same bits on every machine.
// Go's math.Exp takes another path on CPUs with FMA, and on arm64 the
// compiler fuses multiply-adds in math's pure-Go code: results would differ
// between replicas of a cluster (docs/sweep.md).
//
// Each function is Ziv's method in two steps. A fast path evaluates the
// function in double-double arithmetic (elementary_dd.go) from tables
// (elementary_tables.go) with a relative error below 2^-97 (the bound is
// worked out step by step in the comments below, and the tests measure it
// against 300-bit values); if every real within 2^-90 of that result (a
// margin of 2^7) rounds to the same double, that double is the correctly
// rounded result. Otherwise, an estimated once in 2^36 calls, the slow path
// evaluates it again with math/big at 300 bits (elementary_big.go). The
// hardest cases of exp and log over all doubles have been found (Lefèvre
// and Muller): none has more than 64 identical bits after the rounding bit,
// so none lies within 2^-118 (relative) of a rounding boundary, and 300 bits
// decide them all. For exp2, expm1, log2 and log1p the published searches
// (some over part of the range) point the same way; for (1+u)^y of two
// arguments no bound is known. Should an input ever come closer than 300
// bits can decide, its result is still the same on every machine: the
// rounded 300-bit value.

// fastEps is the error a fast result is tested against.
const fastEps = 0x1p-90

// crExp is e^x correctly rounded.
func crExp(x float64) float64 {
	switch {
	case x != x:
		return x
	case x > 709.8:
		return math.Inf(1)
	case x < -745.2:
		return 0
	case math.Abs(x) < 0x1p-54:
		return 1
	case x < -708.3: // a subnormal result: the fast path keeps 53 bits
		return bigExpSlow(x)
	}
	m, h, l := expDD(x, 0)
	if roundsTo(h, l, fastEps) {
		return scale2(h, m)
	}
	return bigExpSlow(x)
}

// crExp2 is 2^x correctly rounded.
func crExp2(x float64) float64 {
	switch {
	case x != x:
		return x
	case x >= 1024:
		return math.Inf(1)
	case x < -1076:
		return 0
	case math.Abs(x) < 0x1p-54:
		return 1
	case x == math.Trunc(x) && x >= -1022:
		return scale2(1, int(x))
	case x < -1022:
		return bigExp2Slow(x)
	}
	// x = n/128 + d exactly, |d| ≤ 1/256; 2^x = 2^(n/128)·e^(d·ln2).
	n := math.Round(float64(x * 128))
	d := x - float64(n*0x1p-7)
	rh, rl := mul21(ln2Hi, ln2Lo, d)
	m, h, l := expCore(int(n), rh, rl)
	if roundsTo(h, l, fastEps) {
		return scale2(h, m)
	}
	return bigExp2Slow(x)
}

// crExpm1 is e^x − 1 correctly rounded.
func crExpm1(x float64) float64 {
	switch {
	case x != x:
		return x
	case x > 709.8:
		return math.Inf(1)
	case x <= -38: // e^x < 2^-54: −1 + e^x rounds to −1
		return -1
	case math.Abs(x) < 0x1p-54:
		return x
	}
	var m int
	var h, l float64
	eps := fastEps
	if math.Abs(x) <= 0x1p-9 {
		// e^x − 1 = x·(1 + x/2 + …), the polynomial of the fast exp.
		ah, al := expPoly1(x)
		h, l = mul21(ah, al, x)
	} else {
		var eh, el float64
		m, eh, el = expDD(x, 0)
		// e^x − 1 = 2^m·(eh + el − 2^-m); the subtraction cancels at most
		// a factor e^x/(e^x − 1) < 2^9.1 here.
		h, l = add22(eh, el, -scale2(1, -m), 0)
		if math.Abs(x) < 1 {
			eps = 0x1p-80
		}
	}
	if roundsTo(h, l, eps) {
		return scale2(h, m)
	}
	return bigExpm1Slow(x)
}

// crLog is ln x correctly rounded.
func crLog(x float64) float64 {
	switch {
	case x != x || x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	case math.IsInf(x, 1):
		return x
	case x == 1:
		return 0
	}
	h, l := logDD(x, 0)
	if roundsTo(h, l, fastEps) {
		return h
	}
	return bigLogSlow(x)
}

// crLog2 is log2 x correctly rounded.
func crLog2(x float64) float64 {
	switch {
	case x != x || x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	case math.IsInf(x, 1):
		return x
	}
	if frac, e := math.Frexp(x); frac == 0.5 {
		return float64(e - 1)
	}
	h, l := logDD(x, 0)
	h, l = mul22(h, l, invLn2Hi, invLn2Lo)
	if roundsTo(h, l, fastEps) {
		return h
	}
	return bigLog2Slow(x)
}

// crLog1p is ln(1 + x) correctly rounded.
func crLog1p(x float64) float64 {
	switch {
	case x != x || x < -1:
		return math.NaN()
	case x == -1:
		return math.Inf(-1)
	case math.IsInf(x, 1):
		return x
	case math.Abs(x) < 0x1p-54: // ln(1+x) = x − x²/2 + … rounds to x
		return x
	}
	s, t := twoSum(1, x)
	h, l := logDD(s, t)
	if roundsTo(h, l, fastEps) {
		return h
	}
	return bigLog1pSlow(x)
}

// crPow1p is (1 + u)^y, u > −1: exp(y·ln(1+u)) with the logarithm and the
// product kept in double-double, then one rounding.
func crPow1p(u, y float64) float64 {
	switch {
	case u != u || y != y || u < -1:
		return math.NaN()
	case u == 0 || y == 0:
		return 1
	case u == -1:
		if y > 0 {
			return 0
		}
		return math.Inf(1)
	case math.IsInf(u, 1):
		if y > 0 {
			return u
		}
		return 0
	case math.IsInf(y, 0):
		if (u > 0) == (y > 0) {
			return math.Inf(1)
		}
		return 0
	}
	s, t := twoSum(1, u)
	lh, ll := logDD(s, t)
	yh, yl := mul21(lh, ll, y)
	switch {
	case yh > 709.8:
		return math.Inf(1)
	case yh < -745.2:
		return 0
	case yh < -708.3:
		return bigPow1pSlow(u, y)
	}
	m, h, l := expDD(yh, yl)
	// y·ln(1+u) carries a relative error of 2^-96, an absolute error of
	// |y·ln(1+u)|·2^-96 that becomes a relative error of the power.
	eps := powerOfTwoAbove(fastEps + float64(math.Abs(yh)*0x1p-93))
	if roundsTo(h, l, eps) {
		return scale2(h, m)
	}
	return bigPow1pSlow(u, y)
}

// expDD is e^(xh + xl) = 2^m·(h + l), h + l in [0.99, 2.02] with relative
// error below 2^-99, for |xh| ≤ 746 and |xl| ≤ ulp(xh)/2.
//
// x = n·ln2/128 + r with |r| ≤ ln2/256 + 2^-60; ln2/128 is split in three
// parts, the first with 35 bits so that n·expRed1 (|n| < 2^18) and xh − n·expRed1
// (Sterbenz) are exact.
func expDD(xh, xl float64) (m int, h, l float64) {
	n := math.Round(float64(xh * expInvRed))
	t := xh - float64(n*expRed1)
	p, pe := twoProd(n, expRed2)
	s, se := twoSum(t, -p)
	s, xe := twoSum(s, xl)
	rl := ((xe + se) - pe) - float64(n*expRed3)
	rh, rl := twoSum(s, rl)
	return expCore(int(n), rh, rl)
}

// expCore is 2^(n/128)·e^(rh + rl) = 2^m·(h + l) for |rh| ≤ 2^-8.4, |rl| ≤ 2^-60.
func expCore(n int, rh, rl float64) (m int, h, l float64) {
	// e^rh = 1 + rh·P(rh); e^(rh+rl) = e^rh + rl·e^rh (rl² is below 2^-120).
	ph, pl := expPoly1(rh)
	ph, pl = mul21(ph, pl, rh)
	ph, pl = addHorner22(1, 0, ph, pl)
	ph, pl = addHorner22(ph, pl, float64(rl*ph), 0)
	j := n & 127
	h, l = mul22(exp2Table[j][0], exp2Table[j][1], ph, pl)
	return n >> 7, h, l
}

// expPoly1 is P(r) = (e^r − 1)/r = Σ r^k/(k+1)! for |r| ≤ 2^-8.4 as a
// double-double, to k = 9 (the next term is below 2^-109): the terms from
// r^4 on in float64 (absolute error below 2^-92, so below 2^-100 once
// multiplied by r), the rest in double-double.
func expPoly1(r float64) (float64, float64) {
	q := expTaylor[10][0]
	for k := 9; k >= 5; k-- {
		q = expTaylor[k][0] + float64(r*q)
	}
	ah, al := twoProd(r, q)
	ah, al = addHorner22(expTaylor[4][0], expTaylor[4][1], ah, al)
	for k := 3; k >= 1; k-- {
		ah, al = mul21(ah, al, r)
		ah, al = addHorner22(expTaylor[k][0], expTaylor[k][1], ah, al)
	}
	return ah, al
}

// logDD is ln(xh + xl) as a double-double with relative error below 2^-97,
// for xh > 0 finite, |xl| ≤ ulp(xh)/2 and xh + xl ≠ 1.
//
// xh = 2^e·m, m in [1, 2); i = round((m−1)·128) picks r ≈ 1/(1 + i/128) and
// z = m·r − 1, |z| ≤ 2^-8 + 2^-60, exact as a double-double; then
// ln x = e·ln2 − ln r + ln(1 + z). From i = 54 on the table's ln r carries
// one ln2 more and e one less, so that for x near 1 no large terms cancel.
func logDD(xh, xl float64) (float64, float64) {
	e := 0
	if xh < 0x1p-1022 { // subnormal
		xh *= 0x1p54
		xl *= 0x1p54
		e = -54
	}
	b := math.Float64bits(xh)
	e += int(b>>52) - 1023
	mant := math.Float64frombits(b&(1<<52-1) | 1023<<52)
	i := int((b>>44&0xff + 1) >> 1)
	if i >= 54 {
		e++
	}
	r := logTable[i][0]
	p, pe := twoProd(mant, r)
	zh, zl := twoSum(p-1, pe)
	if xl != 0 {
		c := float64(math.Ldexp(xl, -int(b>>52)+1023) * r)
		var ce float64
		zh, ce = twoSum(zh, c)
		zl += ce
		zh, zl = fastTwoSum(zh, zl)
	}
	// ln(1 + zh + zl) = ln(1 + zh) + zl/(1 + zh) (the next term is below 2^-120).
	lh, ll := log1pPoly(zh)
	ll += zl / (1 + zh)
	lh, ll = fastTwoSum(lh, ll)
	lh, ll = add22(logTable[i][1], logTable[i][2], lh, ll)
	if e == 0 {
		return lh, ll
	}
	fe := float64(e)
	// e·ln2 with e·ln2A exact (|e| < 2^11, ln2A has 42 bits).
	eh, el := twoProd(fe, ln2B)
	eh, ee := fastTwoSum(float64(fe*ln2A), eh)
	el += ee + float64(fe*ln2C)
	return add22(eh, el, lh, ll)
}

// log1pPoly is ln(1 + z) for |z| ≤ 2^-7.9 as a double-double, relative error
// below 2^-101: z·Σ (−z)^k/(k+1) to k = 13 (the next term is below 2^-107),
// the terms from z^6 on in float64, the rest in double-double.
func log1pPoly(z float64) (float64, float64) {
	q := logTaylor[13][0]
	for k := 12; k >= 6; k-- {
		q = logTaylor[k][0] + float64(z*q)
	}
	ah, al := twoProd(z, q)
	ah, al = addHorner22(logTaylor[5][0], logTaylor[5][1], ah, al)
	for k := 4; k >= 0; k-- {
		ah, al = mul21(ah, al, z)
		ah, al = addHorner22(logTaylor[k][0], logTaylor[k][1], ah, al)
	}
	return mul21(ah, al, z)
}
