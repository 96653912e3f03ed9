/* The readers' views (mem_edges_effective, mem_edges_live, ...) as
 * eponymous virtual tables: on every connection that loads memdecay they
 * answer over the database's declared mapping, and nothing is stored in the
 * file's schema. A stored view that called a memdecay function would break
 * the app's own ALTER TABLE on every connection without the extension
 * (SQLite re-checks every view then); this table holds no SQL object, only
 * text: each view's query, self-contained, in mem_reader_views (written by
 * memworker's migrations and when a mapping is declared), read afresh each
 * time a view is scanned. A scan's equality and range constraints are
 * passed into the query, so SQLite can use the tables' indexes. The query
 * runs as the connection's own statement (as a view's would under
 * trusted_schema=ON): it must be read-only, and a file's mem_reader_views
 * is trusted as its views would be. */
#include <stdlib.h>
#include <string.h>
#include <sqlite3ext.h>
#include "memdecay.h"

SQLITE_EXTENSION_INIT3

static const char *const md_view_names[] = {
	"mem_clock", "mem_block_tiers", "mem_edges_effective", "mem_edges_live", "mem_edges_decayed", "mem_facts_scored",
};

typedef struct {
	sqlite3_vtab base;
	sqlite3 *db;
	const char *name;
	int ncol;
	char *cols; /* the columns as a select list: "a","b",... */
	char **col; /* each column's name */
} md_view_vtab;

typedef struct {
	sqlite3_vtab_cursor base;
	sqlite3_stmt *stmt;
	sqlite3_int64 rowid;
	int eof;
} md_view_cursor;

/* md_view_query is the view's stored query (sqlite3_free it), or NULL with
 * *err set when the database holds none. */
static char *md_view_query(sqlite3 *db, const char *name, char **err) {
	sqlite3_stmt *s = NULL;
	char *query = NULL;
	if (sqlite3_prepare_v2(db, "SELECT sql FROM main.mem_reader_views WHERE name = ?1", -1, &s, NULL) != SQLITE_OK) {
		*err = sqlite3_mprintf("memdecay: %s: this database has no memdecay schema of version 18 or newer "
		                       "(run: memworker migrate up)", name);
		sqlite3_finalize(s);
		return NULL;
	}
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) == SQLITE_TEXT) {
		query = sqlite3_mprintf("%s", (const char *)sqlite3_column_text(s, 0));
	} else {
		*err = sqlite3_mprintf("memdecay: %s: mem_reader_views holds no query for it (memworker migrate up stores them; "
		                       "a declared mapping that no longer fits the schema has none: memworker map show says why)", name);
	}
	sqlite3_finalize(s);
	return query;
}

static void md_view_free(md_view_vtab *v) {
	int i;
	if (!v) return;
	for (i = 0; i < v->ncol; i++) sqlite3_free(v->col[i]);
	sqlite3_free(v->col);
	sqlite3_free(v->cols);
	sqlite3_free(v);
}

/* The table's columns are the stored query's, as they are when a connection
 * first uses the view. */
static int md_view_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err) {
	const char *name = aux;
	md_view_vtab *v;
	sqlite3_stmt *s = NULL;
	char *query, *decl;
	int i, rc;
	(void)argc;
	(void)argv;

	query = md_view_query(db, name, err);
	if (!query) return SQLITE_ERROR;
	rc = sqlite3_prepare_v2(db, query, -1, &s, NULL);
	sqlite3_free(query);
	if (rc != SQLITE_OK) {
		*err = sqlite3_mprintf("memdecay: %s: %s", name, sqlite3_errmsg(db));
		sqlite3_finalize(s);
		return SQLITE_ERROR;
	}
	if (!s || !sqlite3_stmt_readonly(s)) {
		*err = sqlite3_mprintf("memdecay: %s: the query mem_reader_views holds for it is not a read-only SELECT", name);
		sqlite3_finalize(s);
		return SQLITE_ERROR;
	}
	v = sqlite3_malloc(sizeof(*v));
	if (!v) {
		sqlite3_finalize(s);
		return SQLITE_NOMEM;
	}
	memset(v, 0, sizeof(*v));
	v->db = db;
	v->name = name;
	v->ncol = sqlite3_column_count(s);
	v->col = sqlite3_malloc(sizeof(char *) * (v->ncol > 0 ? v->ncol : 1));
	if (!v->col) {
		sqlite3_finalize(s);
		sqlite3_free(v);
		return SQLITE_NOMEM;
	}
	decl = sqlite3_mprintf("CREATE TABLE x(");
	for (i = 0; i < v->ncol; i++) {
		v->col[i] = sqlite3_mprintf("%s", sqlite3_column_name(s, i));
		decl = sqlite3_mprintf("%z%s\"%w\"", decl, i ? ", " : "", v->col[i]);
		v->cols = sqlite3_mprintf("%z%s\"%w\"", v->cols, i ? ", " : "", v->col[i]);
	}
	decl = sqlite3_mprintf("%z)", decl);
	sqlite3_finalize(s);
	rc = decl ? sqlite3_declare_vtab(db, decl) : SQLITE_NOMEM;
	sqlite3_free(decl);
	if (rc != SQLITE_OK) {
		*err = sqlite3_mprintf("memdecay: %s: declaring its columns: %s", name, sqlite3_errmsg(db));
		md_view_free(v);
		return rc;
	}
	*out = &v->base;
	return SQLITE_OK;
}

