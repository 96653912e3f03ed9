package shim_test

import (
	"fmt"
	"testing"
)

// The wall-clock functions' cases join the tables every function has
// (valueCases, errorCases): unix seconds as numbers and numeric text,
// ISO-8601 / SQLite datetime text, NULL; and for try_unix_seconds NULL
// where unix_seconds errs.
func init() {
	valueCases = append(valueCases,
		exprCase{`unix_seconds(1767607200)`, 1767607200.0},
		exprCase{`unix_seconds(-1.5)`, -1.5},
		exprCase{`unix_seconds('1767607200.25')`, 1767607200.25},
		exprCase{`unix_seconds('2026-01-05')`, 1767571200.0},
		exprCase{`unix_seconds('2026-01-05 10:00')`, 1767607200.0},
		exprCase{`unix_seconds('2026-01-05 10:00:00')`, 1767607200.0},
		exprCase{`unix_seconds('2026-01-05T10:00:00.25Z')`, 1767607200.25},
		exprCase{`unix_seconds('2026-01-05T12:00:00+02:00')`, 1767607200.0},
		exprCase{`unix_seconds('2026-01-05T04:30:00-0530')`, 1767607200.0},
		exprCase{`unix_seconds(datetime(1767607200, 'unixepoch'))`, 1767607200.0},
		exprCase{`unix_seconds(NULL)`, nil},
		exprCase{`try_unix_seconds('2026-01-05 10:00:00.5')`, 1767607200.5},
		exprCase{`try_unix_seconds(42)`, 42.0},
		exprCase{`try_unix_seconds(NULL)`, nil},
		exprCase{`try_unix_seconds('yesterday')`, nil},
		exprCase{`try_unix_seconds('2026-02-29')`, nil},
		exprCase{`try_unix_seconds(x'00')`, nil},
		exprCase{`try_unix_seconds(9e999)`, nil},
		exprCase{`try_unix_seconds('9e999')`, nil},
	)
	errorCases = append(errorCases,
		errorCase{`unix_seconds('yesterday')`, "unix_seconds", `value is not unix seconds or an ISO-8601 time such as '2026-01-05T10:00:00Z': "yesterday"`},
		errorCase{`unix_seconds('2026-01-05 24:00:00')`, "unix_seconds", `value is not unix seconds or an ISO-8601 time`},
		errorCase{`unix_seconds(x'00')`, "unix_seconds", "value is a blob, not a time"},
		errorCase{`unix_seconds(9e999)`, "unix_seconds", "value is not a finite number of unix seconds (got +Inf)"},
		errorCase{`unix_seconds('-9e999')`, "unix_seconds", "value is not a finite number of unix seconds (got -Inf)"},
	)
}

// TestWallClockAgreesWithSQLite: for every time SQLite's own datetime()
// writes, unix_seconds reads back the unix seconds it came from, with and
// without fractions.
func TestWallClockAgreesWithSQLite(t *testing.T) {
	db := openMemDB(t)
	for _, secs := range []float64{-62167219200, -86400.5, -1, 0, 0.25, 951782400, 1767607200.5, 253402300799} {
		for _, format := range []string{`datetime(?, 'unixepoch')`, `strftime('%Y-%m-%dT%H:%M:%fZ', ?, 'unixepoch')`} {
			expr := fmt.Sprintf("unix_seconds(%s) = round(?, 3) OR unix_seconds(%s) = floor(?)", format, format)
			var ok bool
			if err := db.QueryRow("SELECT "+expr, secs, secs, secs, secs).Scan(&ok); err != nil || !ok {
				t.Errorf("%s at %v: %v, %v", format, secs, ok, err)
			}
		}
	}
}
