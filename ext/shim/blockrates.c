//go:build !memdecay_loadable

/* memdecay_block_rate(rates, id): the decay rate of block id in the temp
 * table rates (id TEXT PRIMARY KEY, lambda REAL), or NULL when it has none.
 *
 * The worker's full evaluation reads both ends' rates of every edge: two
 * million B-tree descents for a million edges, the to_id ends in no order:
 * a third of that statement's time. The first call of a statement reads the
 * table once into a hash table (kept as the statement's auxiliary data for
 * the constant rates argument); each call after is a hash and a compare.
 * A text id is found exactly when `rates.id = id` finds it (both text,
 * BINARY: the same bytes); in a table too big to hold (MD_RATES_MAX_BYTES)
 * that query looks it up. Any other value is no block's id: NULL (the
 * ends the worker asks about are memworker's text ids).
 *
 * Linked build only, SQLITE_DIRECTONLY: the worker's own statements call it,
 * no trigger or view of a file can. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include "blockrates.h"
#include "mdhash.h"

typedef struct {
	uint32_t off, len;
	double lambda;
	int has_lambda;
} md_rate;

_Static_assert(sizeof(md_rate) == MD_RATE_ROW_BYTES, "MD_RATE_ROW_BYTES is a row's size");

typedef struct {
	md_rate *rows;
	uint32_t n, cap;
	char *ids;
	size_t ids_len, ids_cap;
	uint32_t *slots; /* 1 + index into rows; 0 is empty */
	uint32_t mask;
	sqlite3_stmt *point; /* each lookup by the query, when too big to hold */
} md_rates;

static void md_rates_free(void *p) {
	md_rates *r = p;
	if (!r) return;
	sqlite3_finalize(r->point);
	free(r->rows);
	free(r->ids);
	free(r->slots);
	free(r);
}

/* md_rates_hold copies one row in; 0 when the table is too big to hold. */
static int md_rates_hold(md_rates *r, const unsigned char *id, uint32_t len, sqlite3_value *lambda) {
	int64_t off;
	if ((size_t)(r->n + 1) * MD_RATE_ROW_BYTES + r->ids_len + len > MD_RATES_MAX_BYTES) return 0;
	if (r->n == r->cap) {
		uint32_t cap = r->cap ? r->cap * 2 : 1024;
		md_rate *rows = realloc(r->rows, cap * sizeof *rows);
		if (!rows) return 0;
		r->rows = rows, r->cap = cap;
	}
	off = md_ids_append(&r->ids, &r->ids_len, &r->ids_cap, id, len);
	if (off < 0) return 0;
	r->rows[r->n].off = (uint32_t)off;
	r->rows[r->n].len = len;
	r->rows[r->n].has_lambda = sqlite3_value_type(lambda) != SQLITE_NULL;
	r->rows[r->n].lambda = sqlite3_value_double(lambda);
	r->n++;
	return 1;
}

/* md_rates_index builds the hash table over the rows held. */
static int md_rates_index(md_rates *r) {
	uint32_t size = 16, i;
	while (size < 2 * r->n) size *= 2;
	if (!(r->slots = calloc(size, sizeof *r->slots))) return 0;
	r->mask = size - 1;
	for (i = 0; i < r->n; i++) {
		uint32_t at = (uint32_t)md_hash((const unsigned char *)r->ids + r->rows[i].off, r->rows[i].len) & r->mask;
		while (r->slots[at]) at = (at + 1) & r->mask;
		r->slots[at] = i + 1;
	}
	return 1;
}

/* md_rates_load reads the table; NULL with *err set when it cannot. A table
 * too big to hold gets only the point query. */
