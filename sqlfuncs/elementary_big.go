package sqlfuncs

import (
	"math/big"
	"sync"
)

// The slow path of the elementary functions: the same function evaluated
// with math/big (integer arithmetic, the same bits everywhere) to slowPrec
// bits, then rounded once to the nearest float64 (big.Float.Float64 rounds
// to nearest even, subnormals included).

// slowPrec is the precision of a slow result; the series and squarings
// work with slowGuard bits more.
const (
	slowPrec  = 300
	slowGuard = 64
	slowWork  = slowPrec + slowGuard
)

func newBig() *big.Float { return new(big.Float).SetPrec(slowWork) }

func bigOf(x float64) *big.Float { return newBig().SetFloat64(x) }

var (
	bigLn2Once sync.Once
	bigLn2Val  *big.Float
)

// bigLn2 is ln 2 = 2·atanh(1/3) = Σ 2/((2k+1)·3^(2k+1)) to slowWork bits.
func bigLn2() *big.Float {
	bigLn2Once.Do(func() {
		sum := newBig()
		third := newBig().Quo(bigOf(1), bigOf(3))
		ninth := newBig().Quo(bigOf(1), bigOf(9))
		pow := newBig().Set(third) // 3^-(2k+1)
		term := newBig()
		for k := int64(0); ; k++ {
			term.Quo(pow, newBig().SetInt64(2*k+1))
			if below(term, sum) {
				break
			}
			sum.Add(sum, term)
			pow.Mul(pow, ninth)
		}
		bigLn2Val = sum.Mul(sum, bigOf(2))
	})
	return bigLn2Val
}

// below reports whether term is negligible next to sum at slowWork bits.
func below(term, sum *big.Float) bool {
	return term.Sign() == 0 || sum.Sign() != 0 && term.MantExp(nil) < sum.MantExp(nil)-slowWork-8
}

// bigExp is e^x: x = k·ln2 + r, e^r = (e^(r/2^20))^(2^20) with the Taylor
// series for e^(r/2^20). Twenty squarings lose 20 of the 64 guard bits.
func bigExp(x *big.Float) *big.Float {
	switch { // far beyond float64's range either way
	case x.Cmp(bigOf(1e4)) > 0:
		return newBig().SetInf(false)
	case x.Cmp(bigOf(-1e4)) < 0:
		return newBig()
	}
	ln2 := bigLn2()
	q, _ := newBig().Quo(x, ln2).Float64()
	k := int64(q + 0.5)
	if q < 0 {
		k = int64(q - 0.5)
	}
	r := newBig().Sub(x, newBig().Mul(newBig().SetInt64(k), ln2))
	r.SetMantExp(r, -20)
	sum, term := bigOf(1), bigOf(1)
	for i := int64(1); ; i++ {
		term.Mul(term, r)
		term.Quo(term, newBig().SetInt64(i))
		if below(term, sum) {
			break
		}
		sum.Add(sum, term)
	}
	for range 20 {
		sum.Mul(sum, sum)
	}
	return sum.SetMantExp(sum, int(k))
}

// bigLog is ln x for x > 0: x = 2^e·m with m in [√½, √2), then
// ln m = 2·atanh(z), z = (m−1)/(m+1), |z| ≤ 0.172.
func bigLog(x *big.Float) *big.Float {
	m := newBig()
	e := x.MantExp(m) // m in [0.5, 1)
	if m.Cmp(bigOf(0.7071067811865476)) < 0 {
		m.SetMantExp(m, 1)
		e--
	}
	z := newBig().Sub(m, bigOf(1))
	z.Quo(z, newBig().Add(m, bigOf(1)))
	z2 := newBig().Mul(z, z)
	sum, pow := newBig().Set(z), newBig().Set(z)
	term := newBig()
	for k := int64(1); ; k++ {
		pow.Mul(pow, z2)
		term.Quo(pow, newBig().SetInt64(2*k+1))
		if below(term, sum) {
			break
		}
		sum.Add(sum, term)
	}
	sum.SetMantExp(sum, 1)
	return sum.Add(sum, newBig().Mul(newBig().SetInt64(int64(e)), bigLn2()))
}

// bigLog1p is ln(1 + u): the series u − u²/2 + … for |u| < 2^-10 (where
// 1 + u would cancel), ln of 1 + u otherwise.
func bigLog1p(u float64) *big.Float {
	bu := bigOf(u)
	if u > -0x1p-10 && u < 0x1p-10 {
		sum, pow := newBig().Set(bu), newBig().Set(bu)
		term := newBig()
		for k := int64(2); ; k++ {
			pow.Mul(pow, bu)
			pow.Neg(pow)
			term.Quo(pow, newBig().SetInt64(k))
			if below(term, sum) {
				break
			}
			sum.Add(sum, term)
		}
		return sum
	}
	return bigLog(newBig().Add(bigOf(1), bu))
}

func float64Of(v *big.Float) float64 {
	f, _ := v.Float64()
	return f
}

func bigExpSlow(x float64) float64 { return float64Of(bigExp(bigOf(x))) }

func bigExp2Slow(x float64) float64 {
	return float64Of(bigExp(newBig().Mul(bigOf(x), bigLn2())))
}

// bigExpm1Slow is e^x − 1: the series x + x²/2 + … for |x| < 2^-10, e^x − 1
// otherwise (a cancellation of at most 11 bits).
func bigExpm1Slow(x float64) float64 {
	bx := bigOf(x)
	if x > -0x1p-10 && x < 0x1p-10 {
		sum, term := newBig().Set(bx), newBig().Set(bx)
		for i := int64(2); ; i++ {
			term.Mul(term, bx)
			term.Quo(term, newBig().SetInt64(i))
			if below(term, sum) {
				break
			}
			sum.Add(sum, term)
		}
		return float64Of(sum)
	}
	v := bigExp(bx)
	return float64Of(v.Sub(v, bigOf(1)))
}

func bigLogSlow(x float64) float64 { return float64Of(bigLog(bigOf(x))) }

func bigLog2Slow(x float64) float64 {
	v := bigLog(bigOf(x))
	return float64Of(v.Quo(v, bigLn2()))
}

func bigLog1pSlow(x float64) float64 { return float64Of(bigLog1p(x)) }

func bigPow1pSlow(u, y float64) float64 {
	v := bigLog1p(u)
	return float64Of(bigExp(v.Mul(v, bigOf(y))))
}
