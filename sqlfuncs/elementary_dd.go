package sqlfuncs

import "math"

// Double-double arithmetic: a value is hi + lo, two float64s with |lo| at
// most half an ulp of hi, about 106 bits in all.
//
// Every product that is then added is written float64(a*b): Go lets a
// compiler fuse a*b + c into one FMA instruction (arm64 does, amd64 with
// GOAMD64=v3 does), which rounds once instead of twice and so changes the
// bits. The explicit conversion forbids that, so these steps give the same
// bits on every machine. math.FMA is exact by definition on every platform
// (hardware or software), so twoProd is too.

// twoSum returns s = fl(a+b) and e with s + e = a + b exactly.
func twoSum(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	e = (a - (s - bb)) + (b - bb)
	return s, e
}

// fastTwoSum is twoSum when |a| ≥ |b| (or a = 0).
func fastTwoSum(a, b float64) (s, e float64) {
	s = a + b
	e = b - (s - a)
	return s, e
}

// twoProd returns p = fl(a·b) and e with p + e = a·b exactly (no underflow).
func twoProd(a, b float64) (p, e float64) {
	p = float64(a * b)
	e = math.FMA(a, b, -p)
	return p, e
}

// mul21 is (ah + al)·b, relative error below 2^-104.
func mul21(ah, al, b float64) (float64, float64) {
	p, e := twoProd(ah, b)
	e += float64(al * b)
	return fastTwoSum(p, e)
}

// mul22 is (ah + al)·(bh + bl), relative error below 2^-103.
func mul22(ah, al, bh, bl float64) (float64, float64) {
	p, e := twoProd(ah, bh)
	e += float64(ah*bl) + float64(al*bh)
	return fastTwoSum(p, e)
}

// add22 is (ah + al) + (bh + bl), relative error below 2^-104 whatever the
// signs (the accurate sum of Joldes, Muller and Popescu, 2017).
func add22(ah, al, bh, bl float64) (float64, float64) {
	sh, sl := twoSum(ah, bh)
	th, tl := twoSum(al, bl)
	sl += th
	sh, sl = fastTwoSum(sh, sl)
	sl += tl
	return fastTwoSum(sh, sl)
}

// addHorner22 is (ah + al) + (bh + bl) for a Horner step, where |bh| is
// below |ah|/64 (a coefficient plus a small correction): no cancellation, so
// the short sum keeps a relative error below 2^-104.
func addHorner22(ah, al, bh, bl float64) (float64, float64) {
	s, e := fastTwoSum(ah, bh)
	e += al + bl
	return fastTwoSum(s, e)
}

// roundsTo reports whether every real within eps·|h| of h + l rounds to h
// (to nearest): then h is the correctly rounded value of anything that h + l
// approximates with relative error below eps. h = fl(h + l) must be a normal
// number and eps a power of two below 2^-60, so eps·|h| is exact.
func roundsTo(h, l, eps float64) bool {
	if l == 0 {
		return true
	}
	b := math.Float64bits(h) &^ (1 << 63)
	// The gap to the neighbour on l's side: one ulp, or half of one below
	// a power of two (toward zero).
	ulp := math.Float64frombits(b&(0x7ff<<52)) * 0x1p-52
	if b&(1<<52-1) == 0 && (l < 0) != (h < 0) {
		ulp *= 0.5
	}
	half := float64(0.5 * ulp)
	al := math.Abs(l)
	// half - al is exact when al ≥ half/2 (Sterbenz); otherwise it is above
	// half/2, which dwarfs eps·|h|.
	return half-al > float64(eps*math.Abs(h))
}

// powerOfTwoAbove is the least power of two ≥ x, for x > 0 normal.
func powerOfTwoAbove(x float64) float64 {
	b := math.Float64bits(x)
	if b&(1<<52-1) == 0 {
		return x
	}
	return math.Float64frombits((b &^ (1<<52 - 1)) + 1<<52)
}

// scale2 is x·2^k for an exact result (normal or infinite), in two steps so
// 2^k itself never overflows or underflows.
func scale2(x float64, k int) float64 {
	for k > 1000 {
		x *= 0x1p1000
		k -= 1000
	}
	for k < -1000 {
		x *= 0x1p-1000
		k += 1000
	}
	return x * math.Float64frombits(uint64(k+1023)<<52)
}