static int md_view_disconnect(sqlite3_vtab *tab) {
	md_view_free((md_view_vtab *)tab);
	return SQLITE_OK;
}

/* md_view_op is the SQL of a constraint the query can take, or NULL. */
static const char *md_view_op(unsigned char op, int *has_arg) {
	*has_arg = 1;
	switch (op) {
	case SQLITE_INDEX_CONSTRAINT_EQ: return "=";
	case SQLITE_INDEX_CONSTRAINT_GT: return ">";
	case SQLITE_INDEX_CONSTRAINT_LE: return "<=";
	case SQLITE_INDEX_CONSTRAINT_LT: return "<";
	case SQLITE_INDEX_CONSTRAINT_GE: return ">=";
	case SQLITE_INDEX_CONSTRAINT_NE: return "!=";
	case SQLITE_INDEX_CONSTRAINT_IS: return "IS";
	case SQLITE_INDEX_CONSTRAINT_ISNOT: return "IS NOT";
	}
	*has_arg = 0;
	switch (op) {
	case SQLITE_INDEX_CONSTRAINT_ISNULL: return "IS NULL";
	case SQLITE_INDEX_CONSTRAINT_ISNOTNULL: return "IS NOT NULL";
	}
	return NULL;
}

/* Every usable comparison becomes part of the query's WHERE clause (idxStr);
 * SQLite still checks each one on the rows that come back (omit stays 0), so
 * an answer never depends on how the stored query compares. */
static int md_view_best_index(sqlite3_vtab *tab, sqlite3_index_info *info) {
	md_view_vtab *v = (md_view_vtab *)tab;
	char *where = NULL;
	int i, n = 0, has_arg;
	for (i = 0; i < info->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &info->aConstraint[i];
		const char *op;
		if (!c->usable || c->iColumn < 0 || c->iColumn >= v->ncol) continue;
		op = md_view_op(c->op, &has_arg);
		if (!op) continue;
		if (has_arg) {
			n++;
			where = sqlite3_mprintf("%z%s\"%w\" %s ?%d", where, where ? " AND " : "", v->col[c->iColumn], op, n);
			info->aConstraintUsage[i].argvIndex = n;
		} else {
			where = sqlite3_mprintf("%z%s\"%w\" %s", where, where ? " AND " : "", v->col[c->iColumn], op);
		}
		if (!where) return SQLITE_NOMEM;
	}
	info->idxStr = where;
	info->needToFreeIdxStr = 1;
	info->estimatedCost = where ? 1000.0 : 1000000.0;
	return SQLITE_OK;
}

static int md_view_open(sqlite3_vtab *tab, sqlite3_vtab_cursor **out) {
	md_view_cursor *c = sqlite3_malloc(sizeof(*c));
	(void)tab;
	if (!c) return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	*out = &c->base;
	return SQLITE_OK;
}

static int md_view_close(sqlite3_vtab_cursor *cur) {
	md_view_cursor *c = (md_view_cursor *)cur;
	sqlite3_finalize(c->stmt);
	sqlite3_free(c);
	return SQLITE_OK;
}

