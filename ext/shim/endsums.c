//go:build !memdecay_loadable

/* memdecay_sum_ends(source, target): the sums of source's rows by each of
 * their two ends, written into the temp table target, as
 *
 *   INSERT INTO temp.target
 *   SELECT id, sum(x) [, coalesce(sum(y), 0.0)]
 *   FROM (SELECT a AS id, x, y FROM (source) UNION ALL SELECT b, x, y FROM (source))
 *   GROUP BY id ORDER BY id
 *
 * would: source is a query whose rows are (a, b, x) or (a, b, x, y), and
 * target's columns take (id, sum of x) or (id, sum of x, sum of y). It
 * returns the number of rows it wrote.
 *
 * The worker's weighted degrees, and what each block loses in a sweep, are
 * such sums over up to a million edges, which SQLite groups by sorting the
 * rows, one end's after the other's. Here each row is two hash lookups, and
 * only the sums are sorted, by id, to be written in key order. The ends
 * must be text (a valid edge's ends in memworker's tables), grouped as
 * GROUP BY groups text under BINARY: the same bytes. Each sum is SQLite's
 * sum() of doubles (Kahan-Babuska-Neumaier): exact sums, as the worker's
 * fixed-point strengths give, are the same bits in any order.
 *
 * When the ids would take more than MD_SUMS_MAX_BYTES, it writes nothing
 * and returns NULL: the caller groups by SQL instead.
 *
 * Linked build only, SQLITE_DIRECTONLY: the worker's own statements call it,
 * no trigger or view of a file can. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include "endsums.h"
#include "mdhash.h"

typedef struct {
	uint32_t off, len;
	double sum[2], err[2]; /* x's and y's, as SQLite's sum() keeps them */
	uint8_t seen[2];       /* a value that is not NULL was summed */
} md_end_sum;

_Static_assert(sizeof(md_end_sum) == MD_SUM_ROW_BYTES, "MD_SUM_ROW_BYTES is an id's size");

typedef struct {
	md_end_sum *rows;
	uint32_t n, cap;
	char *ids;
	size_t ids_len, ids_cap;
	uint32_t *slots; /* 1 + index into rows; 0 is empty */
	uint32_t mask;
	int too_big, no_memory;
} md_sums;

static void md_sums_free(md_sums *s) {
	free(s->rows);
	free(s->ids);
	free(s->slots);
}

/* md_sums_grow doubles the hash table, placing every id again. */
static int md_sums_grow(md_sums *s) {
	uint32_t size = s->slots ? (s->mask + 1) * 2 : 1 << 12, i;
	uint32_t *slots = calloc(size, sizeof *slots);
	if (!slots) return 0;
	free(s->slots);
	s->slots = slots, s->mask = size - 1;
	for (i = 0; i < s->n; i++) {
		uint32_t at = (uint32_t)md_hash((const unsigned char *)s->ids + s->rows[i].off, s->rows[i].len) & s->mask;
		while (s->slots[at]) at = (at + 1) & s->mask;
		s->slots[at] = i + 1;
	}
	return 1;
}

/* md_sums_at finds id's sums, adding them (zero) when it has none; NULL
 * when it cannot: too_big or no_memory says which. */
static md_end_sum *md_sums_at(md_sums *s, const unsigned char *id, uint32_t len) {
	uint32_t at;
	int64_t off;
	md_end_sum *row;
	if (!s->slots || 2 * (s->n + 1) > s->mask + 1) {
		if (!md_sums_grow(s)) {
			s->no_memory = 1;
			return NULL;
		}
	}
	for (at = (uint32_t)md_hash(id, len) & s->mask; s->slots[at]; at = (at + 1) & s->mask) {
		row = &s->rows[s->slots[at] - 1];
		if (row->len == len && memcmp(s->ids + row->off, id, len) == 0) return row;
	}
	if ((size_t)(s->n + 1) * MD_SUM_ROW_BYTES + s->ids_len + len > MD_SUMS_MAX_BYTES) {
		s->too_big = 1;
		return NULL;
	}
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 1024;
		md_end_sum *rows = realloc(s->rows, cap * sizeof *rows);
		if (!rows) {
			s->no_memory = 1;
			return NULL;
		}
		s->rows = rows, s->cap = cap;
	}
	if ((off = md_ids_append(&s->ids, &s->ids_len, &s->ids_cap, id, len)) < 0) {
		s->no_memory = 1;
		return NULL;
	}
	row = &s->rows[s->n];
	memset(row, 0, sizeof *row);
	row->off = (uint32_t)off, row->len = len;
	s->slots[at] = ++s->n;
	return row;
}

/* md_sum_step adds v to a sum as SQLite's sum() does with a double
 * (kahanBabuskaNeumaierStep in its func.c). */
static void md_sum_step(md_end_sum *row, int i, sqlite3_value *v) {
	volatile double s, t, r;
	if (sqlite3_value_type(v) == SQLITE_NULL) return;
	r = sqlite3_value_double(v);
	s = row->sum[i];
	t = s + r;
	if (fabs(s) > fabs(r)) row->err[i] += (s - t) + r;
	else row->err[i] += (r - t) + s;
	row->sum[i] = t;
	row->seen[i] = 1;
}

/* md_sum_result is a sum as sum() gives it: the error term added unless it
 * is not finite. */
static double md_sum_result(const md_end_sum *row, int i) {
	double err = row->err[i];
	return isnan(err) || isinf(err) ? row->sum[i] : row->sum[i] + err;
}

