package sqlfuncs

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Wall-clock values as apps write them: unix seconds (an integer or a real)
// or ISO-8601 / SQLite datetime text. unix_seconds and try_unix_seconds
// read them; the worker's sweeps and the views read every wall-clock column
// (mem_facts.last_accessed_at and created_at, mem_edges.last_observed_at)
// through them, so all agree on what a time is.
//
// The text forms are those of SQLite's date functions and of RFC 3339:
//
//	YYYY-MM-DD
//	YYYY-MM-DD HH:MM
//	YYYY-MM-DD HH:MM:SS
//	YYYY-MM-DD HH:MM:SS.SSS   (any number of fraction digits)
//
// with 'T' (or 't') for the space, and after the time an optional 'Z' (or
// 'z') or an offset ±HH:MM, ±HHMM or ±HH, which one space may precede
// (2026-02-03 06:54:15 +02:00, as date's %:z and many loggers write it;
// 2026-02-03 06:54:15+02, as PostgreSQL does). Without an offset the time
// is UTC, as SQLite reads it. Years run from 0000 to 9999; the date must
// exist (no 2026-02-30) and the time be 00:00:00 to 23:59:59.999…; offsets
// run to ±23:59, their hours always two digits. Nothing else is taken: no
// surrounding spaces, no space before 'Z', no zone names, no 'now' or
// modifiers, so a value means the same to every reader.

// WallClockNumber checks unix seconds given as a number: any finite number
// is a time.
func WallClockNumber(fn, arg string, x float64) (float64, error) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, argErr(fn, arg, "is not a finite number of unix seconds (got %v)", x)
	}
	return x, nil
}

// ParseWallClock reads an ISO-8601 / SQLite datetime text as unix seconds,
// rounded once to the nearest float64 (so '1970-01-01 00:00:00.1' is the
// same number as the literal 0.1). Text that is a number is for the caller
// to read as one (the SQL convention); here it is an error.
func ParseWallClock(fn, arg, s string) (float64, error) {
	v, ok := parseWallClock(s)
	if !ok {
		return 0, argErr(fn, arg, "is not unix seconds or an ISO-8601 time such as '2026-01-05T10:00:00Z': %s", quoteText(s))
	}
	return v, nil
}

// quoteText quotes a value for an error message, cut short when long.
func quoteText(s string) string {
	if len(s) > 40 {
		return strconv.Quote(s[:40]) + "…"
	}
	return strconv.Quote(s)
}

// parseWallClock is ParseWallClock without the error.
func parseWallClock(s string) (float64, bool) {
	p := wallParser{s: s}
	year, ok1 := p.digits(4)
	ok2 := p.byte('-')
	month, ok3 := p.digits(2)
	ok4 := p.byte('-')
	day, ok5 := p.digits(2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5) || month < 1 || month > 12 || day < 1 || day > daysIn(year, month) {
		return 0, false
	}
	secs := time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC).Unix()
	fraction := ""
	if !p.done() {
		if !p.byte(' ') && !p.byte('T') && !p.byte('t') {
			return 0, false
		}
		hour, ok1 := p.digits(2)
		ok2 := p.byte(':')
		minute, ok3 := p.digits(2)
		if !(ok1 && ok2 && ok3) || hour > 23 || minute > 59 {
			return 0, false
		}
		secs += int64(hour*3600 + minute*60)
		if p.byte(':') {
			second, ok := p.digits(2)
			if !ok || second > 59 {
				return 0, false
			}
			secs += int64(second)
			if p.byte('.') {
				start := p.i
				for p.i < len(p.s) && isDigit(p.s[p.i]) {
					p.i++
				}
				if p.i == start {
					return 0, false
				}
				fraction = strings.TrimRight(p.s[start:p.i], "0")
			}
		}
		spaced := p.byte(' ') // a space is taken before a numeric offset only
		switch {
		case !spaced && (p.byte('Z') || p.byte('z')):
		case p.peek('+') || p.peek('-'):
			sign := int64(1)
			if p.s[p.i] == '-' {
				sign = -1
			}
			p.i++
			hours, ok := p.digits(2)
			minutes := 0
			if ok && !p.done() { // ±HH alone, or ±HH:MM / ±HHMM
				p.byte(':')
				minutes, ok = p.digits(2)
			}
			if !ok || hours > 23 || minutes > 59 {
				return 0, false
			}
			secs -= sign * int64(hours*3600+minutes*60)
		case spaced:
			return 0, false
		}
	}
	if !p.done() {
		return 0, false
	}
	return secondsWithFraction(secs, fraction), true
}

// secondsWithFraction is secs + 0.fraction, written as one decimal and
// parsed once so the result is the float64 nearest the exact value. For a
// time before 1970 with a fraction, secs + 0.f = -((|secs| - 1) + (1 - 0.f)),
// and 1 - 0.f is written digit by digit (fraction has no trailing zeros).
func secondsWithFraction(secs int64, fraction string) float64 {
	if fraction == "" {
		return float64(secs)
	}
	var text string
	if secs >= 0 {
		text = strconv.FormatInt(secs, 10) + "." + fraction
	} else {
		complement := []byte(fraction)
		for i := range complement {
			complement[i] = '0' + '9' - complement[i]
		}
		complement[len(complement)-1]++ // its last digit is not 0, so this never carries
		text = "-" + strconv.FormatInt(-secs-1, 10) + "." + string(complement)
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return math.NaN() // unreachable: text is digits and one point
	}
	return v
}

// wallParser walks a datetime text one field at a time.
type wallParser struct {
	s string
	i int
}

func (p *wallParser) done() bool { return p.i == len(p.s) }

func (p *wallParser) peek(c byte) bool { return p.i < len(p.s) && p.s[p.i] == c }

// byte consumes c if it comes next.
func (p *wallParser) byte(c byte) bool {
	if p.peek(c) {
		p.i++
		return true
	}
	return false
}

// digits reads exactly n decimal digits.
func (p *wallParser) digits(n int) (int, bool) {
	if len(p.s)-p.i < n {
		return 0, false
	}
	v := 0
	for _, c := range []byte(p.s[p.i : p.i+n]) {
		if !isDigit(c) {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	p.i += n
	return v, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// daysIn is the number of days in a month of the proleptic Gregorian
// calendar.
func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
