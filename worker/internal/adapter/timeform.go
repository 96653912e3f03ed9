package adapter

import (
	"context"
	"database/sql"
	"errors"

	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/internal/sweepsql"
	"github.com/memdecay/memdecay/worker/mapping"
)

// An app's ISO-8601 times are its own text: it may order them as text,
// print them, or compare them with times it writes itself. So a time a
// sweep or a restore writes keeps the form of the value it replaces: 'T'
// or a space between date and time, seconds or not, the digits of its
// fraction, and its offset ('Z', '+02:00', '-0500' or none), the instant
// given in that offset. A column with no value takes the form its newest
// values mostly have (prevailingTimeForm).

// TimeFrom writes hours (an expression) back into the column col in the
// form it holds now: on a wall clock, an integer or real of unix seconds,
// or ISO-8601 text in the form of col's own (isoLike); for a NULL, the
// clock's own form (ISO-8601 UTC text, or unix seconds).
func TimeFrom(hours, col, clock string) string { return timeLike(hours, col, "", clock) }

// timeLike is TimeFrom where a NULL takes the form of the ISO-8601 text
// form (a literal), when there is one.
func timeLike(hours, col, form, clock string) string {
	if clock == "" || clock == mapping.ClockActiveHours {
		return hours
	}
	secs := `CAST(round(` + hours + ` * 3600) AS INTEGER)`
	iso := `strftime('%Y-%m-%dT%H:%M:%SZ', ` + secs + `, 'unixepoch')`
	null := iso
	switch {
	case form != "":
		null = isoLike(hours+` * 3600`, sweepsql.Literal(form))
	case clock == mapping.ClockUnixSeconds:
		null = secs
	}
	return `CASE typeof(` + col + `) WHEN 'integer' THEN ` + secs + ` WHEN 'real' THEN ` + hours + ` * 3600
	    WHEN 'text' THEN CASE WHEN try_unix_seconds(` + col + `) IS NULL THEN ` + iso + ` ELSE ` + isoLike(hours+` * 3600`, col) + ` END
	    ELSE ` + null + ` END`
}

// isoLike is the instant secs (unix seconds, an expression) as ISO-8601
// text in the form of the text like (an expression holding such a time):
// its separator, its seconds and fraction digits (the instant cut to
// them, rounded) and its offset. Written as
// one scalar subquery whose steps each read the one before, so like is
// named once.
func isoLike(secs, like string) string {
	return `(SELECT strftime('%Y-%m-%d', t, 'unixepoch') || sep || strftime(clock, t, 'unixepoch') || frac || zone
 FROM (SELECT sep, clock, zone, t, CASE WHEN n > 0 THEN substr(printf('%.9f', r - t), 2, n + 1) ELSE '' END AS frac
  FROM (SELECT sep, clock, zone, n, r, CAST(r AS INTEGER) AS t
  FROM (SELECT sep, clock, zone, n, round(y, n) AS r
   FROM (SELECT sep, clock, zone, n, x + CASE WHEN substr(zone, 1, 1) IN ('+', '-')
            THEN (CASE substr(zone, 1, 1) WHEN '-' THEN -1 ELSE 1 END)
                 * (CAST(substr(zone, 2, 2) AS INTEGER) * 3600 + CAST(substr(replace(zone, ':', ''), 4, 2) AS INTEGER) * 60)
            ELSE 0 END AS y
    FROM (SELECT sep, clock, x, n, substr(rest, CASE WHEN substr(rest, 1, 1) = '.' THEN n + 2 ELSE 1 END) AS zone
     FROM (SELECT sep, clock, x, rest,
                  CASE WHEN substr(rest, 1, 1) = '.' THEN length(substr(rest, 2)) - length(ltrim(substr(rest, 2), '0123456789')) ELSE 0 END AS n
      FROM (SELECT CASE substr(v, 11, 1) WHEN ' ' THEN ' ' ELSE 'T' END AS sep,
                   CASE substr(v, 17, 1) WHEN ':' THEN '%H:%M:%S' ELSE '%H:%M' END AS clock,
                   substr(v, CASE substr(v, 17, 1) WHEN ':' THEN 20 ELSE 17 END) AS rest, x
       FROM (SELECT ` + like + ` AS v, ` + secs + ` AS x)))))))))`
}

// textTimeForm is prevailingTimeForm for a column on an ISO-8601 (or
// either wall) clock, "" on another, and for the readers' views, which
// write nothing.
func (a *Adapted) textTimeForm(ctx context.Context, q memdb.Querier, table, col, clock string) (string, error) {
	if a.readersOnly || (clock != mapping.ClockISO8601 && clock != mapping.ClockWall) {
		return "", nil
	}
	return prevailingTimeForm(ctx, q, table, col)
}

// prevailingTimeForm is an example of the ISO-8601 form most of the
// text times among the newest (by rowid) 1000 rows of table.col are in,
// or "" when they hold none (it reads those rows alone, whatever the
// table's size): the form a time written where the column has no value takes.
func prevailingTimeForm(ctx context.Context, q memdb.Querier, table, col string) (string, error) {
	c := sweepsql.Ident(col)
	shape := "v"
	for d := '0'; d <= '9'; d++ {
		shape = "replace(" + shape + ", '" + string(d) + "', '')"
	}
	query := func(newest string) (string, error) {
		var form string
		err := q.QueryRowContext(ctx, `SELECT v FROM (SELECT `+c+` AS v FROM main.`+sweepsql.Ident(table)+` `+newest+` LIMIT 1000)
			WHERE typeof(v) = 'text' AND try_unix_seconds(v) IS NOT NULL
			GROUP BY `+shape+` ORDER BY count(*) DESC, max(v) DESC LIMIT 1`).Scan(&form)
		if errors.Is(err, sql.ErrNoRows) {
			return "", nil
		}
		return form, err
	}
	form, err := query("ORDER BY rowid DESC")
	if err != nil && !errors.Is(err, ctx.Err()) {
		form, err = query("") // a WITHOUT ROWID table: any 1000
	}
	return form, err
}
