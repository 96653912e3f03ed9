package sqlfuncs

import (
	"math"
	"strings"
	"testing"
	"time"
)

// wallClockCases are texts and the unix seconds they stand for (worked out
// with `date -u -d … +%s` and by hand for the fractions).
var wallClockCases = []struct {
	text string
	want float64
}{
	{"1970-01-01", 0},
	{"1970-01-01 00:00", 0},
	{"1970-01-01 00:00:00", 0},
	{"1970-01-01T00:00:00Z", 0},
	{"1970-01-01 00:00:00.1", 0.1},
	{"1970-01-01 00:00:00.100000000000", 0.1},
	{"2026-01-05", 1767571200},
	{"2026-01-05 10:00", 1767607200},
	{"2026-01-05T10:00", 1767607200},
	{"2026-01-05 10:00:00", 1767607200},
	{"2026-01-05T10:00:00Z", 1767607200},
	{"2026-01-05t10:00:00z", 1767607200},
	{"2026-01-05T10:00:00.000Z", 1767607200},
	{"2026-01-05T10:00:00.25Z", 1767607200.25},
	{"2026-01-05T12:00:00+02:00", 1767607200},
	{"2026-01-05T12:00:00+0200", 1767607200},
	{"2026-01-05T04:30:00-05:30", 1767607200},
	{"2026-01-05T04:30:00.5-0530", 1767607200.5},
	{"2026-01-05T10:00+00:00", 1767607200},
	{"2026-01-05 10:00:00-00:00", 1767607200},
	{"2026-01-06T09:59:00+23:59", 1767607200},
	// As apps write them: an offset in hours only (PostgreSQL's text), a
	// space before the offset (date's %:z, Java's and .NET's patterns).
	{"2026-02-03 06:54:15+02", 1770094455},
	{"2026-02-03 06:54:15 +02:00", 1770094455},
	{"2026-02-03 06:54:15 +0200", 1770094455},
	{"2026-02-03 06:54:15 +02", 1770094455},
	{"2026-02-03T06:54:15.5+02", 1770094455.5},
	{"2026-02-03 01:54:15.5 -03", 1770094455.5},
	{"2026-01-05 10:00-00", 1767607200},
	{"2026-01-05 12:00 +02", 1767607200},
	{"2024-02-29 00:00:00", 1709164800},
	{"2000-02-29", 951782400},
	{"1969-12-31 23:59:59", -1},
	{"1969-12-31 23:59:59.25", -0.75},
	{"1969-12-31T23:59:59.9Z", -0.1},
	{"1969-12-31T23:59:59.999999Z", -0.000001},
	{"0000-01-01", -62167219200},
	{"9999-12-31 23:59:59", 253402300799},
}

// badWallClocks are texts no wall-clock column takes.
var badWallClocks = []string{
	"", " ", "now", "yesterday", "2026", "2026-01", "2026-1-5", "26-01-05", "2026/01/05", "20260105",
	" 2026-01-05", "2026-01-05 ", "2026-01-05T", "2026-01-05 10", "2026-01-05 10:", "2026-01-05 10:0",
	"2026-01-05 10:00:", "2026-01-05 10:00:0", "2026-01-05 10:00:00.", "2026-01-05 10:00:00,5",
	"2026-00-05", "2026-13-05", "2026-01-00", "2026-01-32", "2026-02-29", "2026-04-31", "1900-02-29",
	"2026-01-05 24:00:00", "2026-01-05 10:60:00", "2026-01-05 10:00:60", "2026-01-05Z",
	"2026-01-05 10:00:00 Z", "2026-01-05 10:00:00 UTC", "2026-01-05 10:00:00+2", "2026-01-05 10:00:00+2:00",
	"2026-01-05 10:00:00  +02:00", "2026-01-05 10:00:00\t+02:00", "2026-01-05 10:00:00 +02:", "2026-01-05 10:00:00+023",
	"2026-01-05 10:00:00+02:0", "2026-01-05 10:00:00+02 ", "2026-01-05 10:00:00 ", "2026-01-05 +02:00", "2026-01-05 +02",
	"2026-01-05T+02", "2026-01-05 10:00:00 + 02", "2026-01-05 10:00:00+24", "2026-01-05 10:00:00 +2",
	"2026-01-05 10:00:00+24:00", "2026-01-05 10:00:00+02:60", "2026-01-05 10:00:00+02:00:00",
	"2026-01-05 10:00:00ZZ", "2026-01-05T10:00:00Zjunk", "2026-01-05\x0010:00:00", "+2026-01-05", "-0001-01-01",
	"１２３４-01-05", "2026-01-05 10:00:00.５",
}

