/* The C side of the memdecay shim: SQLite calls md_xfunc, which decodes the
 * arguments and calls memdecayCall in Go (shim.go) once per row, or, for a
 * numeric function whose arguments are all numbers, memdecayNumeric
 * (numeric.go) with the doubles alone. The functions themselves are listed
 * in registry.h, generated from registry.go. */
#ifndef MEMDECAY_H
#define MEMDECAY_H

#include <stdint.h>

/* Argument types are SQLite's fundamental datatypes (SQLITE_INTEGER ...). */
typedef struct {
	int sqltype;
	double num;
	const char *text;
	int len;
} md_arg;

enum { MD_RESULT_NULL, MD_RESULT_DOUBLE, MD_RESULT_STATIC_TEXT, MD_RESULT_TEXT, MD_RESULT_ERROR };

/* Filled by Go. text is static for MD_RESULT_STATIC_TEXT and malloc'd
 * (freed by C) for MD_RESULT_TEXT and MD_RESULT_ERROR. handle, when set, is a
 * parsed constant argument to keep with sqlite3_set_auxdata. */
typedef struct {
	int kind;
	double num;
	char *text;
	uintptr_t handle;
} md_result;

const char *md_sqlite_version(void);

#endif