static _Thread_local const char *md_sort_ids; /* the ids md_sum_order compares */

/* md_sum_order is BINARY: the bytes, then the shorter first. */
static int md_sum_order(const void *a, const void *b) {
	const md_end_sum *x = a, *y = b;
	int c = memcmp(md_sort_ids + x->off, md_sort_ids + y->off, x->len < y->len ? x->len : y->len);
	if (c) return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

/* md_sums_read sums source's rows; an error message, or NULL. */
static char *md_sums_read(sqlite3 *db, md_sums *s, const char *source, int *values) {
	sqlite3_stmt *q = NULL;
	char *err = NULL;
	const char *tail = NULL;
	int rc = sqlite3_prepare_v2(db, source, -1, &q, &tail);
	if (rc != SQLITE_OK) return sqlite3_mprintf("memdecay_sum_ends: source: %s", sqlite3_errmsg(db));
	while (tail && (*tail == ' ' || *tail == '\t' || *tail == '\n' || *tail == '\r' || *tail == ';')) tail++;
	if (!q || (tail && *tail)) {
		sqlite3_finalize(q);
		return sqlite3_mprintf("memdecay_sum_ends: source must be one query");
	}
	*values = sqlite3_column_count(q) - 2;
	if (*values != 1 && *values != 2) {
		sqlite3_finalize(q);
		return sqlite3_mprintf("memdecay_sum_ends: source must give (a, b, x) or (a, b, x, y) rows, not %d columns",
			*values + 2);
	}
	while ((rc = sqlite3_step(q)) == SQLITE_ROW && !s->too_big) {
		int end, i;
		for (end = 0; end < 2; end++) {
			md_end_sum *row;
			if (sqlite3_column_type(q, end) != SQLITE_TEXT) {
				err = sqlite3_mprintf("memdecay_sum_ends: an end is %s, not text",
					sqlite3_column_type(q, end) == SQLITE_NULL ? "NULL" : "a number or a blob");
				break;
			}
			row = md_sums_at(s, sqlite3_column_text(q, end), (uint32_t)sqlite3_column_bytes(q, end));
			if (!row) break;
			for (i = 0; i < *values; i++) md_sum_step(row, i, sqlite3_column_value(q, 2 + i));
		}
		if (err || s->no_memory) break;
	}
	if (!err && s->no_memory) err = sqlite3_mprintf("memdecay_sum_ends: out of memory");
	if (!err && rc != SQLITE_ROW && rc != SQLITE_DONE) err = sqlite3_mprintf("memdecay_sum_ends: source: %s", sqlite3_errmsg(db));
	sqlite3_finalize(q);
	return err;
}

/* md_sums_write writes the sums into target in id order; an error message,
 * or NULL. */
static char *md_sums_write(sqlite3 *db, md_sums *s, const char *target, int values) {
	sqlite3_stmt *ins = NULL;
	char *sql = sqlite3_mprintf(values == 1 ? "INSERT INTO temp.\"%w\" VALUES (?1, ?2)" : "INSERT INTO temp.\"%w\" VALUES (?1, ?2, ?3)", target);
	int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &ins, NULL) : SQLITE_NOMEM;
	uint32_t i;
	sqlite3_free(sql);
	md_sort_ids = s->ids;
	if (s->n > 1) qsort(s->rows, s->n, sizeof *s->rows, md_sum_order);
	for (i = 0; rc == SQLITE_OK && i < s->n; i++) {
		const md_end_sum *row = &s->rows[i];
		sqlite3_bind_text(ins, 1, s->ids + row->off, (int)row->len, SQLITE_STATIC);
		if (row->seen[0]) sqlite3_bind_double(ins, 2, md_sum_result(row, 0));
		else sqlite3_bind_null(ins, 2);
		if (values == 2) sqlite3_bind_double(ins, 3, row->seen[1] ? md_sum_result(row, 1) : 0.0);
		rc = sqlite3_step(ins);
		rc = rc == SQLITE_DONE ? sqlite3_reset(ins) : rc;
	}
	sqlite3_finalize(ins);
	return rc == SQLITE_OK ? NULL : sqlite3_mprintf("memdecay_sum_ends: writing %s: %s", target, sqlite3_errmsg(db));
}

static void md_sum_ends(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
	sqlite3 *db = sqlite3_context_db_handle(ctx);
	md_sums s;
	char *err;
	int values = 0;
	(void)argc;
	if (sqlite3_value_type(argv[0]) != SQLITE_TEXT || sqlite3_value_type(argv[1]) != SQLITE_TEXT) {
		sqlite3_result_error(ctx, "memdecay_sum_ends: source must be a query and target a table's name", -1);
		return;
	}
	memset(&s, 0, sizeof s);
	err = md_sums_read(db, &s, (const char *)sqlite3_value_text(argv[0]), &values);
	if (!err && !s.too_big) err = md_sums_write(db, &s, (const char *)sqlite3_value_text(argv[1]), values);
	if (err) sqlite3_result_error(ctx, err, -1);
	else if (s.too_big) sqlite3_result_null(ctx);
	else sqlite3_result_int64(ctx, s.n);
	sqlite3_free(err);
	md_sums_free(&s);
}

int md_register_sum_ends(sqlite3 *db) {
	return sqlite3_create_function_v2(db, "memdecay_sum_ends", 2, SQLITE_UTF8 | SQLITE_DIRECTONLY, NULL,
		md_sum_ends, NULL, NULL, NULL);
}
