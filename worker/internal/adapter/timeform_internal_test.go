package adapter

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/mapping"
)

// TestTimeKeepsItsForm: a time written over an ISO-8601 value takes that
// value's form (separator, seconds, fraction digits, offset: the instant
// in that offset); one written over a value that is no time, or a NULL
// with no form to follow, is UTC with a Z; numbers stay numbers.
func TestTimeKeepsItsForm(t *testing.T) {
	db, err := memdb.Open(filepath.Join(t.TempDir(), "forms.db"), memdb.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	const at = 1772355600.375 // 2026-03-01T09:00:00.375Z
	for _, c := range []struct {
		old  any
		form string
		want any
	}{
		{"2026-01-05T10:00:00+00:00", "", "2026-03-01T09:00:00+00:00"}, // no fraction: to the second
		{"2026-01-05T10:00:00+02:00", "", "2026-03-01T11:00:00+02:00"},
		{"2026-01-05T10:00:00-05:00", "", "2026-03-01T04:00:00-05:00"},
		{"2026-01-05T10:00:00+0530", "", "2026-03-01T14:30:00+0530"},
		{"2026-01-05 10:00:00", "", "2026-03-01 09:00:00"},
		{"2026-01-05T10:00:00Z", "", "2026-03-01T09:00:00Z"},
		{"2026-01-05T10:00:00.123456+02:00", "", "2026-03-01T11:00:00.375000+02:00"},
		{"2026-01-05T10:00:00.1Z", "", "2026-03-01T09:00:00.4Z"},
		{"2026-01-05T10:00+02:00", "", "2026-03-01T11:00+02:00"},
		{"2026-12-31T23:59:59.999-01:00", "", "2026-03-01T08:00:00.375-01:00"},
		{"not a time", "", "2026-03-01T09:00:00Z"},
		{nil, "", "2026-03-01T09:00:00Z"},
		{nil, "2025-06-01 08:00:00.000+02:00", "2026-03-01 11:00:00.375+02:00"},
		{int64(1), "", int64(1772355600)},
		{1.5, "", at},
	} {
		var got any
		expr := timeLike(strconv.FormatFloat(at/3600, 'g', -1, 64), "v", c.form, mapping.ClockWall)
		if err := db.SQL.QueryRowContext(context.Background(), `SELECT `+expr+` FROM (SELECT ? AS v)`, c.old).Scan(&got); err != nil {
			t.Fatalf("%v: %v", c.old, err)
		}
		if got != c.want {
			t.Errorf("over %v (form %q): %v (%T), want %v", c.old, c.form, got, got, c.want)
		}
	}
}
