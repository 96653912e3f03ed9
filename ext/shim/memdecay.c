/* Registration and argument decoding for the memdecay SQL functions. Built
 * two ways from this one file: as a loadable extension (sqlite3ext.h routes
 * every call through the sqlite3_api table) and, with -DSQLITE_CORE, linked
 * into a Go program against mattn/go-sqlite3's SQLite. */
#include <stdlib.h>
#include <sqlite3ext.h>
#include "memdecay.h"
#include "_cgo_export.h"

SQLITE_EXTENSION_INIT1

/* One SQL function; its id is its index in the Go registry. */
typedef struct {
	const char *name;
	int id;
	int min_args, max_args;
	unsigned numeric;   /* bit i: argument i is a number (numeric text accepted) */
	unsigned null_null; /* bit i: a NULL argument i makes the result NULL */
	int aux_arg;        /* a JSON argument parsed once per statement, or -1 */
	int numeric_only;   /* every argument is a number and the result too */
} md_func;

#define B(i) (1u << (i))

/* md_funcs[], MD_MAX_ARGS and the function ids, written from registry.go. */
#include "registry.h"

static int md_all_numbers(const md_arg *args, int argc) {
	int i;
	for (i = 0; i < argc; i++) {
		if (args[i].sqltype != SQLITE_INTEGER && args[i].sqltype != SQLITE_FLOAT) return 0;
	}
	return 1;
}

static void md_release(void *handle) { memdecayRelease((uintptr_t)handle); }

static void md_xfunc(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
	const md_func *f = sqlite3_user_data(ctx);
	md_arg args[MD_MAX_ARGS];
	md_result res = {MD_RESULT_NULL, 0, NULL, 0};
	int i;

	for (i = 0; i < argc && i < MD_MAX_ARGS; i++) {
		sqlite3_value *v = argv[i];
		int type = sqlite3_value_type(v);
		if (type == SQLITE_NULL && (f->null_null & B(i))) {
			sqlite3_result_null(ctx);
			return;
		}
		if (type == SQLITE_TEXT && (f->numeric & B(i))) {
			type = sqlite3_value_numeric_type(v);
		}
		args[i].sqltype = type;
		args[i].num = 0;
		args[i].text = NULL;
		args[i].len = 0;
		if (type == SQLITE_INTEGER || type == SQLITE_FLOAT) {
			args[i].num = sqlite3_value_double(v);
		} else if (type == SQLITE_TEXT) {
			args[i].text = (const char *)sqlite3_value_text(v);
			args[i].len = sqlite3_value_bytes(v);
		}
	}

	if (f->numeric_only && md_all_numbers(args, argc)) {
		double nums[MD_MAX_ARGS], out = 0;
		char *err = NULL;
		for (i = 0; i < argc; i++) nums[i] = args[i].num;
		switch (memdecayNumeric(f->id, argc, nums, &out, &err)) {
		case MD_RESULT_DOUBLE:
			sqlite3_result_double(ctx, out);
			break;
		case MD_RESULT_ERROR:
			sqlite3_result_error(ctx, err, -1);
			free(err);
			break;
		default:
			sqlite3_result_null(ctx);
		}
		return;
	}

	/* An optional JSON argument left out has no auxdata (and none is set). */
	int has_aux = f->aux_arg >= 0 && f->aux_arg < argc;
	uintptr_t aux = has_aux ? (uintptr_t)sqlite3_get_auxdata(ctx, f->aux_arg) : 0;
	memdecayCall(f->id, argc, args, aux, &res);

	switch (res.kind) {
	case MD_RESULT_DOUBLE:
		sqlite3_result_double(ctx, res.num);
		break;
	case MD_RESULT_STATIC_TEXT:
		sqlite3_result_text(ctx, res.text, -1, SQLITE_STATIC);
		break;
	case MD_RESULT_TEXT:
		sqlite3_result_text(ctx, res.text, -1, free);
		break;
	case MD_RESULT_ERROR:
		sqlite3_result_error(ctx, res.text, -1);
		free(res.text);
		break;
	default:
		sqlite3_result_null(ctx);
	}
	/* Last: SQLite may release the handle inside sqlite3_set_auxdata. */
	if (res.handle && has_aux) {
		sqlite3_set_auxdata(ctx, f->aux_arg, (void *)res.handle, md_release);
	} else if (res.handle) {
		md_release((void *)res.handle);
	}
}

const char *md_sqlite_version(void) { return sqlite3_libversion(); }

int md_register_views(sqlite3 *db, char **err); /* readerviews.c */

#ifdef _WIN32
__declspec(dllexport)
#endif
int sqlite3_memdecay_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi) {
	const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
	size_t i;
	int n, rc;

	SQLITE_EXTENSION_INIT2(pApi);
	if (sqlite3_libversion_number() < 3031000) {
		*pzErrMsg = sqlite3_mprintf("memdecay: needs SQLite 3.31 or newer (this is %s)", sqlite3_libversion());
		return SQLITE_ERROR;
	}
	for (i = 0; i < sizeof(md_funcs) / sizeof(md_funcs[0]); i++) {
		const md_func *f = &md_funcs[i];
		for (n = f->min_args; n <= f->max_args; n++) {
			rc = sqlite3_create_function_v2(db, f->name, n, flags, (void *)f, md_xfunc, NULL, NULL, NULL);
			if (rc != SQLITE_OK) {
				*pzErrMsg = sqlite3_mprintf("memdecay: registering %s: %s", f->name, sqlite3_errmsg(db));
				return rc;
			}
		}
	}
	return md_register_views(db, pzErrMsg);
}