func TestParseWallClock(t *testing.T) {
	for _, c := range wallClockCases {
		got, err := ParseWallClock("unix_seconds", "value", c.text)
		if err != nil || got != c.want {
			t.Errorf("ParseWallClock(%q) = %v, %v; want %v", c.text, got, err, c.want)
		}
	}
	for _, s := range badWallClocks {
		got, err := ParseWallClock("unix_seconds", "value", s)
		wantArgErr(t, err, "memdecay: unix_seconds: value is not unix seconds or an ISO-8601 time")
		if got != 0 {
			t.Errorf("ParseWallClock(%q) = %v with its error", s, got)
		}
	}
	_, err := ParseWallClock("unix_seconds", "value", strings.Repeat("9", 100))
	if !strings.Contains(err.Error(), `"`+strings.Repeat("9", 40)+`"…`) {
		t.Errorf("a long text is not cut short: %v", err)
	}
}

func TestWallClockNumber(t *testing.T) {
	for _, x := range []float64{0, -1, 1767607200, 1767607200.25, -math.MaxFloat64, math.MaxFloat64, 5e-324} {
		if got, err := WallClockNumber("unix_seconds", "value", x); err != nil || got != x {
			t.Errorf("WallClockNumber(%v) = %v, %v", x, got, err)
		}
	}
	for _, x := range []float64{math.Inf(1), math.Inf(-1), math.NaN()} {
		_, err := WallClockNumber("unix_seconds", "value", x)
		wantArgErr(t, err, "memdecay: unix_seconds: value is not a finite number of unix seconds")
	}
}

// FuzzParseWallClock: no panic; an error is an *ArgError; a time taken is
// finite, within years 0000–9999 give or take a day of offset, and agrees
// with Go's own parse of the same text where one of its layouts fits.
func FuzzParseWallClock(f *testing.F) {
	for _, c := range wallClockCases {
		f.Add(c.text)
	}
	for _, s := range badWallClocks {
		f.Add(s)
	}
	layouts := []string{"2006-01-02"}
	for _, sep := range []string{" ", "T"} {
		for _, clock := range []string{"15:04", "15:04:05"} {
			for _, zone := range []string{"", "Z07:00", "Z0700", "Z07", " Z07:00", " Z0700", " Z07"} {
				layouts = append(layouts, "2006-01-02"+sep+clock+zone)
			}
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseWallClock("unix_seconds", "value", s)
		if err != nil {
			wantArgErr(t, err, "memdecay: unix_seconds: value ")
			return
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || v < -62167219200-86400 || v > 253402300799+86400 {
			t.Fatalf("ParseWallClock(%q) = %v, outside years 0000-9999", s, v)
		}
		// Go's layouts take what this parser takes, in upper case, with
		// the fraction written on the seconds ("05.999") and the offset
		// sign of a Z form: compare on whole seconds.
		whole, fraction, _ := strings.Cut(strings.ToUpper(s), ".")
		if fraction != "" {
			i := strings.IndexAny(fraction, "Z+-")
			if i < 0 {
				i = len(fraction)
			}
			whole += fraction[i:]
		}
		for _, layout := range layouts {
			if at, err := time.Parse(layout, whole); err == nil {
				// A fraction adds less than a second (rounding may reach it).
				if lo := float64(at.Unix()); v < lo || v > lo+1 || (fraction == "" && v != lo) {
					t.Fatalf("ParseWallClock(%q) = %v, Go reads %q as %d", s, v, whole, at.Unix())
				}
				return
			}
		}
		t.Fatalf("ParseWallClock(%q) = %v, but no Go layout takes %q", s, v, whole)
	})
}