static md_rates *md_rates_load(sqlite3 *db, const char *table, char **err) {
	md_rates *r = calloc(1, sizeof *r);
	sqlite3_stmt *all = NULL;
	char *sql;
	int rc, held = 1;
	if (!r) return NULL;
	sql = sqlite3_mprintf("SELECT lambda FROM temp.\"%w\" WHERE id = ?1", table);
	rc = sql ? sqlite3_prepare_v2(db, sql, -1, &r->point, NULL) : SQLITE_NOMEM;
	sqlite3_free(sql);
	if (rc == SQLITE_OK) {
		sql = sqlite3_mprintf("SELECT id, lambda FROM temp.\"%w\"", table);
		rc = sql ? sqlite3_prepare_v2(db, sql, -1, &all, NULL) : SQLITE_NOMEM;
		sqlite3_free(sql);
	}
	while (rc == SQLITE_OK && held) {
		int step = sqlite3_step(all);
		if (step == SQLITE_DONE) break;
		if (step != SQLITE_ROW) {
			rc = step;
			break;
		}
		if (sqlite3_column_type(all, 0) != SQLITE_TEXT) {
			held = 0; /* not the table this is for: every id by the query */
			break;
		}
		held = md_rates_hold(r, sqlite3_column_text(all, 0), (uint32_t)sqlite3_column_bytes(all, 0),
			sqlite3_column_value(all, 1));
	}
	if (rc != SQLITE_OK) *err = sqlite3_mprintf("memdecay_block_rate: reading %s: %s", table, sqlite3_errmsg(db));
	sqlite3_finalize(all);
	if (rc == SQLITE_OK && held && !md_rates_index(r)) held = 0;
	if (rc == SQLITE_OK && !held) {
		free(r->rows), free(r->ids), free(r->slots);
		r->rows = NULL, r->ids = NULL, r->slots = NULL, r->n = 0;
	}
	if (rc != SQLITE_OK) {
		md_rates_free(r);
		return NULL;
	}
	return r;
}

/* md_rates_find finds a text id in the hash table (NULL: not there). */
static const md_rate *md_rates_find(const md_rates *r, const unsigned char *text, uint32_t len) {
	uint32_t at;
	for (at = (uint32_t)md_hash(text, len) & r->mask; r->slots[at]; at = (at + 1) & r->mask) {
		const md_rate *row = &r->rows[r->slots[at] - 1];
		if (row->len == len && memcmp(r->ids + row->off, text, len) == 0) return row;
	}
	return NULL;
}

static void md_block_rate(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
	md_rates *r = sqlite3_get_auxdata(ctx, 0);
	int fresh = 0;
	const md_rate *row;
	(void)argc;
	if (!r) {
		char *err = NULL;
		if (sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
			sqlite3_result_error(ctx, "memdecay_block_rate: rates must be a table's name", -1);
			return;
		}
		if (!(r = md_rates_load(sqlite3_context_db_handle(ctx), (const char *)sqlite3_value_text(argv[0]), &err))) {
			sqlite3_result_error(ctx, err ? err : "memdecay_block_rate: out of memory", -1);
			sqlite3_free(err);
			return;
		}
		fresh = 1;
	}
	if (sqlite3_value_type(argv[1]) != SQLITE_TEXT) {
		sqlite3_result_null(ctx);
	} else if (r->slots) {
		row = md_rates_find(r, sqlite3_value_text(argv[1]), (uint32_t)sqlite3_value_bytes(argv[1]));
		if (row && row->has_lambda) sqlite3_result_double(ctx, row->lambda);
		else sqlite3_result_null(ctx);
	} else {
		int rc;
		sqlite3_bind_value(r->point, 1, argv[1]);
		rc = sqlite3_step(r->point);
		if (rc == SQLITE_ROW) sqlite3_result_value(ctx, sqlite3_column_value(r->point, 0));
		else if (rc == SQLITE_DONE) sqlite3_result_null(ctx);
		else {
			char *err = sqlite3_mprintf("memdecay_block_rate: %s", sqlite3_errmsg(sqlite3_context_db_handle(ctx)));
			sqlite3_result_error(ctx, err ? err : "memdecay_block_rate: out of memory", -1);
			sqlite3_free(err);
		}
		sqlite3_reset(r->point);
	}
	/* Last: SQLite may free it inside sqlite3_set_auxdata. */
	if (fresh) sqlite3_set_auxdata(ctx, 0, r, md_rates_free);
}

int md_register_block_rate(sqlite3 *db) {
	return sqlite3_create_function_v2(db, "memdecay_block_rate", 2, SQLITE_UTF8 | SQLITE_DIRECTONLY, NULL,
		md_block_rate, NULL, NULL, NULL);
}