/* md_view_step moves to the next row; an error is the view's, by name. */
static int md_view_step(md_view_cursor *c) {
	md_view_vtab *v = (md_view_vtab *)c->base.pVtab;
	int rc = sqlite3_step(c->stmt);
	if (rc == SQLITE_ROW) {
		c->rowid++;
		return SQLITE_OK;
	}
	c->eof = 1;
	if (rc == SQLITE_DONE) return SQLITE_OK;
	sqlite3_free(v->base.zErrMsg);
	v->base.zErrMsg = sqlite3_mprintf("memdecay: %s: %s", v->name, sqlite3_errmsg(v->db));
	return rc;
}

static int md_view_filter(sqlite3_vtab_cursor *cur, int idx_num, const char *idx_str, int argc, sqlite3_value **argv) {
	md_view_cursor *c = (md_view_cursor *)cur;
	md_view_vtab *v = (md_view_vtab *)cur->pVtab;
	char *query, *err = NULL, *sql;
	int i, rc;
	(void)idx_num;

	sqlite3_finalize(c->stmt);
	c->stmt = NULL;
	c->rowid = 0;
	c->eof = 1;
	query = md_view_query(v->db, v->name, &err);
	if (!query) {
		sqlite3_free(v->base.zErrMsg);
		v->base.zErrMsg = err;
		return SQLITE_ERROR;
	}
	sql = sqlite3_mprintf("SELECT %s FROM (%s\n)%s%s", v->cols ? v->cols : "NULL", query, idx_str ? " WHERE " : "", idx_str ? idx_str : "");
	sqlite3_free(query);
	if (!sql) return SQLITE_NOMEM;
	rc = sqlite3_prepare_v2(v->db, sql, -1, &c->stmt, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK) {
		sqlite3_free(v->base.zErrMsg);
		v->base.zErrMsg = sqlite3_mprintf("memdecay: %s: %s (if the mapping changed since this connection first read the view, open a new connection)",
		                                  v->name, sqlite3_errmsg(v->db));
		return rc;
	}
	if (!c->stmt || !sqlite3_stmt_readonly(c->stmt)) {
		sqlite3_free(v->base.zErrMsg);
		v->base.zErrMsg = sqlite3_mprintf("memdecay: %s: the query mem_reader_views holds for it is not a read-only SELECT", v->name);
		return SQLITE_ERROR;
	}
	for (i = 0; i < argc; i++) sqlite3_bind_value(c->stmt, i + 1, argv[i]);
	c->eof = 0;
	return md_view_step(c);
}

static int md_view_next(sqlite3_vtab_cursor *cur) { return md_view_step((md_view_cursor *)cur); }

static int md_view_eof(sqlite3_vtab_cursor *cur) { return ((md_view_cursor *)cur)->eof; }

static int md_view_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i) {
	sqlite3_result_value(ctx, sqlite3_column_value(((md_view_cursor *)cur)->stmt, i));
	return SQLITE_OK;
}

static int md_view_rowid(sqlite3_vtab_cursor *cur, sqlite_int64 *rowid) {
	*rowid = ((md_view_cursor *)cur)->rowid;
	return SQLITE_OK;
}

/* xCreate is NULL: an eponymous-only table, never in a file's schema. */
static sqlite3_module md_view_module = {
	0,                  /* iVersion */
	NULL,               /* xCreate */
	md_view_connect,    /* xConnect */
	md_view_best_index, /* xBestIndex */
	md_view_disconnect, /* xDisconnect */
	NULL,               /* xDestroy */
	md_view_open,       /* xOpen */
	md_view_close,      /* xClose */
	md_view_filter,     /* xFilter */
	md_view_next,       /* xNext */
	md_view_eof,        /* xEof */
	md_view_column,     /* xColumn */
	md_view_rowid,      /* xRowid */
	NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
};

int md_register_views(sqlite3 *db, char **err) {
	size_t i;
	for (i = 0; i < sizeof(md_view_names) / sizeof(md_view_names[0]); i++) {
		int rc = sqlite3_create_module_v2(db, md_view_names[i], &md_view_module, (void *)md_view_names[i], NULL);
		if (rc != SQLITE_OK) {
			*err = sqlite3_mprintf("memdecay: registering the view %s: %s", md_view_names[i], sqlite3_errmsg(db));
			return rc;
		}
	}
	return SQLITE_OK;
}
